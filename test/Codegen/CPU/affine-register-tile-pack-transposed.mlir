// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},func.func(dl-affine-register-tile{rows=4 vectors=2 column-block=32 reduction-block=16}))' | FileCheck %s

// A transposed B (C[i, j] += A[i, k] * W[j, k]: an im2col convolution's
// OIHW filter) is packed by 8x8 squares (8 lanes of 256 bits): 8 vector
// loads along k, one from each of 8 rows of W, a vector.transpose in
// registers, 8 vector stores along j into the buffer. K = 45 is blocked by
// 16: the squares of a block stop at min(16, floor8(45 - kb)), and the rows
// left (13 - 8 = 5 in the last block) are copied by a scalar edge loop. The
// 4 columns past the tiles (36 = 2 x 16 + 4) are not packed: the remainder
// nest reads W as it lies.
// CHECK-DAG: #[[SQ:.*]] = affine_map<(d0) -> (16, ((-d0 + 45) floordiv 8) * 8)>
// CHECK-DAG: #[[EDGE:.*]] = affine_map<(d0) -> (((-d0 + 45) floordiv 8) * 8)>
// CHECK-DAG: #[[END:.*]] = affine_map<(d0) -> (16, -d0 + 45)>
// CHECK-LABEL: func @transposed_b_edges
// CHECK: %[[P:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK: affine.for %[[KB:.*]] = 0 to 45 step 16 {
// CHECK-NEXT: affine.for %[[J:.*]] = 0 to 32 step 8 {
// CHECK-NEXT: affine.for %[[K:.*]] = 0 to min #[[SQ]](%[[KB]]) step 8 {
// CHECK-COUNT-8: affine.vector_load %{{.*}}[%{{.*}}, %{{.*}}] : memref<36x45xf32>, vector<8xf32>
// CHECK: %[[T:.*]] = vector.transpose %{{.*}}, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// CHECK: %[[ROW:.*]] = vector.extract %[[T]][0] : vector<8xf32> from vector<8x8xf32>
// CHECK: affine.vector_store %[[ROW]], %[[P]][%[[K]], %[[J]]] : memref<16x32xf32>, vector<8xf32>
// CHECK-COUNT-7: affine.vector_store %{{.*}}, %[[P]][%{{.*}}, %[[J]]] : memref<16x32xf32>, vector<8xf32>
// CHECK: affine.for %[[EJ:.*]] = 0 to 32 {
// CHECK-NEXT: affine.for %[[EK:.*]] = #[[EDGE]](%[[KB]]) to min #[[END]](%[[KB]]) {
// CHECK: affine.load %{{.*}} : memref<36x45xf32>
// CHECK-NEXT: affine.store %{{.*}}, %[[P]][%[[EK]], %[[EJ]]] : memref<16x32xf32>
// CHECK: vector.fma
func.func @transposed_b_edges(%a: memref<8x45xf32>, %w: memref<36x45xf32>) -> memref<8x36xf32> {
  %c = memref.alloc() : memref<8x36xf32>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 36 {
      affine.for %k = 0 to 45 {
        %0 = affine.load %a[%i, %k] : memref<8x45xf32>
        %1 = affine.load %w[%j, %k] : memref<36x45xf32>
        %2 = affine.load %c[%i, %j] : memref<8x36xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x36xf32>
      }
    }
  }
  return %c : memref<8x36xf32>
}

// W's rows strided (every other float): no vector load along them, so the
// transposed B is packed by the scalar copy, columns outside.
// CHECK-LABEL: func @transposed_b_strided
// CHECK: %[[SP:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK-NOT: vector.transpose
// CHECK: affine.for %[[SJ:.*]] = 0 to 32 {
// CHECK-NEXT: affine.for %[[SK:.*]] = 0 to min
// CHECK: affine.load %{{.*}} : memref<32x48xf32, strided<[96, 2]>>
// CHECK-NEXT: affine.store %{{.*}}, %[[SP]][%[[SK]], %[[SJ]]] : memref<16x32xf32>
// CHECK: vector.fma
func.func @transposed_b_strided(%a: memref<8x48xf32>, %w: memref<32x48xf32, strided<[96, 2]>>) -> memref<8x32xf32> {
  %c = memref.alloc() : memref<8x32xf32>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 32 {
      affine.for %k = 0 to 48 {
        %0 = affine.load %a[%i, %k] : memref<8x48xf32>
        %1 = affine.load %w[%j, %k] : memref<32x48xf32, strided<[96, 2]>>
        %2 = affine.load %c[%i, %j] : memref<8x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x32xf32>
      }
    }
  }
  return %c : memref<8x32xf32>
}
