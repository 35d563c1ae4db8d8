// RUN: dl-opt %s --dl-select-strategies | FileCheck %s
// RUN: dl-opt %s --dl-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Each compute-heavy op gets the strategy its lowering follows; a strategy
// given in the IR is kept.
// CHECK-LABEL: func @strategies
// CHECK: dl.conv2d {{.*}} {dl.strategy = "im2col-gemm"}
// CHECK: dl.conv2d {{.*}} {dl.strategy = "direct"}
// CHECK: dl.conv2d {{.*}} {dl.strategy = "direct"}
// CHECK: dl.matmul {{.*}} {dl.strategy = "loops"}
// CHECK: dl.matmul {{.*}} {dl.strategy = "register-tiled-gemm"}
// CHECK: dl.softmax {{.*}} {dl.strategy = "vectorized-reduction"}
// CHECK: dl.add
// CHECK-NOT: dl.strategy
// CHECK: return

// EXPLAIN: remark: dl.conv2d: strategy im2col-gemm (groups = 1, f32, static spatial sizes
// EXPLAIN: remark: dl.conv2d: strategy direct (grouped or depthwise: no GEMM to share)
// EXPLAIN: remark: dl.conv2d: strategy direct (given in the IR)
// EXPLAIN: remark: dl.matmul: strategy loops (integer operands: plain loops)
// EXPLAIN: remark: dl.matmul: strategy register-tiled-gemm (float operands with static K and N
// EXPLAIN: remark: dl.softmax: strategy vectorized-reduction
func.func @strategies(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %d: tensor<8x1x3x3xf32>,
                      %a: tensor<4x8xi32>, %b: tensor<8x3xi32>, %f: tensor<?x8xf32>, %g: tensor<8x16xf32>)
    -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<4x3xi32>, tensor<?x16xf32>) {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %1 = dl.conv2d %0, %d strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 8 layout = "NCHW" : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32>
  %2 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" {dl.strategy = "direct"} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %3 = dl.matmul %a, %b : (tensor<4x8xi32>, tensor<8x3xi32>) -> tensor<4x3xi32>
  %4 = dl.matmul %f, %g : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %5 = dl.softmax %4 axis = 1 : tensor<?x16xf32> -> tensor<?x16xf32>
  %6 = dl.add %5, %5 : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %0, %1, %2, %3, %6 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<4x3xi32>, tensor<?x16xf32>
}
