// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},func.func(dl-affine-vectorize))' | FileCheck %s --check-prefix=AVX512
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},func.func(dl-affine-vectorize))' | FileCheck %s --check-prefix=AVX2
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=neoverse-v1},func.func(dl-affine-vectorize))' | FileCheck %s --check-prefix=NEON

// Lanes per loop from the target: the elements of the loop's type in one
// vector register (16 f32 with AVX-512, 8 with AVX2, 4 with NEON; half as
// many f64), halved until they divide the trip count; 7 columns stay scalar.
// AVX512-LABEL: func @widths
// AVX512: vector<16xf32>
// AVX512: vector<8xf32>
// AVX512: vector<4xf32>
// AVX512-NOT: memref<4x7xf32>, vector
// AVX512: vector<8xf64>
// AVX2-LABEL: func @widths
// AVX2: vector<8xf32>
// AVX2: vector<8xf32>
// AVX2: vector<4xf32>
// AVX2: vector<4xf64>
// NEON-LABEL: func @widths
// NEON: vector<4xf32>
// NEON: vector<4xf32>
// NEON: vector<4xf32>
// NEON: vector<2xf64>
func.func @widths(%a: memref<4x16xf32>, %b: memref<4x24xf32>, %c: memref<4x12xf32>, %d: memref<4x7xf32>, %e: memref<4x16xf64>) {
  %f = arith.constant 1.0 : f32
  %g = arith.constant 1.0 : f64
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 16 {
      affine.store %f, %a[%i, %j] : memref<4x16xf32>
    }
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 24 {
      affine.store %f, %b[%i, %j] : memref<4x24xf32>
    }
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 12 {
      affine.store %f, %c[%i, %j] : memref<4x12xf32>
    }
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 7 {
      affine.store %f, %d[%i, %j] : memref<4x7xf32>
    }
  }
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 16 {
      affine.store %g, %e[%i, %j] : memref<4x16xf64>
    }
  }
  return
}
