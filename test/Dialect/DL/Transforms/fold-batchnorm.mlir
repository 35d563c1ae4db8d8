// RUN: dl-opt %s --split-input-file --dl-fold-batchnorm | FileCheck %s
// RUN: dl-opt %s --split-input-file --dl-fold-batchnorm --canonicalize | FileCheck %s --check-prefix=FOLDED

// conv (NCHW) + batch norm: the scale goes along the filter's first dimension.
// CHECK-LABEL: func.func @conv_nchw
// CHECK-NOT: dl.batch_norm
// CHECK: %[[S:.*]] = dl.mul %arg4, %{{.*}} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK: %[[R:.*]] = dl.reshape %[[S]] shape = [2, 1, 1, 1]
// CHECK: %[[W:.*]] = dl.mul %arg1, %[[R]] : (tensor<2x3x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<2x3x3x3xf32>
// CHECK: dl.conv2d %arg0, %[[W]], %{{.*}} strides = [1, 1]
// CHECK-NOT: dl.batch_norm
func.func @conv_nchw(%x: tensor<?x3x8x8xf32>, %w: tensor<2x3x3x3xf32>, %mean: tensor<2xf32>,
                     %var: tensor<2xf32>, %gamma: tensor<2xf32>, %beta: tensor<2xf32>) -> tensor<?x2x6x6xf32> {
  %y = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW"
         : (tensor<?x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<?x2x6x6xf32>
  %n = dl.batch_norm %y, %mean, %var, %gamma, %beta epsilon = 1.0e-05 axis = 1
         : (tensor<?x2x6x6xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<?x2x6x6xf32>
  return %n : tensor<?x2x6x6xf32>
}

// -----

// With constant parameters, canonicalization leaves a conv with new constant
// weights and bias: w * gamma / sqrt(var + eps) = [[1]] * 2 / sqrt(4) = 1 and
// (b - mean) * s + beta = (1 - 3) * 1 + 5 = 3.
// FOLDED-LABEL: func.func @conv_constants
// FOLDED-DAG: %[[W:.*]] = dl.constant dense<1.000000e+00> : tensor<1x1x1x1xf32>
// FOLDED-DAG: %[[B:.*]] = dl.constant dense<3.000000e+00> : tensor<1xf32>
// FOLDED: %[[Y:.*]] = dl.conv2d %arg0, %[[W]], %[[B]]
// FOLDED-NEXT: return %[[Y]]
func.func @conv_constants(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %w = dl.constant dense<1.0> : tensor<1x1x1x1xf32>
  %b = dl.constant dense<1.0> : tensor<1xf32>
  %mean = dl.constant dense<3.0> : tensor<1xf32>
  %var = dl.constant dense<4.0> : tensor<1xf32>
  %gamma = dl.constant dense<2.0> : tensor<1xf32>
  %beta = dl.constant dense<5.0> : tensor<1xf32>
  %y = dl.conv2d %x, %w, %b strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW"
         : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %n = dl.batch_norm %y, %mean, %var, %gamma, %beta epsilon = 0.0 axis = 1
         : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  return %n : tensor<1x1x4x4xf32>
}

// -----

// NHWC: the filter is [KH, KW, C, F]; the [F] scale broadcasts on its last dimension.
// CHECK-LABEL: func.func @conv_nhwc
// CHECK: %[[W:.*]] = dl.mul %arg1, %{{.*}} : (tensor<3x3x3x2xf32>, tensor<2xf32>) -> tensor<3x3x3x2xf32>
// CHECK: dl.conv2d %arg0, %[[W]], %{{.*}} {{.*}} layout = "NHWC"
// CHECK-NOT: dl.batch_norm
func.func @conv_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x2xf32>, %p: tensor<2xf32>) -> tensor<1x6x6x2xf32> {
  %y = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC"
         : (tensor<1x8x8x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x6x6x2xf32>
  %n = dl.batch_norm %y, %p, %p, %p, %p epsilon = 1.0e-05 axis = 3
         : (tensor<1x6x6x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x6x6x2xf32>
  return %n : tensor<1x6x6x2xf32>
}

// -----

// x @ w + b followed by a batch norm over the features.
// CHECK-LABEL: func.func @linear
// CHECK: %[[W:.*]] = dl.mul %arg1, %{{.*}} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: %[[P:.*]] = dl.matmul %arg0, %[[W]]
// CHECK: %[[R:.*]] = dl.add %[[P]], %{{.*}} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: return %[[R]]
func.func @linear(%x: tensor<?x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>, %p: tensor<3xf32>) -> tensor<?x3xf32> {
  %m = dl.matmul %x, %w : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  %y = dl.add %m, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %n = dl.batch_norm %y, %p, %p, %p, %p epsilon = 1.0e-05 axis = 1
         : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %n : tensor<?x3xf32>
}

// -----

// Left alone: the conv result is also returned (it would be computed twice).
// CHECK-LABEL: func.func @conv_other_user
// CHECK: %[[Y:.*]] = dl.conv2d
// CHECK: dl.batch_norm %[[Y]]
func.func @conv_other_user(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>, %p: tensor<1xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %y = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW"
         : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %n = dl.batch_norm %y, %p, %p, %p, %p epsilon = 1.0e-05 axis = 1
         : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  return %n, %y : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// Left alone: a batch norm over another axis than the conv's channels, and
// one not fed by a conv or matmul.
// CHECK-LABEL: func.func @not_channels
// CHECK: dl.batch_norm %{{.*}} axis = 2
// CHECK: dl.batch_norm %arg0
func.func @not_channels(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>, %p: tensor<4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %y = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW"
         : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %n = dl.batch_norm %y, %p, %p, %p, %p epsilon = 1.0e-05 axis = 2
         : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %m = dl.batch_norm %x, %p, %p, %p, %p epsilon = 1.0e-05 axis = 1
         : (tensor<1x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %n, %m : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}
