// RUN: %dlc-opt-py %s -p dl-simplify -p dl-raise-ops -p canonicalize | FileCheck %s

// GELU as the TorchScript exporter writes it (x / sqrt 2, Erf, + 1, * x,
// * 0.5) and with 1 / sqrt 2 as a product.
// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[A:.*]] = dl.gelu %[[X]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: %[[B:.*]] = dl.gelu %[[X]] : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @gelu_erf(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %sqrt2 = dl.constant dense<1.41421354> : tensor<f32>
  %inv = dl.constant dense<0.707106769> : tensor<f32>
  %one = dl.constant dense<1.0> : tensor<f32>
  %half = dl.constant dense<0.5> : tensor<f32>
  %0 = dl.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = dl.erf %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = dl.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = dl.mul %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = dl.mul %3, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %5 = dl.mul %inv, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = dl.erf %5 : tensor<4x8xf32> -> tensor<4x8xf32>
  %7 = dl.add %one, %6 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = dl.mul %half, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = dl.mul %8, %7 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4, %9 : tensor<4x8xf32>, tensor<4x8xf32>
}

// GPT-2's written-out tanh GELU: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x +
// 0.044715 * x^3))), and the factored form x * (1 + 0.044715 * x * x).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:.*]]: tensor<2x16xf32>)
// CHECK-NEXT: %[[A:.*]] = dl.gelu %[[X]] approximate_tanh : tensor<2x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[B:.*]] = dl.gelu %[[X]] approximate_tanh : tensor<2x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @gelu_tanh(%x: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  %half = dl.constant dense<0.5> : tensor<f32>
  %one = dl.constant dense<1.0> : tensor<f32>
  %three = dl.constant dense<3.0> : tensor<f32>
  %c = dl.constant dense<0.044715> : tensor<f32>
  %k = dl.constant dense<0.797884583> : tensor<f32>
  %0 = dl.mul %x, %half : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %1 = dl.pow %x, %three : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %2 = dl.mul %1, %c : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %3 = dl.add %x, %2 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %4 = dl.mul %3, %k : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %5 = dl.tanh %4 : tensor<2x16xf32> -> tensor<2x16xf32>
  %6 = dl.add %5, %one : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %7 = dl.mul %0, %6 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %8 = dl.mul %x, %x : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %9 = dl.mul %c, %8 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %10 = dl.add %one, %9 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %11 = dl.mul %x, %k : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %12 = dl.mul %11, %10 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %13 = dl.tanh %12 : tensor<2x16xf32> -> tensor<2x16xf32>
  %14 = dl.add %13, %one : (tensor<2x16xf32>, tensor<f32>) -> tensor<2x16xf32>
  %15 = dl.mul %14, %0 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %7, %15 : tensor<2x16xf32>, tensor<2x16xf32>
}

// x * sigmoid(x) is SiLU; hard-swish as PyTorch's decomposition writes it
// (x * clamp(x + 3, 0, 6) / 6) and as ONNX's HardSigmoid gate (x *
// clip(x / 6 + 0.5, 0, 1)).
// CHECK-LABEL: func.func @silu_and_hardswish
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x4x4xf32>)
// CHECK-NEXT: %[[S:.*]] = dl.silu %[[X]]
// CHECK-NEXT: %[[H1:.*]] = dl.hardswish %[[X]]
// CHECK-NEXT: %[[H2:.*]] = dl.hardswish %[[X]]
// CHECK-NEXT: return %[[S]], %[[H1]], %[[H2]]
func.func @silu_and_hardswish(%x: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) {
  %zero = dl.constant dense<0.0> : tensor<f32>
  %one = dl.constant dense<1.0> : tensor<f32>
  %three = dl.constant dense<3.0> : tensor<f32>
  %six = dl.constant dense<6.0> : tensor<f32>
  %sixth = dl.constant dense<0.166666672> : tensor<f32>
  %half = dl.constant dense<0.5> : tensor<f32>
  %0 = dl.sigmoid %x : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  %1 = dl.mul %0, %x : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %2 = dl.add %x, %three : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %3 = dl.maximum %2, %zero : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %4 = dl.minimum %3, %six : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %5 = dl.mul %x, %4 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %6 = dl.div %5, %six : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %7 = dl.mul %x, %sixth : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %8 = dl.add %7, %half : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %9 = dl.maximum %8, %zero : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %10 = dl.minimum %9, %one : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %11 = dl.mul %x, %10 : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %1, %6, %11 : tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>
}

