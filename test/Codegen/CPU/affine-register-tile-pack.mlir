// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},func.func(dl-affine-register-tile{rows=4 vectors=2 column-block=32 reduction-block=16},canonicalize,cse))' | FileCheck %s

// Cache blocking and packing: the j loop is blocked by 32 columns and the k
// loop by 16; each 16x32 block of B is copied into a contiguous, 64-byte
// aligned buffer that the register-tiled kernel then reads with unit stride.
// The buffer belongs to one column block (allocated and freed inside it), so
// that column blocks are independent and can run on threads. Three row
// tiles read each packed block.
// CHECK-LABEL: func @matmul
// CHECK: %[[C:.*]] = memref.alloc() : memref<12x64xf32>
// CHECK: affine.for %[[JB:.*]] = 0 to 64 step 32 {
// CHECK-NEXT: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK-NEXT: affine.for %[[KB:.*]] = 0 to 64 step 16 {
// Pack B[KB:KB+16, JB:JB+32]:
// CHECK-NEXT: affine.for %[[PK:.*]] = 0 to 16 {
// CHECK-NEXT: affine.for %[[PJ:.*]] = 0 to 32 {
// CHECK-NEXT: %[[V:.*]] = affine.load %{{.*}}[%[[PK]] + %[[KB]], %[[PJ]] + %[[JB]]] : memref<64x64xf32>
// CHECK-NEXT: affine.store %[[V]], %[[P]][%[[PK]], %[[PJ]]] : memref<16x32xf32>
// Kernel over the block, reading the packed buffer:
// CHECK: affine.for %[[I:.*]] = 0 to 12 step 4 {
// CHECK-NEXT: affine.for %[[J:.*]] = #{{.*}}(%[[JB]]) to #{{.*}}(%[[JB]]) step 16 {
// CHECK: affine.for %[[K:.*]] = #{{.*}}(%[[KB]]) to #{{.*}}(%[[KB]]) iter_args
// CHECK: affine.vector_load %[[P]][%[[K]] - %[[KB]], %[[J]] - %[[JB]]] : memref<16x32xf32>, vector<8xf32>
// CHECK: vector.fma
// CHECK: affine.yield
// CHECK-COUNT-8: affine.vector_store {{.*}}, %[[C]]
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[P]] : memref<16x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[C]]
func.func @matmul(%a: memref<12x64xf32>, %b: memref<64x64xf32>) -> memref<12x64xf32> {
  %c = memref.alloc() : memref<12x64xf32>
  affine.for %i = 0 to 12 {
    affine.for %k = 0 to 64 {
      affine.for %j = 0 to 64 {
        %0 = affine.load %a[%i, %k] : memref<12x64xf32>
        %1 = affine.load %b[%k, %j] : memref<64x64xf32>
        %2 = affine.load %c[%i, %j] : memref<12x64xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<12x64xf32>
      }
    }
  }
  return %c : memref<12x64xf32>
}

// -----

// Two row tiles (8 rows) would each read a packed block once: the copy
// costs as much as the reads it saves (dl-fuse-attention's 12-row blocks
// of Whisper's scores repacked K^T for every block: 41.2 -> 39.2 ms per
// layer without). B is read in place, the columns still blocked.
// CHECK-LABEL: func @two_row_tiles
// CHECK-NOT: memref.alloc() {alignment = 64 : i64}
// CHECK: affine.for %[[JB:.*]] = 0 to 64 step 32 {
// CHECK: affine.vector_load %arg1[%{{.*}}, %{{.*}}] : memref<64x64xf32>, vector<8xf32>
// CHECK: vector.fma
func.func @two_row_tiles(%a: memref<8x64xf32>, %b: memref<64x64xf32>) -> memref<8x64xf32> {
  %c = memref.alloc() : memref<8x64xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 64 {
      affine.for %j = 0 to 64 {
        %0 = affine.load %a[%i, %k] : memref<8x64xf32>
        %1 = affine.load %b[%k, %j] : memref<64x64xf32>
        %2 = affine.load %c[%i, %j] : memref<8x64xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x64xf32>
      }
    }
  }
  return %c : memref<8x64xf32>
}

// -----

// B read transposed (C[i, j] += A[i, k] * W[j, k]: x @ w.T, an im2col
// convolution's OIHW filter; the j loop need not be innermost). The kernel
// only reads B through the packed copy, so packing happens even without
// column blocks. The copy goes by 8x8 squares: 8 vector loads along W's
// rows (k), transposed in registers (after canonicalization, elements
// regrouped), 8 vector stores along the buffer's rows (j). The columns
// need no scalar edge (32 = 4 x 8); the rows' edge loop, from
// floor8(48 - kb) to min(16, 48 - kb), runs no iteration here.
// CHECK-LABEL: func @transposed_b
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK: affine.for %[[KB:.*]] = 0 to 48 step 16 {
// CHECK-NEXT: affine.for %[[PJ:.*]] = 0 to 32 step 8 {
// CHECK-NEXT: affine.for %[[PK:.*]] = 0 to min #{{.*}}(%[[KB]]) step 8 {
// CHECK-NEXT: affine.vector_load %{{.*}}[%[[PJ]], %[[PK]] + %[[KB]]] : memref<32x48xf32>, vector<8xf32>
// CHECK-COUNT-7: affine.vector_load %{{.*}}[%[[PJ]] + {{[1-7]}}, %[[PK]] + %[[KB]]] : memref<32x48xf32>, vector<8xf32>
// CHECK: affine.vector_store %{{.*}}, %[[P]][%[[PK]], %[[PJ]]] : memref<16x32xf32>, vector<8xf32>
// CHECK-COUNT-7: affine.vector_store %{{.*}}, %[[P]][%[[PK]] + {{[1-7]}}, %[[PJ]]] : memref<16x32xf32>, vector<8xf32>
// CHECK: affine.vector_load %[[P]]
// CHECK: vector.fma
// CHECK: memref.dealloc %[[P]]
func.func @transposed_b(%a: memref<8x48xf32>, %w: memref<32x48xf32>) -> memref<8x32xf32> {
  %c = memref.alloc() : memref<8x32xf32>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 32 {
      affine.for %k = 0 to 48 {
        %0 = affine.load %a[%i, %k] : memref<8x48xf32>
        %1 = affine.load %w[%j, %k] : memref<32x48xf32>
        %2 = affine.load %c[%i, %j] : memref<8x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x32xf32>
      }
    }
  }
  return %c : memref<8x32xf32>
}
