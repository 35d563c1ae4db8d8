// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},func.func(dl-affine-parallelize{min-work=1000}))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},func.func(dl-affine-parallelize{min-work=1000 explain}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// The outermost loop is parallel (each iteration writes its own row) and has
// enough work: it becomes an affine.parallel; the inner loop stays a loop.
// CHECK-LABEL: func @rows
// REMARK: remark: dl-affine-parallelize: loop runs on several threads (about 4096 operations)
// CHECK: affine.parallel (%[[I:.*]]) = (0) to (64) {
// CHECK-NEXT: affine.for %[[J:.*]] = 0 to 16 {
// CHECK-NOT: affine.parallel
func.func @rows(%a: memref<64x16xf32>, %b: memref<64x16xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %a[%i, %j] : memref<64x16xf32>
      %1 = arith.addf %0, %0 : f32
      %2 = arith.mulf %1, %0 : f32
      affine.store %2, %b[%i, %j] : memref<64x16xf32>
    }
  }
  return
}

// -----

// Refused: each iteration of i reads the row the previous one wrote (a
// dependence carried by i). The inner loop j is parallel and is chosen.
// CHECK-LABEL: func @recurrence
// REMARK: remark: dl-affine-parallelize: loop stays sequential: a dependence between iterations, from 'affine.store' to 'affine.load' on memref<64x16xf32>
// CHECK: affine.for %[[I:.*]] = 1 to 64 {
// CHECK-NEXT: affine.parallel (%[[J:.*]]) = (0) to (16) {
func.func @recurrence(%a: memref<64x16xf32>) {
  affine.for %i = 1 to 64 {
    affine.for %j = 0 to 16 {
      affine.for %k = 0 to 16 {
        %0 = affine.load %a[%i - 1, %j] : memref<64x16xf32>
        %1 = arith.addf %0, %0 : f32
        %2 = arith.mulf %1, %0 : f32
        affine.store %2, %a[%i, %j] : memref<64x16xf32>
      }
    }
  }
  return
}

// -----

// Refused: a loop carrying values (iter_args) is a reduction; nothing inside
// has enough work on its own either.
// CHECK-LABEL: func @sum
// REMARK: remark: dl-affine-parallelize: loop stays sequential: it carries values from one iteration to the next (iter_args)
// CHECK-NOT: affine.parallel
func.func @sum(%a: memref<4096xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %r = affine.for %i = 0 to 4096 iter_args(%acc = %zero) -> f32 {
    %0 = affine.load %a[%i] : memref<4096xf32>
    %1 = arith.addf %acc, %0 : f32
    affine.yield %1 : f32
  }
  return %r : f32
}

// -----

// Refused: a call may touch any memory.
// CHECK-LABEL: func @opaque
// REMARK: remark: dl-affine-parallelize: loop stays sequential: 'func.call' has unknown memory effects
// CHECK-NOT: affine.parallel
func.func private @effect(index)
func.func @opaque() {
  affine.for %i = 0 to 4096 {
    func.call @effect(%i) : (index) -> ()
  }
  return
}

// -----

// Too little work for a fork/join: left sequential.
// CHECK-LABEL: func @small
// REMARK: remark: dl-affine-parallelize: nest left sequential: about 64 operations, under min-work = 1000
// CHECK-NOT: affine.parallel
func.func @small(%a: memref<16xf32>, %b: memref<16xf32>) {
  affine.for %i = 0 to 16 {
    %0 = affine.load %a[%i] : memref<16xf32>
    %1 = arith.addf %0, %0 : f32
    %2 = arith.mulf %1, %0 : f32
    affine.store %2, %b[%i] : memref<16xf32>
  }
  return
}

// -----

// A buffer allocated (and freed) inside the loop is private to each
// iteration: no dependence through it, the loop is parallel.
// CHECK-LABEL: func @private_buffer
// CHECK: affine.parallel
// CHECK: memref.alloc
// CHECK: memref.dealloc
func.func @private_buffer(%a: memref<64x16xf32>, %b: memref<64x16xf32>) {
  affine.for %i = 0 to 64 {
    %t = memref.alloc() : memref<16xf32>
    affine.for %j = 0 to 16 {
      %0 = affine.load %a[%i, %j] : memref<64x16xf32>
      affine.store %0, %t[%j] : memref<16xf32>
    }
    affine.for %j = 0 to 16 {
      %0 = affine.load %t[15 - %j] : memref<16xf32>
      affine.store %0, %b[%i, %j] : memref<64x16xf32>
    }
    memref.dealloc %t : memref<16xf32>
  }
  return
}

// -----

// Refused: freeing a buffer the iterations share.
// CHECK-LABEL: func @shared_free
// REMARK: remark: dl-affine-parallelize: loop stays sequential: 'memref.dealloc' writes or frees memory shared by the iterations
func.func @shared_free(%a: memref<4096xf32>) {
  affine.for %i = 0 to 4096 {
    %0 = affine.load %a[%i] : memref<4096xf32>
    %1 = arith.addf %0, %0 : f32
    affine.store %1, %a[%i] : memref<4096xf32>
    memref.dealloc %a : memref<4096xf32>
  }
  return
}

