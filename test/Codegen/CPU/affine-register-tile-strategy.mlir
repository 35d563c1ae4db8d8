// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{pack=false}))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{pack=false report=true}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=3 vectors=2 pack=false}))' | FileCheck %s --check-prefix=OPTION

// The nest's strategy decides the tile (2 rows x 1 vector of 8 lanes on
// Haswell); what was applied is recorded on the new outermost loop. Pass
// options still win over it (3 x 2).
// CHECK-LABEL: func @from_strategy
// CHECK: affine.for %{{.*}} = 0 to 16 step 2 {
// CHECK: affine.for %{{.*}} = 0 to 32 step 8 {
// CHECK-COUNT-2: vector.fma {{.*}} : vector<8xf32>
// CHECK-NOT: vector.fma
// CHECK: } {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 2, vectors = 1>}
// OPTION-LABEL: func @from_strategy
// OPTION: } {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 3, vectors = 2>}
func.func @from_strategy(%a: memref<16x8xf32>, %b: memref<8x32xf32>) -> memref<16x32xf32> {
  %c = memref.alloc() : memref<16x32xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 8 {
      affine.for %j = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<16x8xf32>
        %1 = affine.load %b[%k, %j] : memref<8x32xf32>
        %2 = affine.load %c[%i, %j] : memref<16x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x32xf32>
      }
    }
  } {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 2, vectors = 1>}
  return %c : memref<16x32xf32>
}

// -----

// Without a strategy, the target's tile: 4 x 3 vectors on Haswell's 16
// ymm registers (48 of the 64 columns; the rest in the original nest).
// CHECK-LABEL: func @from_target
// CHECK: affine.for %{{.*}} = 0 to 16 step 4 {
// CHECK: affine.for %{{.*}} = 0 to 48 step 24 {
// CHECK-COUNT-12: vector.fma {{.*}} : vector<8xf32>
// CHECK: } {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 4, vectors = 3>}
func.func @from_target(%a: memref<16x8xf32>, %b: memref<8x64xf32>) -> memref<16x64xf32> {
  %c = memref.alloc() : memref<16x64xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 8 {
      affine.for %j = 0 to 64 {
        %0 = affine.load %a[%i, %k] : memref<16x8xf32>
        %1 = affine.load %b[%k, %j] : memref<8x64xf32>
        %2 = affine.load %c[%i, %j] : memref<16x64xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x64xf32>
      }
    }
  }
  return %c : memref<16x64xf32>
}

// -----

// A nest whose strategy is `loops` is left as it is, and says so.
// REMARK: remark: dl-affine-register-tile: left as loops by its strategy #dl.strategy<kind = loops>
// CHECK-LABEL: func @loops
// CHECK-NOT: vector
// CHECK: } {dl.strategy = #dl.strategy<kind = loops>}
func.func @loops(%a: memref<16x8xf32>, %b: memref<8x32xf32>) -> memref<16x32xf32> {
  %c = memref.alloc() : memref<16x32xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 8 {
      affine.for %j = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<16x8xf32>
        %1 = affine.load %b[%k, %j] : memref<8x32xf32>
        %2 = affine.load %c[%i, %j] : memref<16x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x32xf32>
      }
    }
  } {dl.strategy = #dl.strategy<kind = loops>}
  return %c : memref<16x32xf32>
}
