// RUN: dl-opt %s --pass-pipeline='builtin.module(func.func(dl-linalg-to-affine-loops,canonicalize))' | FileCheck %s
// RUN: dl-opt %s --pass-pipeline='builtin.module(func.func(dl-linalg-to-affine-loops,canonicalize,dl-affine-interchange))' | FileCheck %s --check-prefix=INTERCHANGE

// Each linalg op becomes its affine nest (upstream's lowering); the op's
// strategy moves to the nest's outermost loop. An op without one leaves
// its nest without one.
// CHECK-LABEL: func @strategy_moves
// CHECK: affine.for %[[J:.*]] = 0 to 32 {
// CHECK-NEXT: affine.for %[[I:.*]] = 0 to 16 {
// CHECK-NEXT: affine.for %[[K:.*]] = 0 to 8 {
// CHECK: affine.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]]
// CHECK: } {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 2, vectors = 1>}
// CHECK: affine.for
// CHECK: affine.store
// CHECK-NOT: dl.strategy
// CHECK: return

// dl-affine-interchange reorders the nest to (i, k, j); the strategy stays
// on the outermost loop, now i's.
// INTERCHANGE-LABEL: func @strategy_moves
// INTERCHANGE: affine.for %[[I:.*]] = 0 to 16 {
// INTERCHANGE-NEXT: affine.for %[[K:.*]] = 0 to 8 {
// INTERCHANGE-NEXT: affine.for %[[J:.*]] = 0 to 32 {
// INTERCHANGE: } {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 2, vectors = 1>}
func.func @strategy_moves(%a: memref<16x8xf32>, %b: memref<8x32xf32>, %c: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(j, i, k) -> (i, k)>, affine_map<(j, i, k) -> (k, j)>, affine_map<(j, i, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x8xf32>, memref<8x32xf32>) outs(%c : memref<16x32xf32>)
      attrs = {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 2, vectors = 1>} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<16x32xf32>)
  return
}
