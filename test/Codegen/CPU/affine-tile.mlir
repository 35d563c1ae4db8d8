// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-tile))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-tile{only-strided explain}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRIDED

// A transpose: one of the two accesses strides through memory whatever the
// loop order. L2 tiles of 256x256 (2 x 256 KB, within half of 2 MB; 512x512
// would need 2 MB) and L1 tiles of 32x32 inside (2 x 4 KB within 24 KB;
// 64x64 would need 32 KB).
// CHECK-LABEL: func @transpose
// CHECK: affine.for %[[I2:.*]] = 0 to 1024 step 256 {
// CHECK-NEXT: affine.for %[[J2:.*]] = 0 to 512 step 256 {
// CHECK-NEXT: affine.for %[[I1:.*]] = #{{.*}}(%[[I2]]) to #{{.*}}(%[[I2]]) step 32 {
// CHECK-NEXT: affine.for %[[J1:.*]] = #{{.*}}(%[[J2]]) to #{{.*}}(%[[J2]]) step 32 {
// CHECK-NEXT: affine.for %[[I:.*]] = #{{.*}}(%[[I1]]) to #{{.*}}(%[[I1]]) {
// CHECK-NEXT: affine.for %[[J:.*]] = #{{.*}}(%[[J1]]) to #{{.*}}(%[[J1]]) {
// CHECK-NEXT: affine.load %{{.*}}[%[[J]], %[[I]]] : memref<512x1024xf32>
// STRIDED: remark: dl-affine-tile: tiled (L2 tiles 256x256, L1 tiles 32x32)
func.func @transpose(%in: memref<512x1024xf32>, %out: memref<1024x512xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152>} {
  affine.for %i = 0 to 1024 {
    affine.for %j = 0 to 512 {
      %0 = affine.load %in[%j, %i] : memref<512x1024xf32>
      affine.store %0, %out[%i, %j] : memref<1024x512xf32>
    }
  }
  return
}

// -----

// A prefetch in the band (dl-affine-register-tile's, guarded by an
// affine.if) is no access: the same transpose is tiled the same way.
// CHECK-LABEL: func @transpose_prefetched
// CHECK: affine.for %{{.*}} = 0 to 1024 step 256 {
// CHECK: affine.prefetch
// STRIDED: remark: dl-affine-tile: tiled (L2 tiles 256x256, L1 tiles 32x32)
func.func @transpose_prefetched(%in: memref<512x1024xf32>, %out: memref<1024x512xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152>} {
  affine.for %i = 0 to 1024 {
    affine.for %j = 0 to 512 {
      affine.if affine_set<(d0) : (1022 - d0 >= 0)>(%i) {
        affine.prefetch %in[%j, %i + 1], read, locality<3>, data : memref<512x1024xf32>
      }
      %0 = affine.load %in[%j, %i] : memref<512x1024xf32>
      affine.store %0, %out[%i, %j] : memref<1024x512xf32>
    }
  }
  return
}

// -----

// Refused: a[i][j] = a[i-1][j+1] has the dependence (1, -1); tiling j would
// run an iteration before the one it depends on (not fully permutable).
// Upstream's isTilingValid accepts this band.
// CHECK-LABEL: func @skewed_dependence
// CHECK: affine.for %{{.*}} = 1 to 512 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 511 {
// CHECK-NOT: step
// STRIDED: remark: dl-affine-tile: band left alone: not fully permutable: a dependence from 'affine.store' to 'affine.load' on memref<512x512xf32> goes backwards along loop 1 of the band (distance -1)
func.func @skewed_dependence(%a: memref<512x512xf32>, %t: memref<512x512xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152>} {
  affine.for %i = 1 to 512 {
    affine.for %j = 0 to 511 {
      %0 = affine.load %a[%i - 1, %j + 1] : memref<512x512xf32>
      %1 = affine.load %t[%j, %i] : memref<512x512xf32>
      %2 = arith.addf %0, %1 : f32
      affine.store %2, %a[%i, %j] : memref<512x512xf32>
    }
  }
  return
}

// -----

// Left alone: the data fit in L1 (2 x 4 KB).
// CHECK-LABEL: func @small
// CHECK-NOT: step
// STRIDED: remark: dl-affine-tile: band left alone: its data fits in L1
func.func @small(%in: memref<32x32xf32>, %out: memref<32x32xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152>} {
  affine.for %i = 0 to 32 {
    affine.for %j = 0 to 32 {
      %0 = affine.load %in[%j, %i] : memref<32x32xf32>
      affine.store %0, %out[%i, %j] : memref<32x32xf32>
    }
  }
  return
}

// -----

