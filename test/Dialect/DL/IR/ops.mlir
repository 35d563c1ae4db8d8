// RUN: dl-opt %s | dl-opt | FileCheck %s
// RUN: dl-opt %s --mlir-print-op-generic | dl-opt | FileCheck %s

// Every dl op parses, verifies, prints and parses again.

// CHECK-LABEL: func @constant
func.func @constant() -> tensor<2x2xf32> {
  // CHECK: dl.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
  %0 = dl.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// CHECK-LABEL: func @binary_broadcast
func.func @binary_broadcast(%a: tensor<?x4xf32>, %b: tensor<4xf32>, %c: tensor<3x1x4xi32>, %d: tensor<5x1xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<3x5x4xi32>) {
  // CHECK: dl.add %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %0 = dl.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: dl.sub %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %1 = dl.sub %b, %a : (tensor<4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: dl.mul
  %2 = dl.mul %a, %a : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: dl.div
  %3 = dl.div %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  // CHECK: dl.add %{{.*}}, %{{.*}} : (tensor<3x1x4xi32>, tensor<5x1xi32>) -> tensor<3x5x4xi32>
  %4 = dl.add %c, %d : (tensor<3x1x4xi32>, tensor<5x1xi32>) -> tensor<3x5x4xi32>
  return %0, %1, %2, %3, %4 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<3x5x4xi32>
}

// CHECK-LABEL: func @unary
func.func @unary(%a: tensor<?x4xf32>, %b: tensor<3xi64>) -> (tensor<?x4xf32>, tensor<3xi64>, tensor<?x4xf32>) {
  // CHECK: dl.relu %{{.*}} : tensor<?x4xf32> -> tensor<?x4xf32>
  %0 = dl.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.relu %{{.*}} : tensor<3xi64> -> tensor<3xi64>
  %1 = dl.relu %b : tensor<3xi64> -> tensor<3xi64>
  // CHECK: dl.exp %{{.*}} : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = dl.exp %a : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0, %1, %2 : tensor<?x4xf32>, tensor<3xi64>, tensor<?x4xf32>
}

// CHECK-LABEL: func @more_elementwise
func.func @more_elementwise(%a: tensor<?x4xf32>, %h: tensor<3xbf16>, %i: tensor<?x4xi32>, %j: tensor<4xi32>, %p: tensor<?x4xi1>, %q: tensor<4xi1>) -> (tensor<?x4xf32>, tensor<3xbf16>, tensor<?x4xi32>, tensor<?x4xi1>, tensor<?x4xi1>, tensor<4xi1>, tensor<?x4xi32>) {
  // CHECK: dl.sin %{{.*}} : tensor<?x4xf32> -> tensor<?x4xf32>
  %0 = dl.sin %a : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.cos
  %1 = dl.cos %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.tan
  %2 = dl.tan %1 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.asin
  %3 = dl.asin %2 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.acos
  %4 = dl.acos %3 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.atan
  %5 = dl.atan %4 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.sinh
  %6 = dl.sinh %5 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.cosh
  %7 = dl.cosh %6 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.asinh
  %8 = dl.asinh %7 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.acosh
  %9 = dl.acosh %8 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.atanh
  %10 = dl.atanh %9 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.floor
  %11 = dl.floor %10 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.ceil
  %12 = dl.ceil %11 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.round %{{.*}} : tensor<3xbf16> -> tensor<3xbf16>
  %13 = dl.round %h : tensor<3xbf16> -> tensor<3xbf16>
  // CHECK: dl.sign %{{.*}} : tensor<?x4xf32> -> tensor<?x4xf32>
  %14 = dl.sign %12 : tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK: dl.sign %{{.*}} : tensor<?x4xi32> -> tensor<?x4xi32>
  %15 = dl.sign %i : tensor<?x4xi32> -> tensor<?x4xi32>
  // CHECK: dl.isnan %{{.*}} : tensor<?x4xf32> -> tensor<?x4xi1>
  %16 = dl.isnan %14 : tensor<?x4xf32> -> tensor<?x4xi1>
  // CHECK: dl.isinf %{{.*}} : tensor<?x4xf32> -> tensor<?x4xi1>
  %17 = dl.isinf %14 : tensor<?x4xf32> -> tensor<?x4xi1>
  // CHECK: dl.logical_and %{{.*}}, %{{.*}} : (tensor<?x4xi1>, tensor<4xi1>) -> tensor<?x4xi1>
  %18 = dl.logical_and %16, %q : (tensor<?x4xi1>, tensor<4xi1>) -> tensor<?x4xi1>
  // CHECK: dl.logical_or
  %19 = dl.logical_or %18, %17 : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
  // CHECK: dl.logical_xor
  %20 = dl.logical_xor %19, %p : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
  // CHECK: dl.logical_not %{{.*}} : tensor<?x4xi1> -> tensor<?x4xi1>
  %21 = dl.logical_not %20 : tensor<?x4xi1> -> tensor<?x4xi1>
  // CHECK: dl.bitwise_and %{{.*}}, %{{.*}} : (tensor<?x4xi32>, tensor<4xi32>) -> tensor<?x4xi32>
  %22 = dl.bitwise_and %15, %j : (tensor<?x4xi32>, tensor<4xi32>) -> tensor<?x4xi32>
  // CHECK: dl.bitwise_or
  %23 = dl.bitwise_or %22, %j : (tensor<?x4xi32>, tensor<4xi32>) -> tensor<?x4xi32>
  // CHECK: dl.bitwise_xor
  %24 = dl.bitwise_xor %23, %i : (tensor<?x4xi32>, tensor<?x4xi32>) -> tensor<?x4xi32>
  // CHECK: dl.bitwise_not %{{.*}} : tensor<?x4xi32> -> tensor<?x4xi32>
  %25 = dl.bitwise_not %24 : tensor<?x4xi32> -> tensor<?x4xi32>
  // CHECK: dl.bitwise_and %{{.*}}, %{{.*}} : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
  %26 = dl.bitwise_and %21, %p : (tensor<?x4xi1>, tensor<?x4xi1>) -> tensor<?x4xi1>
  // CHECK: dl.bitwise_not %{{.*}} : tensor<4xi1> -> tensor<4xi1>
  %27 = dl.bitwise_not %q : tensor<4xi1> -> tensor<4xi1>
  // CHECK: dl.remainder %{{.*}}, %{{.*}} : (tensor<?x4xi32>, tensor<4xi32>) -> tensor<?x4xi32>
  %28 = dl.remainder %25, %j : (tensor<?x4xi32>, tensor<4xi32>) -> tensor<?x4xi32>
  // CHECK: dl.fmod %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %29 = dl.fmod %14, %a : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %29, %13, %28, %26, %21, %27, %24 : tensor<?x4xf32>, tensor<3xbf16>, tensor<?x4xi32>, tensor<?x4xi1>, tensor<?x4xi1>, tensor<4xi1>, tensor<?x4xi32>
}

// CHECK-LABEL: func @matmul
func.func @matmul(%a: tensor<?x784xf32>, %w: tensor<784x128xf32>, %x: tensor<2x3x4x5xf16>, %y: tensor<3x5x6xf16>) -> (tensor<?x128xf32>, tensor<2x3x4x6xf16>) {
  // CHECK: dl.matmul %{{.*}}, %{{.*}} : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  %0 = dl.matmul %a, %w : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  // CHECK: dl.matmul %{{.*}}, %{{.*}} : (tensor<2x3x4x5xf16>, tensor<3x5x6xf16>) -> tensor<2x3x4x6xf16>
  %1 = dl.matmul %x, %y : (tensor<2x3x4x5xf16>, tensor<3x5x6xf16>) -> tensor<2x3x4x6xf16>
  return %0, %1 : tensor<?x128xf32>, tensor<2x3x4x6xf16>
}

// CHECK-LABEL: func @reductions
func.func @reductions(%a: tensor<?x4x5xf32>) -> (tensor<?x1x5xf32>, tensor<f32>, tensor<4xf32>) {
  // CHECK: dl.reduce_sum %{{.*}} axes = [1] keepdims : tensor<?x4x5xf32> -> tensor<?x1x5xf32>
  %0 = dl.reduce_sum %a axes = [1] keepdims : tensor<?x4x5xf32> -> tensor<?x1x5xf32>
  // CHECK: dl.reduce_max %{{.*}} axes = [0, 1, 2] : tensor<?x4x5xf32> -> tensor<f32>
  %1 = dl.reduce_max %a axes = [0, 1, 2] : tensor<?x4x5xf32> -> tensor<f32>
  // CHECK: dl.reduce_sum %{{.*}} axes = [0, 2] : tensor<?x4x5xf32> -> tensor<4xf32>
  %2 = dl.reduce_sum %a axes = [0, 2] : tensor<?x4x5xf32> -> tensor<4xf32>
  return %0, %1, %2 : tensor<?x1x5xf32>, tensor<f32>, tensor<4xf32>
}

// CHECK-LABEL: func @shapes
func.func @shapes(%a: tensor<?x3x4xf32>, %b: tensor<2x3x4xi8>) -> (tensor<?x12xf32>, tensor<4x6xi8>, tensor<?x4x3xf32>, tensor<4x3x2xi8>) {
  // CHECK: dl.reshape %{{.*}} shape = [-1, 12] : tensor<?x3x4xf32> -> tensor<?x12xf32>
  %0 = dl.reshape %a shape = [-1, 12] : tensor<?x3x4xf32> -> tensor<?x12xf32>
  // CHECK: dl.reshape %{{.*}} shape = [4, -1] : tensor<2x3x4xi8> -> tensor<4x6xi8>
  %1 = dl.reshape %b shape = [4, -1] : tensor<2x3x4xi8> -> tensor<4x6xi8>
  // CHECK: dl.transpose %{{.*}} perm = [0, 2, 1] : tensor<?x3x4xf32> -> tensor<?x4x3xf32>
  %2 = dl.transpose %a perm = [0, 2, 1] : tensor<?x3x4xf32> -> tensor<?x4x3xf32>
  // CHECK: dl.transpose %{{.*}} perm = [2, 1, 0] : tensor<2x3x4xi8> -> tensor<4x3x2xi8>
  %3 = dl.transpose %b perm = [2, 1, 0] : tensor<2x3x4xi8> -> tensor<4x3x2xi8>
  return %0, %1, %2, %3 : tensor<?x12xf32>, tensor<4x6xi8>, tensor<?x4x3xf32>, tensor<4x3x2xi8>
}

// CHECK-LABEL: func @softmax
func.func @softmax(%a: tensor<?x10xf64>) -> tensor<?x10xf64> {
  // CHECK: dl.softmax %{{.*}} axis = 1 : tensor<?x10xf64> -> tensor<?x10xf64>
  %0 = dl.softmax %a axis = 1 : tensor<?x10xf64> -> tensor<?x10xf64>
  return %0 : tensor<?x10xf64>
}

// CHECK-LABEL: func @nn_ops
func.func @nn_ops(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %c: tensor<3xf32>) -> (tensor<?x4x8x8xf32>, tensor<?x3x4x4xf32>, tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>) {
  // CHECK: dl.conv2d %{{.*}}, %{{.*}}, %{{.*}} strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW"
  %0 = dl.conv2d %x, %w, %b strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x8x8xf32>
  // CHECK: dl.max_pool2d %{{.*}} kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] layout = "NCHW"
  %1 = dl.max_pool2d %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] layout = "NCHW" : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  // CHECK: dl.avg_pool2d %{{.*}} kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] count_include_pad layout = "NCHW"
  %2 = dl.avg_pool2d %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] count_include_pad layout = "NCHW" : tensor<?x3x8x8xf32> -> tensor<?x3x4x4xf32>
  // CHECK: dl.batch_norm {{.*}} epsilon = 1.000000e-05 axis = 1
  %3 = dl.batch_norm %x, %c, %c, %c, %c epsilon = 1.0e-5 axis = 1 : (tensor<?x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x8x8xf32>
  // CHECK: dl.gelu %{{.*}} approximate_tanh : tensor<?x3x8x8xf32> -> tensor<?x3x8x8xf32>
  %4 = dl.gelu %3 approximate_tanh : tensor<?x3x8x8xf32> -> tensor<?x3x8x8xf32>
  return %0, %1, %2, %3, %4 : tensor<?x4x8x8xf32>, tensor<?x3x4x4xf32>, tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>, tensor<?x3x8x8xf32>
}

