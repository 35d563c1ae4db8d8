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
// writing `out` contiguously wins equally (each strided walk moves 128
// bytes per iteration, past a cache line); ties keep the original order.
// CHECK-LABEL: func @transpose_tie
// CHECK: affine.for %{{.*}} = 0 to 64 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 32 {
func.func @transpose_tie(%in: memref<32x64xf32>, %out: memref<64x32xf32>) {
  affine.for %i = 0 to 64 {
    affine.for %j = 0 to 32 {
      %0 = affine.load %in[%j, %i] : memref<32x64xf32>
      affine.store %0, %out[%i, %j] : memref<64x32xf32>
    }
  }
  return
}

// -----

// Strides are measured in bytes by the memref's static layout: an im2col
// copy of 3x3 windows. Writing `col` walks kw (1 element), kh (3) and c (9
// elements) within cache lines, so the order (oh, ow, c, kh, kw) that
// writes `col` contiguously is kept; reading the input walks kw and ow with
// unit stride. A cost of "last index, unit stride" only would have put ow
// second innermost and scattered the writes.
// CHECK-LABEL: func @im2col
// CHECK: affine.for %[[OH:.*]] = 0 to 6 {
// CHECK-NEXT: affine.for %[[OW:.*]] = 0 to 6 {
// CHECK-NEXT: affine.for %[[C:.*]] = 0 to 16 {
// CHECK-NEXT: affine.for %[[KH:.*]] = 0 to 3 {
// CHECK-NEXT: affine.for %[[KW:.*]] = 0 to 3 {
func.func @im2col(%x: memref<16x8x8xf32>, %col: memref<6x6x16x3x3xf32>) {
  affine.for %oh = 0 to 6 {
    affine.for %ow = 0 to 6 {
      affine.for %c = 0 to 16 {
        affine.for %kh = 0 to 3 {
          affine.for %kw = 0 to 3 {
            %0 = affine.load %x[%c, %oh + %kh, %ow + %kw] : memref<16x8x8xf32>
            affine.store %0, %col[%oh, %ow, %c, %kh, %kw] : memref<6x6x16x3x3xf32>
          }
        }
      }
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

// -----

// Loops of one iteration (a batch and a head of 1, as inside an attention
// tile) have no say: they stay where they are rather than move inwards,
// so that this elementwise nest keeps the loop order of the accumulation
// before it (whose epilogue it can then be). The 12 x 1500 part is already
// in its best order.
// CHECK-LABEL: func @single_iteration_loops
// CHECK: affine.for %{{.*}} = 0 to 1 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 1 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 12 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 1500 {
func.func @single_iteration_loops(%x: memref<1x1x12x1500xf32>, %y: memref<1x1x12x1500xf32>) {
  %scale = arith.constant 0.125 : f32
  affine.for %b = 0 to 1 {
    affine.for %h = 0 to 1 {
      affine.for %i = 0 to 12 {
        affine.for %j = 0 to 1500 {
          %0 = affine.load %x[%b, %h, %i, %j] : memref<1x1x12x1500xf32>
          %1 = arith.mulf %0, %scale : f32
          affine.store %1, %y[%b, %h, %i, %j] : memref<1x1x12x1500xf32>
        }
      }
    }
  }
  return
}