// Left alone: a call is not an affine access (its effects are unknown).
// CHECK-LABEL: func @opaque
// CHECK-NOT: step
// STRIDED: remark: dl-affine-tile: band left alone: a memory access that is not affine
func.func private @use(f32)
func.func @opaque(%in: memref<1024x1024xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152>} {
  affine.for %i = 0 to 1024 {
    affine.for %j = 0 to 1024 {
      %0 = affine.load %in[%j, %i] : memref<1024x1024xf32>
      func.call @use(%0) : (f32) -> ()
    }
  }
  return
}

// -----

// A contiguous copy is tiled by the plain pass (its footprint exceeds L2)
// but not with only-strided: every access already walks memory in order.
// CHECK-LABEL: func @contiguous
// CHECK: step 256
// STRIDED-NOT: remark: {{.*}}contiguous
func.func @contiguous(%in: memref<1024x1024xf32>, %out: memref<1024x1024xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152>} {
  affine.for %i = 0 to 1024 {
    affine.for %j = 0 to 1024 {
      %0 = affine.load %in[%i, %j] : memref<1024x1024xf32>
      affine.store %0, %out[%i, %j] : memref<1024x1024xf32>
    }
  }
  return
}

// -----

// On 2 threads the outermost loop cut into tiles is the one
// dl-affine-parallelize runs on them, in min(threads, tiles) contiguous
// chunks of whole tiles. 1100 rows in the power-of-two tiles of 256 are 5
// tiles, 3 on one thread (768 rows, against 550 for an even split); tiles
// of 184 are 6, 3 per thread (552 rows). The L1 tiles inside are sized
// from the balanced L2 tile.
// CHECK-LABEL: func @balanced_for_threads
// CHECK: affine.for %[[I2:.*]] = 0 to 1100 step 184 {
// CHECK-NEXT: affine.for %[[J2:.*]] = 0 to 512 step 256 {
// CHECK-NEXT: affine.for %{{.*}} = #{{.*}}(%[[I2]]) to min #{{.*}}(%[[I2]]) step 32 {
// STRIDED: remark: dl-affine-tile: tiled (L2 tiles 184x256, L1 tiles 32x32)
func.func @balanced_for_threads(%in: memref<512x1100xf32>, %out: memref<1100x512xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152, threads = 2>} {
  affine.for %i = 0 to 1100 {
    affine.for %j = 0 to 512 {
      %0 = affine.load %in[%j, %i] : memref<512x1100xf32>
      affine.store %0, %out[%i, %j] : memref<1100x512xf32>
    }
  }
  return
}

// -----

// Not rebalanced: on one thread (a named CPU's code is for one unless the
// target says otherwise) ...
// CHECK-LABEL: func @one_thread
// CHECK: affine.for %{{.*}} = 0 to 1100 step 256 {
// STRIDED: remark: dl-affine-tile: tiled (L2 tiles 256x256, L1 tiles 32x32)
func.func @one_thread(%in: memref<512x1100xf32>, %out: memref<1100x512xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152>} {
  affine.for %i = 0 to 1100 {
    affine.for %j = 0 to 512 {
      %0 = affine.load %in[%j, %i] : memref<512x1100xf32>
      affine.store %0, %out[%i, %j] : memref<1100x512xf32>
    }
  }
  return
}

// -----

// ... nor inside a parallel loop, whose iterations already run on threads
// of their own (dl-fuse-attention's blocks).
// CHECK-LABEL: func @inside_parallel
// CHECK: affine.parallel
// CHECK: affine.for %{{.*}} = 0 to 1100 step 256 {
// STRIDED: remark: dl-affine-tile: tiled (L2 tiles 256x256, L1 tiles 32x32)
func.func @inside_parallel(%in: memref<512x1100xf32>, %outs: memref<2x1100x512xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152, threads = 2>} {
  affine.parallel (%p) = (0) to (2) {
    affine.for %i = 0 to 1100 {
      affine.for %j = 0 to 512 {
        %0 = affine.load %in[%j, %i] : memref<512x1100xf32>
        affine.store %0, %outs[%p, %i, %j] : memref<2x1100x512xf32>
      }
    }
  }
  return
}

// -----

// A band whose data fit in L2 is tiled for L1 only: the outermost L1 tile
// loop is then the one the threads share, and it is balanced instead. 300
// rows in tiles of 32 are 10 tiles, 5 per thread (160 rows); tiles of 30
// make 150 each.
// CHECK-LABEL: func @balanced_l1_tiles
// CHECK: affine.for %{{.*}} = 0 to 300 step 30 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 200 step 32 {
// STRIDED: remark: dl-affine-tile: tiled (L1 tiles 30x32)
func.func @balanced_l1_tiles(%in: memref<200x300xf32>, %out: memref<300x200xf32>) attributes {dl.target = #dl.target<cpu = "znver4", l1d = 49152, l2 = 2097152, threads = 2>} {
  affine.for %i = 0 to 300 {
    affine.for %j = 0 to 200 {
      %0 = affine.load %in[%j, %i] : memref<200x300xf32>
      affine.store %0, %out[%i, %j] : memref<300x200xf32>
    }
  }
  return
}
