// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-interchange))' -verify-diagnostics | FileCheck %s

// matmul: k innermost strides down B's columns; j innermost walks B and C
// contiguously and reuses A[i, k]: (i, j, k) becomes (i, k, j).
// CHECK-LABEL: func @matmul
// CHECK: affine.for %[[I:.*]] = 0 to 64 {
// CHECK-NEXT: affine.for %[[K:.*]] = 0 to 32 {
// CHECK-NEXT: affine.for %[[J:.*]] = 0 to 48 {
// CHECK: affine.load %{{.*}}[%[[K]], %[[J]]] : memref<32x48xf32>
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x48xf32>, %c: memref<64x48xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 48 {
      affine.for %k = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<64x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x48xf32>
        %2 = affine.load %c[%i, %j] : memref<64x48xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<64x48xf32>
      }
    }
  }
  return
}

// -----

// A transpose copy: reading `in` with unit stride needs j outermost... but
// writing `out` contiguously wins equally; ties keep the original order.
// CHECK-LABEL: func @transpose_tie
// CHECK: affine.for %{{.*}} = 0 to 16 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 8 {
func.func @transpose_tie(%in: memref<8x16xf32>, %out: memref<16x8xf32>) {
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 8 {
      %0 = affine.load %in[%j, %i] : memref<8x16xf32>
      affine.store %0, %out[%i, %j] : memref<16x8xf32>
    }
  }
  return
}

// -----

// A column-major walk is turned into a row-major one.
// CHECK-LABEL: func @column_walk
// CHECK: affine.for %[[J:.*]] = 0 to 32 {
// CHECK-NEXT: affine.for %[[I:.*]] = 0 to 16 {
// CHECK: affine.load %{{.*}}[%[[J]], %[[I]]]
func.func @column_walk(%in: memref<32x16xf32>, %out: memref<32x16xf32>) {
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 32 {
      %0 = affine.load %in[%j, %i] : memref<32x16xf32>
      %1 = arith.addf %0, %0 : f32
      affine.store %1, %out[%j, %i] : memref<32x16xf32>
    }
  }
  return
}

// -----

// Refused: swapping the loops would reverse the dependence of direction
// (1, -1) (each element reads its upper-right neighbour's old value).
// CHECK-LABEL: func @illegal
// CHECK: affine.for %[[I:.*]] = 1 to 64 {
// CHECK-NEXT: affine.for %[[J:.*]] = 0 to 63 {
func.func @illegal(%a: memref<64x64xf32>) {
  // expected-remark @+1 {{dl-affine-interchange: the cheapest loop order (d1, d0) would reverse a dependence (direction (1, -1)); using (d0, d1)}}
  affine.for %i = 1 to 64 {
    affine.for %j = 0 to 63 {
      %0 = affine.load %a[%j + 1, %i - 1] : memref<64x64xf32>
      affine.store %0, %a[%j, %i] : memref<64x64xf32>
    }
  }
  return
}

// -----

// Left alone: a non-affine store could carry dependences the analysis does
// not see.
// CHECK-LABEL: func @non_affine
// CHECK: affine.for %{{.*}} = 0 to 16 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 32 {
func.func @non_affine(%in: memref<32x16xf32>, %out: memref<32x16xf32>) {
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 32 {
      %0 = affine.load %in[%j, %i] : memref<32x16xf32>
      memref.store %0, %out[%j, %i] : memref<32x16xf32>
    }
  }
  return
}
