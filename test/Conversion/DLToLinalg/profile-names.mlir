// RUN: dl-opt %s --convert-dl-to-linalg --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s

// Every dl op's location is wrapped in a name saying what it computes, kept
// by the ops it lowers to (and by their loops, down to dlc.profile's region
// table): a convolution's window, stride, groups, input and output shapes;
// a product's operand shapes; any other op's result shape. Constants are
// left alone (no loop computes them).
// CHECK-LABEL: func.func @named
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} loc("dl.conv2d 3x3/2 g8 1x9x9x8 -> 1x4x4x8"("model.py":7:3))
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} loc("dl.conv2d 1x1 1x4x4x8 -> 1x4x4x16"("model.py":7:3))
// CHECK: linalg.matmul {{.*}} loc("dl.matmul 16x8 * 8x?"("{{.*}}profile-names.mlir":{{[0-9]+}}:8))
// CHECK: arith.maximumf {{.*}} loc("dl.relu 16x?"(
// CHECK-NOT: loc("dl.constant
func.func @named(%x: tensor<1x9x9x8xf32>, %w: tensor<3x3x1x8xf32>, %a: tensor<16x8xf32>, %b: tensor<8x?xf32>) -> (tensor<1x4x4x16xf32>, tensor<16x?xf32>) {
  %w1 = dl.constant dense<1.0> : tensor<1x1x8x16xf32>
  %d = dl.conv2d %x, %w strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 8 layout = "NHWC" : (tensor<1x9x9x8xf32>, tensor<3x3x1x8xf32>) -> tensor<1x4x4x8xf32> loc("model.py":7:3)
  %p = dl.conv2d %d, %w1 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x4x4x8xf32>, tensor<1x1x8x16xf32>) -> tensor<1x4x4x16xf32> loc("model.py":7:3)
  %m = dl.matmul %a, %b : (tensor<16x8xf32>, tensor<8x?xf32>) -> tensor<16x?xf32>
  %r = dl.relu %m : tensor<16x?xf32> -> tensor<16x?xf32>
  return %p, %r : tensor<1x4x4x16xf32>, tensor<16x?xf32>
}
