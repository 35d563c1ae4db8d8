// RUN: dl-opt %s --dl-affine-interchange | FileCheck %s
// RUN: dl-opt %s --dl-affine-tile | FileCheck %s
// RUN: dl-opt %s --dl-affine-register-tile | FileCheck %s
// RUN: dl-opt %s --dl-affine-vectorize | FileCheck %s
// RUN: dl-opt %s --dl-plan-memory | FileCheck %s
// RUN: dl-opt %s --dl-affine-parallelize | FileCheck %s

// A memref whose byte size overflows int64_t is refused with an error by
// every dl-affine pass (dl::normalizeAffineLoops; see
// degenerate-loops-invalid.mlir) and by the pipelines (dl-check-sizes).

// A loop from INT64_MIN (found by tools/fuzz/dlopt_fuzz.py): upstream's
// dependence analysis asserts converting its direction vector back to
// int64_t, so the loop passes leave nests with constants of 2^32 or more
// alone (dl::hasAnalyzableConstants).
// CHECK-LABEL: func.func @huge_bound
// CHECK: affine.for %[[I:.*]] = 0 to 8 {
// CHECK-NEXT: affine.for %[[K:.*]] = -9223372036854775808 to 8 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 16
func.func @huge_bound(%a: memref<8x8xf32>, %b: memref<8x16xf32>) -> memref<8x16xf32> {
  %c = memref.alloc() : memref<8x16xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = -9223372036854775808 to 8 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<8x8xf32>
        %1 = affine.load %b[%k, %j] : memref<8x16xf32>
        %2 = affine.load %c[%i, %j] : memref<8x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x16xf32>
      }
    }
  }
  return %c : memref<8x16xf32>
}
