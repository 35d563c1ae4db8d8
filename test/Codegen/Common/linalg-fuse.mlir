// RUN: dl-opt %s --dl-linalg-fuse | FileCheck %s

// Two elementwise ops, each reading the other's result once per element:
// one loop nest computes both.
// CHECK-LABEL: func @chain
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return

// A GEMM reads each element of its operand N times: relu stays a kernel of
// its own rather than being recomputed inside the matmul.
// CHECK-LABEL: func @into_matmul
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.matmul ins(%1,
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @chain(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = math.exp %in : f32
      linalg.yield %4 : f32
    } -> tensor<4x8xf32>
    %2 = tensor.empty() : tensor<4x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = arith.maximumf %in, %cst : f32
      linalg.yield %4 : f32
    } -> tensor<4x8xf32>
    return %3 : tensor<4x8xf32>
  }
  func.func @into_matmul(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>) -> tensor<4x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.maximumf %in, %cst : f32
      linalg.yield %5 : f32
    } -> tensor<4x8xf32>
    %2 = tensor.empty() : tensor<4x16xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %4 = linalg.matmul ins(%1, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%3 : tensor<4x16xf32>) -> tensor<4x16xf32>
    return %4 : tensor<4x16xf32>
  }
}

