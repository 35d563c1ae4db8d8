// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2 pack=false}))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},dl-cpu-pipeline)' | FileCheck %s --check-prefix=LLVM

// What the micro-kernel refuses: an input read along the columns whose
// columns are not adjacent in memory (here every 8th element: `x[..., -1]`
// of a [8, 8, 8] tensor, as a batched matmul operand). Its vector loads
// would be invalid ("most minor memref dim must have unit stride": found by
// tools/fuzz/model_fuzz.py); the nest is left as it is, for the vectorizer.
// CHECK-LABEL: func @strided_columns
// CHECK-NOT: vector
// CHECK: return
// LLVM-LABEL: llvm.func @strided_columns
func.func @strided_columns(%a: memref<8x16xf32>, %v: memref<16x16x8xf32>) -> memref<8x16xf32> {
  %b = memref.subview %v[0, 0, 7] [16, 16, 1] [1, 1, 1] : memref<16x16x8xf32> to memref<16x16xf32, strided<[128, 8], offset: 7>>
  %c = memref.alloc() : memref<8x16xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 16 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<8x16xf32>
        %1 = affine.load %b[%k, %j] : memref<16x16xf32, strided<[128, 8], offset: 7>>
        %2 = affine.load %c[%i, %j] : memref<8x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x16xf32>
      }
    }
  }
  return %c : memref<8x16xf32>
}

// -----

// The same nest with contiguous columns is taken (the contrast).
// CHECK-LABEL: func @contiguous_columns
// CHECK: vector.fma
// LLVM-LABEL: llvm.func @contiguous_columns
func.func @contiguous_columns(%a: memref<8x16xf32>, %w: memref<16x32xf32>) -> memref<8x16xf32> {
  %b = memref.subview %w[0, 8] [16, 16] [1, 1] : memref<16x32xf32> to memref<16x16xf32, strided<[32, 1], offset: 8>>
  %c = memref.alloc() : memref<8x16xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 16 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<8x16xf32>
        %1 = affine.load %b[%k, %j] : memref<16x16xf32, strided<[32, 1], offset: 8>>
        %2 = affine.load %c[%i, %j] : memref<8x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x16xf32>
      }
    }
  }
  return %c : memref<8x16xf32>
}
