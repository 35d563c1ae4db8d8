// RUN: dl-opt %s --dl-linalg-fuse | FileCheck %s --check-prefix=ALL
// RUN: dl-opt %s --dl-linalg-fuse="max-fused-ops=4" | FileCheck %s --check-prefix=BOUND

// A chain of four elementwise ops (two body operations each: the op and the
// yield). Unbounded, one loop nest computes all four; with max-fused-ops=4 a
// fused body holds at most four operations, so the chain is cut into two
// nests of two ops each (a third would meet the fused body of 3 operations
// with its own 2: more than 4).
// ALL-LABEL: func @chain
// ALL-COUNT-1: linalg.generic
// ALL-NOT: linalg.generic
// ALL: return
// BOUND-LABEL: func @chain
// BOUND: linalg.generic
// BOUND: math.exp
// BOUND-NEXT: math.exp
// BOUND-NEXT: linalg.yield
// BOUND: linalg.generic
// BOUND: math.exp
// BOUND-NEXT: math.exp
// BOUND-NEXT: linalg.yield
// BOUND-NOT: linalg.generic
// BOUND: return
#map = affine_map<(d0) -> (d0)>
func.func @chain(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %e0 = tensor.empty() : tensor<8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%0 : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%1 : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<8xf32>
  %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%2 : tensor<8xf32>) outs(%e3 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %3 : tensor<8xf32>
}