// Layer norm as ONNX exporters before opset 17 write it (ReduceMean, Sub,
// Pow 2, ReduceMean, Add eps, Sqrt, Div, then the scale and bias), and with
// rsqrt: one dl.layer_norm whose scale and bias take the affine part.
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>, %[[G:.*]]: tensor<8xf32>)
// CHECK-DAG: %[[ONES:.*]] = dl.constant dense<1.000000e+00> : tensor<5x8xf32>
// CHECK-DAG: %[[ZEROS:.*]] = dl.constant dense<0.000000e+00> : tensor<5x8xf32>
// CHECK-DAG: %[[BIAS:.*]] = dl.constant dense<2.500000e-01> : tensor<8xf32>
// CHECK-DAG: %[[A:.*]] = dl.layer_norm %[[X]], %[[G]], %[[BIAS]] axis = 2 epsilon = 9.99999974{{[0-9]*}}E-6
// CHECK-DAG: %[[B:.*]] = dl.layer_norm %[[X]], %[[ONES]], %[[ZEROS]] axis = 1 epsilon = 9.99999997{{[0-9]*}}E-7
// CHECK-NOT: dl.reduce_mean
// CHECK: return %[[A]], %[[B]]
func.func @layer_norm(%x: tensor<2x5x8xf32>, %g: tensor<8xf32>) -> (tensor<2x5x8xf32>, tensor<2x5x8xf32>) {
  %m = dl.reduce_mean %x axes = [2] keepdims : tensor<2x5x8xf32> -> tensor<2x5x1xf32>
  %d = dl.sub %x, %m : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %two = dl.constant dense<2.0> : tensor<f32>
  %sq = dl.pow %d, %two : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5x8xf32>
  %v = dl.reduce_mean %sq axes = [2] keepdims : tensor<2x5x8xf32> -> tensor<2x5x1xf32>
  %eps = dl.constant dense<1.0e-5> : tensor<f32>
  %ve = dl.add %v, %eps : (tensor<2x5x1xf32>, tensor<f32>) -> tensor<2x5x1xf32>
  %s = dl.sqrt %ve : tensor<2x5x1xf32> -> tensor<2x5x1xf32>
  %n = dl.div %d, %s : (tensor<2x5x8xf32>, tensor<2x5x1xf32>) -> tensor<2x5x8xf32>
  %y = dl.mul %n, %g : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %b = dl.constant dense<0.25> : tensor<1x1x8xf32>
  %z = dl.add %y, %b : (tensor<2x5x8xf32>, tensor<1x1x8xf32>) -> tensor<2x5x8xf32>
  %m2 = dl.reduce_mean %x axes = [1, 2] keepdims : tensor<2x5x8xf32> -> tensor<2x1x1xf32>
  %d2 = dl.sub %x, %m2 : (tensor<2x5x8xf32>, tensor<2x1x1xf32>) -> tensor<2x5x8xf32>
  %sq2 = dl.mul %d2, %d2 : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %v2 = dl.reduce_mean %sq2 axes = [1, 2] keepdims : tensor<2x5x8xf32> -> tensor<2x1x1xf32>
  %eps2 = dl.constant dense<1.0e-6> : tensor<f32>
  %ve2 = dl.add %eps2, %v2 : (tensor<f32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %r2 = dl.rsqrt %ve2 : tensor<2x1x1xf32> -> tensor<2x1x1xf32>
  %n2 = dl.mul %r2, %d2 : (tensor<2x1x1xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  return %z, %n2 : tensor<2x5x8xf32>, tensor<2x5x8xf32>
}

// Refused: another constant than GELU's (0.6), a sigmoid of another value,
// a hard-sigmoid gate of slope 1/5 (ONNX's default, not hard-swish's), and
// a product that broadcasts x * sigmoid(x) to a larger shape (only its
// [4, 1] part is a SiLU).
// CHECK-LABEL: func.func @refused_activations
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>, %[[R:.*]]: tensor<4x1xf32>)
// CHECK-NOT: dl.gelu
// CHECK-NOT: dl.hardswish
// CHECK: dl.erf
// CHECK: %[[SIG:.*]] = dl.sigmoid %[[Y]]
// CHECK: dl.mul %[[X]], %[[SIG]]
// CHECK: dl.minimum
// CHECK: %[[S:.*]] = dl.silu %[[R]] : tensor<4x1xf32>
// CHECK-NEXT: dl.mul %[[S]], %[[Y]] : (tensor<4x1xf32>, tensor<4x8xf32>)
// CHECK-NEXT: return
func.func @refused_activations(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %r: tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %sqrt2 = dl.constant dense<1.41421354> : tensor<f32>
  %one = dl.constant dense<1.0> : tensor<f32>
  %zero = dl.constant dense<0.0> : tensor<f32>
  %c = dl.constant dense<0.6> : tensor<f32>
  %fifth = dl.constant dense<0.2> : tensor<f32>
  %half = dl.constant dense<0.5> : tensor<f32>
  %0 = dl.div %x, %sqrt2 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = dl.erf %0 : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = dl.add %1, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = dl.mul %x, %2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = dl.mul %3, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %5 = dl.sigmoid %y : tensor<4x8xf32> -> tensor<4x8xf32>
  %6 = dl.mul %x, %5 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = dl.mul %x, %fifth : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %8 = dl.add %7, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %9 = dl.maximum %8, %zero : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %10 = dl.minimum %9, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %11 = dl.mul %x, %10 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %12 = dl.sigmoid %r : tensor<4x1xf32> -> tensor<4x1xf32>
  %13 = dl.mul %12, %r : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %14 = dl.mul %13, %y : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4, %6, %11, %14 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// Refused: normalization over a leading axis (ConvNeXt's channels-first
// LayerNorm: axis 1 of [N, C, H, W] is not a trailing range), a variance
// of another centering, and a scale along the rows (not the normalized
// dimension) after a raised layer norm.
// CHECK-LABEL: func.func @refused_layer_norms
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x3x3xf32>, %[[Y:.*]]: tensor<2x8xf32>, %[[R:.*]]: tensor<2x1xf32>)
// CHECK: dl.reduce_mean %[[X]] axes = [1]
// CHECK: %[[S:.*]] = dl.sqrt
// CHECK: dl.div %{{.*}}, %[[S]] : (tensor<2x4x3x3xf32>
// CHECK: dl.reduce_mean %[[Y]] axes = [1]
// CHECK: %[[S2:.*]] = dl.sqrt
// CHECK: %[[LN:.*]] = dl.layer_norm %[[Y]]
// CHECK-NEXT: dl.mul %[[LN]], %[[R]]
// CHECK-NEXT: %[[D3:.*]] = dl.sub %[[Y]], %[[R]]
// CHECK-NEXT: dl.div %[[D3]], %[[S2]]
// CHECK-NEXT: return
func.func @refused_layer_norms(%x: tensor<2x4x3x3xf32>, %y: tensor<2x8xf32>, %r: tensor<2x1xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %eps = dl.constant dense<1.0e-6> : tensor<f32>
  %m = dl.reduce_mean %x axes = [1] keepdims : tensor<2x4x3x3xf32> -> tensor<2x1x3x3xf32>
  %d = dl.sub %x, %m : (tensor<2x4x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x4x3x3xf32>
  %sq = dl.mul %d, %d : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %v = dl.reduce_mean %sq axes = [1] keepdims : tensor<2x4x3x3xf32> -> tensor<2x1x3x3xf32>
  %ve = dl.add %v, %eps : (tensor<2x1x3x3xf32>, tensor<f32>) -> tensor<2x1x3x3xf32>
  %s = dl.sqrt %ve : tensor<2x1x3x3xf32> -> tensor<2x1x3x3xf32>
  %n = dl.div %d, %s : (tensor<2x4x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x4x3x3xf32>
  %m2 = dl.reduce_mean %y axes = [1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %d2 = dl.sub %y, %m2 : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %sq2 = dl.mul %d2, %d2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %v2 = dl.reduce_mean %sq2 axes = [1] keepdims : tensor<2x8xf32> -> tensor<2x1xf32>
  %ve2 = dl.add %v2, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %s2 = dl.sqrt %ve2 : tensor<2x1xf32> -> tensor<2x1xf32>
  %n2 = dl.div %d2, %s2 : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %scaled = dl.mul %n2, %r : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %d3 = dl.sub %y, %r : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %n3 = dl.div %d3, %s2 : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  return %n, %scaled, %n3 : tensor<2x4x3x3xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// The attention's safe softmax, where(isnan(softmax(s)), 0, softmax(s)),
// needs no guard where no row of s can be all -inf: scores of finite
// arguments, or plus a constant causal mask (every row keeps its diagonal).
// CHECK-LABEL: func.func @softmax_guards_dropped
// CHECK-NOT: dl.isnan
// CHECK-NOT: dl.where
// CHECK: return
func.func @softmax_guards_dropped(%q: tensor<2x3x4xf32>, %k: tensor<2x4x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3x3xf32>) {
  %zero = dl.constant dense<0.0> : tensor<f32>
  %s = dl.matmul %q, %k : (tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x3x3xf32>
  %p = dl.softmax %s axis = 2 : tensor<2x3x3xf32> -> tensor<2x3x3xf32>
  %n = dl.isnan %p : tensor<2x3x3xf32> -> tensor<2x3x3xi1>
  %a = dl.where %n, %zero, %p : (tensor<2x3x3xi1>, tensor<f32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %causal = dl.constant dense<[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %m = dl.add %s, %causal : (tensor<2x3x3xf32>, tensor<3x3xf32>) -> tensor<2x3x3xf32>
  %p2 = dl.softmax %m axis = 2 : tensor<2x3x3xf32> -> tensor<2x3x3xf32>
  %n2 = dl.isnan %p2 : tensor<2x3x3xf32> -> tensor<2x3x3xi1>
  %b = dl.where %n2, %zero, %p2 : (tensor<2x3x3xi1>, tensor<f32>, tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %a, %b : tensor<2x3x3xf32>, tensor<2x3x3xf32>
}

// Kept: a mask of run-time bools (a row may be all masked), a constant
// mask with a row of only -inf, a guard along the other axis.
// CHECK-LABEL: func.func @softmax_guards_kept
// CHECK-COUNT-3: dl.isnan
// CHECK: return
func.func @softmax_guards_kept(%s: tensor<3x3xf32>, %keep: tensor<3x3xi1>) -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>) {
  %zero = dl.constant dense<0.0> : tensor<f32>
  %ninf = dl.constant dense<0xFF800000> : tensor<f32>
  %bias = dl.where %keep, %zero, %ninf : (tensor<3x3xi1>, tensor<f32>, tensor<f32>) -> tensor<3x3xf32>
  %m = dl.add %s, %bias : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %p = dl.softmax %m axis = 1 : tensor<3x3xf32> -> tensor<3x3xf32>
  %n = dl.isnan %p : tensor<3x3xf32> -> tensor<3x3xi1>
  %a = dl.where %n, %zero, %p : (tensor<3x3xi1>, tensor<f32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %rowmask = dl.constant dense<[[0.0, 0.0, 0.0], [0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %m2 = dl.add %s, %rowmask : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %p2 = dl.softmax %m2 axis = 1 : tensor<3x3xf32> -> tensor<3x3xf32>
  %n2 = dl.isnan %p2 : tensor<3x3xf32> -> tensor<3x3xi1>
  %b = dl.where %n2, %zero, %p2 : (tensor<3x3xi1>, tensor<f32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %colmask = dl.constant dense<[[0.0, 0xFF800000, 0.0], [0.0, 0xFF800000, 0.0], [0.0, 0xFF800000, 0.0]]> : tensor<3x3xf32>
  %m3 = dl.add %s, %colmask : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %p3 = dl.softmax %m3 axis = 0 : tensor<3x3xf32> -> tensor<3x3xf32>
  %n3 = dl.isnan %p3 : tensor<3x3xf32> -> tensor<3x3xi1>
  %c = dl.where %n3, %zero, %p3 : (tensor<3x3xi1>, tensor<f32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  return %a, %b, %c : tensor<3x3xf32>, tensor<3x3xf32>, tensor<3x3xf32>
}