// CHECK-LABEL: func @more_ops
func.func @more_ops(%x: tensor<?x6xf32>, %g: tensor<6xf32>, %t: tensor<10x6xf32>, %ids: tensor<?x2xi64>) -> (tensor<?x6xf32>, tensor<?x6xi1>, tensor<?x6xf32>, tensor<?xi64>, tensor<?x3xf32>, tensor<?x12xf32>, tensor<?x8xf32>, tensor<?x2x6xf32>, tensor<?x6xi32>, tensor<?x6xf32>) {
  // CHECK: dl.layer_norm {{.*}} axis = 1 epsilon = 1.000000e-05
  %0 = dl.layer_norm %x, %g, %g axis = 1 epsilon = 1.0e-5 : (tensor<?x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  // CHECK: dl.less_equal
  %1 = dl.less_equal %x, %g : (tensor<?x6xf32>, tensor<6xf32>) -> tensor<?x6xi1>
  // CHECK: dl.where
  %2 = dl.where %1, %x, %g : (tensor<?x6xi1>, tensor<?x6xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  // CHECK: dl.argmax %{{.*}} axis = 1 : tensor<?x6xf32> -> tensor<?xi64>
  %3 = dl.argmax %x axis = 1 : tensor<?x6xf32> -> tensor<?xi64>
  // CHECK: dl.slice %{{.*}} starts = [0, 5] sizes = [-1, 3] strides = [1, -2]
  %4 = dl.slice %x starts = [0, 5] sizes = [-1, 3] strides = [1, -2] : tensor<?x6xf32> -> tensor<?x3xf32>
  // CHECK: dl.concat %{{.*}}, %{{.*}} axis = 1
  %5 = dl.concat %x, %2 axis = 1 : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x12xf32>
  // CHECK: dl.pad %{{.*}} low = [0, 1] high = [0, 1] value = 2.500000e+00
  %6 = dl.pad %x low = [0, 1] high = [0, 1] value = 2.5 : tensor<?x6xf32> -> tensor<?x8xf32>
  // CHECK: dl.gather %{{.*}}, %{{.*}} axis = 0 : (tensor<10x6xf32>, tensor<?x2xi64>) -> tensor<?x2x6xf32>
  %7 = dl.gather %t, %ids axis = 0 : (tensor<10x6xf32>, tensor<?x2xi64>) -> tensor<?x2x6xf32>
  // CHECK: dl.cast %{{.*}} : tensor<?x6xf32> -> tensor<?x6xi32>
  %8 = dl.cast %x : tensor<?x6xf32> -> tensor<?x6xi32>
  // CHECK: dl.broadcast_to %{{.*}} shape = [-1, 6] : tensor<?x1xf32> -> tensor<?x6xf32>
  %m = dl.reduce_mean %x axes = [1] keepdims : tensor<?x6xf32> -> tensor<?x1xf32>
  %9 = dl.broadcast_to %m shape = [-1, 6] : tensor<?x1xf32> -> tensor<?x6xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<?x6xf32>, tensor<?x6xi1>, tensor<?x6xf32>, tensor<?xi64>, tensor<?x3xf32>, tensor<?x12xf32>, tensor<?x8xf32>, tensor<?x2x6xf32>, tensor<?x6xi32>, tensor<?x6xf32>
}

// Any dimension may be dynamic; reshape, broadcast_to and slice take run-time
// sizes as `index` operands, one per -1 entry, and iota counts to one.
// CHECK-LABEL: func @dynamic_dims
func.func @dynamic_dims(%x: tensor<?x?x8xf32>, %ids: tensor<1x16xi64>) -> (tensor<?x2x?x4xf32>, tensor<?x?x?xf32>, tensor<1x?xi64>, tensor<?x?xi64>, tensor<?xi64>, tensor<?x8xf32>, tensor<?x1x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  // CHECK: dl.reshape %{{.*}} shape = [-1, -1, 2, 4] sizes(%{{.*}}, %{{.*}}) : tensor<?x?x8xf32> -> tensor<?x?x2x4xf32>
  %0 = dl.reshape %x shape = [-1, -1, 2, 4] sizes(%b, %s) : tensor<?x?x8xf32> -> tensor<?x?x2x4xf32>
  // CHECK: dl.transpose %{{.*}} perm = [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
  %1 = dl.transpose %0 perm = [0, 2, 1, 3] : tensor<?x?x2x4xf32> -> tensor<?x2x?x4xf32>
  %kt = dl.transpose %x perm = [0, 2, 1] : tensor<?x?x8xf32> -> tensor<?x8x?xf32>
  // CHECK: dl.matmul %{{.*}}, %{{.*}} : (tensor<?x?x8xf32>, tensor<?x8x?xf32>) -> tensor<?x?x?xf32>
  %2 = dl.matmul %x, %kt : (tensor<?x?x8xf32>, tensor<?x8x?xf32>) -> tensor<?x?x?xf32>
  // CHECK: dl.slice %{{.*}} starts = [0, 0] sizes = [1, -1] strides = [1, 1] dynamic_sizes(%{{.*}}) : tensor<1x16xi64> -> tensor<1x?xi64>
  %3 = dl.slice %ids starts = [0, 0] sizes = [1, -1] strides = [1, 1] dynamic_sizes(%s) : tensor<1x16xi64> -> tensor<1x?xi64>
  // CHECK: dl.broadcast_to %{{.*}} shape = [-1, -1] sizes(%{{.*}}) : tensor<1x?xi64> -> tensor<?x?xi64>
  %4 = dl.broadcast_to %3 shape = [-1, -1] sizes(%b, %s) : tensor<1x?xi64> -> tensor<?x?xi64>
  // CHECK: dl.iota %{{.*}} : tensor<?xi64>
  %5 = dl.iota %s : tensor<?xi64>
  // Without size operands a single -1 takes every dynamic factor.
  // CHECK: dl.reshape %{{.*}} shape = [-1, 8] : tensor<?x?x8xf32> -> tensor<?x8xf32>
  %6 = dl.reshape %x shape = [-1, 8] : tensor<?x?x8xf32> -> tensor<?x8xf32>
  // A static window of a dynamic dimension (the caller's promise that it is
  // long enough): x[:, 0:1].
  // CHECK: dl.slice %{{.*}} starts = [0, 0, 0] sizes = [-1, 1, 8] strides = [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x1x8xf32>
  %7 = dl.slice %x starts = [0, 0, 0] sizes = [-1, 1, 8] strides = [1, 1, 1] : tensor<?x?x8xf32> -> tensor<?x1x8xf32>
  return %1, %2, %3, %4, %5, %6, %7 : tensor<?x2x?x4xf32>, tensor<?x?x?xf32>, tensor<1x?xi64>, tensor<?x?xi64>, tensor<?xi64>, tensor<?x8xf32>, tensor<?x1x8xf32>
}

// Quantization: per tensor (rank-0 scale and zero point) and per axis.
// CHECK-LABEL: func @quantization
// CHECK: dl.quantize %{{.*}}, %{{.*}}, %{{.*}} axis = 1 : (tensor<?x8x4x4xf32>, tensor<8xf32>, tensor<8xi8>) -> tensor<?x8x4x4xi8>
// CHECK: dl.dequantize %{{.*}}, %{{.*}}, %{{.*}} axis = 1 : (tensor<?x8x4x4xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<?x8x4x4xf32>
// CHECK: dl.quantize %{{.*}}, %{{.*}}, %{{.*}} axis = 0 : (tensor<3xf16>, tensor<f16>, tensor<ui8>) -> tensor<3xui8>
// CHECK: dl.dequantize %{{.*}}, %{{.*}}, %{{.*}} axis = 0 : (tensor<3xi32>, tensor<bf16>, tensor<i32>) -> tensor<3xbf16>
func.func @quantization(%x: tensor<?x8x4x4xf32>, %s: tensor<8xf32>, %z: tensor<8xi8>,
                        %h: tensor<3xf16>, %hs: tensor<f16>, %uz: tensor<ui8>,
                        %acc: tensor<3xi32>, %bs: tensor<bf16>, %iz: tensor<i32>) {
  %q = dl.quantize %x, %s, %z axis = 1 : (tensor<?x8x4x4xf32>, tensor<8xf32>, tensor<8xi8>) -> tensor<?x8x4x4xi8>
  %d = dl.dequantize %q, %s, %z axis = 1 : (tensor<?x8x4x4xi8>, tensor<8xf32>, tensor<8xi8>) -> tensor<?x8x4x4xf32>
  %u = dl.quantize %h, %hs, %uz axis = 0 : (tensor<3xf16>, tensor<f16>, tensor<ui8>) -> tensor<3xui8>
  %b = dl.dequantize %acc, %bs, %iz axis = 0 : (tensor<3xi32>, tensor<bf16>, tensor<i32>) -> tensor<3xbf16>
  return
}

// CHECK-LABEL: func @matmul_integer
// CHECK: dl.matmul_integer %{{.*}}, %{{.*}} : (tensor<?x8xui8>, tensor<8x4xi8>) -> tensor<?x4xi32>
// CHECK: dl.matmul_integer %{{.*}}, %{{.*}} : (tensor<3x?x8xi8>, tensor<8x4xi8>) -> tensor<3x?x4xi32>
func.func @matmul_integer(%a: tensor<?x8xui8>, %w: tensor<8x4xi8>, %b: tensor<3x?x8xi8>) {
  %0 = dl.matmul_integer %a, %w : (tensor<?x8xui8>, tensor<8x4xi8>) -> tensor<?x4xi32>
  %1 = dl.matmul_integer %b, %w : (tensor<3x?x8xi8>, tensor<8x4xi8>) -> tensor<3x?x4xi32>
  return
}