// -----

// Unrolled accesses that differ by constants (as a register tile's): the
// dependence problems shared by pairs with the same offset difference are
// solved once, and each answer is still the pair's own. Each iteration
// writes a[2i] and a[2i+1] and reads what it wrote: parallel.
// CHECK-LABEL: func @unrolled_offsets_parallel
// CHECK: affine.parallel
// REMARK: remark: dl-affine-parallelize: loop runs on several threads
func.func @unrolled_offsets_parallel(%a: memref<4098xf32>) {
  affine.for %i = 0 to 4096 step 2 {
    %0 = affine.load %a[%i] : memref<4098xf32>
    %1 = affine.load %a[%i + 1] : memref<4098xf32>
    %2 = arith.addf %0, %1 : f32
    affine.store %2, %a[%i] : memref<4098xf32>
    affine.store %2, %a[%i + 1] : memref<4098xf32>
  }
  return
}

// -----

// The same with a read of a[2i+2], the next iteration's a[2i]: refused.
// CHECK-LABEL: func @unrolled_offsets_carried
// CHECK-NOT: affine.parallel
// REMARK: remark: dl-affine-parallelize: loop stays sequential: a dependence between iterations
func.func @unrolled_offsets_carried(%a: memref<4098xf32>) {
  affine.for %i = 0 to 4096 step 2 {
    %0 = affine.load %a[%i] : memref<4098xf32>
    %1 = affine.load %a[%i + 1] : memref<4098xf32>
    %2 = affine.load %a[%i + 2] : memref<4098xf32>
    %3 = arith.addf %0, %1 : f32
    %4 = arith.addf %3, %2 : f32
    affine.store %4, %a[%i] : memref<4098xf32>
    affine.store %4, %a[%i + 1] : memref<4098xf32>
  }
  return
}

// -----

// A register tile of a convolution over a flattened 7x7 plane: tile i covers
// pixels p = 6 * i + r (r < 6), stored at row p floordiv 7, column p mod 7,
// 16 channels per vector store. Weighted (7, 1), the two indices are p
// again, so tiles touch disjoint pixels: i is parallel, decided without a
// constraint system (forEachDependence's disjointness test).
// CHECK-LABEL: func @pixel_tiles
// REMARK: remark: dl-affine-parallelize: loop runs on several threads
// CHECK: affine.parallel (%{{.*}}) = (0) to (8) {
func.func @pixel_tiles(%out: memref<1x7x7x192xf32>, %v: vector<16xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %r = 0 to 6 {
      affine.for %c = 0 to 12 {
        %old = affine.vector_load %out[0, (%i * 6 + %r) floordiv 7, (%i * 6 + %r) mod 7, %c * 16] : memref<1x7x7x192xf32>, vector<16xf32>
        %new = arith.addf %old, %v : vector<16xf32>
        affine.vector_store %new, %out[0, (%i * 6 + %r) floordiv 7, (%i * 6 + %r) mod 7, %c * 16] : memref<1x7x7x192xf32>, vector<16xf32>
      }
    }
  }
  return
}

// -----

// Refused: tiles of 4 that write 6 elements each overlap the next tile's
// first two; the disjointness test cannot prove them apart and the full
// analysis finds the dependence.
// CHECK-LABEL: func @overlapping_tiles
// REMARK: remark: dl-affine-parallelize: loop stays sequential: a dependence between iterations, from 'affine.store' to 'affine.store' on memref<70xf32>
// CHECK: affine.for %{{.*}} = 0 to 16 {
func.func @overlapping_tiles(%out: memref<70xf32>, %x: f32) {
  affine.for %i = 0 to 16 {
    affine.for %r = 0 to 6 {
      affine.for %k = 0 to 40 {
        affine.store %x, %out[%i * 4 + %r] : memref<70xf32>
      }
    }
  }
  return
}

// -----

// A prefetch (dl-affine-register-tile's, of the next row) changes no value:
// the rows stay independent, including the one prefetched by the last
// iteration but one.
// CHECK-LABEL: func @prefetched_rows
// CHECK: affine.parallel (%[[I:.*]]) = (0) to (64) {
// CHECK: affine.prefetch
func.func @prefetched_rows(%a: memref<64x16xf32>, %b: memref<64x16xf32>) {
  affine.for %i = 0 to 64 {
    affine.if affine_set<(d0) : (62 - d0 >= 0)>(%i) {
      affine.prefetch %a[%i + 1, 0], read, locality<3>, data : memref<64x16xf32>
    }
    affine.for %j = 0 to 16 {
      %0 = affine.load %a[%i, %j] : memref<64x16xf32>
      %1 = arith.addf %0, %0 : f32
      %2 = arith.mulf %1, %0 : f32
      affine.store %2, %b[%i, %j] : memref<64x16xf32>
    }
  }
  return
}
