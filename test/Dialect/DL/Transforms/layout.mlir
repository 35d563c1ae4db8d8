// RUN: dl-opt %s --dl-layout=report=true --split-input-file --verify-diagnostics | FileCheck %s

// A ResNet basic block in NCHW: both convolutions and the pooling run in
// NHWC; the conversions between them cancel through relu, the residual add
// and the bias add (its [C,1,1] constant is reshaped and transposed, and
// folds); one conversion is left at the input and one at the output.
// CHECK-LABEL: func.func @block
// CHECK-SAME: dl.layout_conversions = 2
// CHECK: %[[IN:.*]] = dl.transpose %arg0 perm = [0, 2, 3, 1] {dl.layout_conversion}
// CHECK: %[[C1:.*]] = dl.conv2d %[[IN]], %{{.*}} layout = "NHWC" {{.*}} -> tensor<1x8x8x16xf32>
// CHECK: %[[R1:.*]] = dl.relu %[[C1]] : tensor<1x8x8x16xf32>
// CHECK: %[[C2:.*]] = dl.conv2d %[[R1]], %{{.*}} layout = "NHWC"
// CHECK: %[[B:.*]] = dl.add %[[C2]], %{{.*}} : (tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32>)
// CHECK: %[[S:.*]] = dl.add %[[B]], %[[IN]] : (tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>)
// CHECK: %[[R2:.*]] = dl.relu %[[S]]
// CHECK: %[[P:.*]] = dl.max_pool2d %[[R2]] {{.*}} layout = "NHWC" {{.*}} -> tensor<1x4x4x16xf32>
// CHECK: %[[OUT:.*]] = dl.transpose %[[P]] perm = [0, 3, 1, 2] {dl.layout_conversion}
// CHECK: return %[[OUT]] : tensor<1x16x4x4xf32>
// expected-remark @below {{dl-layout: 3 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @block(%x: tensor<1x16x8x8xf32>, %w1: tensor<16x16x3x3xf32>, %w2: tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %bias = dl.constant dense<0.5> : tensor<16x1x1xf32>
  %c1 = dl.conv2d %x, %w1 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r1 = dl.relu %c1 : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  %c2 = dl.conv2d %r1, %w2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %b = dl.add %c2, %bias : (tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %s = dl.add %b, %x : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %r2 = dl.relu %s : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  %p = dl.max_pool2d %r2 kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] layout = "NCHW" : tensor<1x16x8x8xf32> -> tensor<1x16x4x4xf32>
  return %p : tensor<1x16x4x4xf32>
}

// -----

// Left alone: NHWC already, and ops conversions do not cross (a reshape
// that flattens C, H and W) keep their conversion.
// CHECK-LABEL: func.func @stops
// CHECK-SAME: dl.layout_conversions = 2
// CHECK: dl.conv2d {{.*}} layout = "NHWC" {{.*}} -> tensor<2x5x5x4xf32>
// CHECK: dl.transpose {{.*}} perm = [0, 3, 1, 2] {dl.layout_conversion}
// CHECK: dl.reshape
// expected-remark @below {{dl-layout: 1 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @stops(%x: tensor<2x3x5x5xf32>, %w: tensor<4x3x1x1xf32>, %y: tensor<2x5x5x3xf32>, %v: tensor<1x1x3x4xf32>) -> (tensor<2x100xf32>, tensor<2x5x5x4xf32>) {
  %c = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<2x3x5x5xf32>, tensor<4x3x1x1xf32>) -> tensor<2x4x5x5xf32>
  %r = dl.reshape %c shape = [2, 100] : tensor<2x4x5x5xf32> -> tensor<2x100xf32>
  %n = dl.conv2d %y, %v strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<2x5x5x3xf32>, tensor<1x1x3x4xf32>) -> tensor<2x5x5x4xf32>
  return %r, %n : tensor<2x100xf32>, tensor<2x5x5x4xf32>
}

// -----

// Reductions: the conversion sinks through them, the axes following their
// dimensions. A mean over H and W with keepdims (a squeeze-and-excitation
// block) reads the NHWC activation (axes [1, 2]) and its [2,1,1,4] result is
// converted instead; the global pool without keepdims leaves [N, C] in
// either layout (no conversion at all); a sum over the channels (axis 3 in
// NHWC) leaves [N, H, W] in the order T gave them.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: dl.layout_conversions = 2
// CHECK: %[[C:.*]] = dl.conv2d {{.*}} layout = "NHWC" {{.*}} -> tensor<2x5x5x4xf32>
// CHECK-DAG: %[[M:.*]] = dl.reduce_mean %[[C]] axes = [1, 2] keepdims : tensor<2x5x5x4xf32> -> tensor<2x1x1x4xf32>
// CHECK-DAG: dl.transpose %[[M]] perm = [0, 3, 1, 2] {dl.layout_conversion} : tensor<2x1x1x4xf32> -> tensor<2x4x1x1xf32>
// CHECK-DAG: %[[P:.*]] = dl.reduce_max %[[C]] axes = [1, 2] : tensor<2x5x5x4xf32> -> tensor<2x4xf32>
// CHECK-DAG: %[[S:.*]] = dl.reduce_sum %[[C]] axes = [3] : tensor<2x5x5x4xf32> -> tensor<2x5x5xf32>
// CHECK: return {{.*}}, %[[P]], %[[S]]
// expected-remark @below {{dl-layout: 1 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @reductions(%x: tensor<2x3x5x5xf32>, %w: tensor<4x3x1x1xf32>) -> (tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x5x5xf32>) {
  %c = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<2x3x5x5xf32>, tensor<4x3x1x1xf32>) -> tensor<2x4x5x5xf32>
  %m = dl.reduce_mean %c axes = [2, 3] keepdims : tensor<2x4x5x5xf32> -> tensor<2x4x1x1xf32>
  %p = dl.reduce_max %c axes = [2, 3] : tensor<2x4x5x5xf32> -> tensor<2x4xf32>
  %s = dl.reduce_sum %c axes = [1] : tensor<2x4x5x5xf32> -> tensor<2x5x5xf32>
  return %m, %p, %s : tensor<2x4x1x1xf32>, tensor<2x4xf32>, tensor<2x5x5xf32>
}

// -----

// A bias that is an argument, not a constant: per channel ([1,C,1,1]), it
// moves to NHWC as a reshape ([1,1,1,C], the same element order: a view,
// no copy) and the conversion sinks past the add. A full-size argument
// would need a transpose of its own: the conversion stays before the add.
// CHECK-LABEL: func.func @argument_bias
// CHECK-SAME: dl.layout_conversions = 2
// CHECK: %[[C:.*]] = dl.conv2d {{.*}} layout = "NHWC"
// CHECK: %[[B:.*]] = dl.reshape %arg2 shape = [1, 1, 1, 8] : tensor<1x8x1x1xf32> -> tensor<1x1x1x8xf32>
// CHECK: %[[A:.*]] = dl.add %[[C]], %[[B]] : (tensor<1x6x6x8xf32>, tensor<1x1x1x8xf32>)
// CHECK: %[[R:.*]] = dl.relu %[[A]]
// CHECK: %[[T:.*]] = dl.transpose %[[R]] perm = [0, 3, 1, 2] {dl.layout_conversion}
// CHECK: dl.add %[[T]], %arg3 : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>)
// expected-remark @below {{dl-layout: 1 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @argument_bias(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %bias: tensor<1x8x1x1xf32>, %y: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %c = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %b = dl.add %c, %bias : (tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %r = dl.relu %b : tensor<1x8x6x6xf32> -> tensor<1x8x6x6xf32>
  %s = dl.add %r, %y : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %s : tensor<1x8x6x6xf32>
}

// -----

// Squeeze-and-excitation: the gate s is [1,4,1,1] and comes out of a 1x1
// convolution (so it is converted too); when the conversions sink through
// y * s the new mul has the result's shape in NHWC, [1,6,6,4], not the
// converted operand's [1,1,1,4] (that mismatch made the transpose folder
// abort the process: "incorrect fold result type").
// CHECK-LABEL: func @squeeze_excite
// CHECK: %[[Y:.*]] = dl.conv2d {{.*}} layout = "NHWC" : (tensor<1x6x6x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK: %[[S:.*]] = dl.conv2d {{.*}} layout = "NHWC" : (tensor<1x1x1x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x1x4xf32>
// CHECK: dl.mul %[[Y]], %[[S]] : (tensor<1x6x6x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x6x6x4xf32>
// expected-remark @+1 {{dl-layout: 2 convolution/pooling op(s) in NHWC}}
func.func @squeeze_excite(%x: tensor<1x4x6x6xf32>, %w: tensor<4x4x1x1xf32>, %v: tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %y = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %m = dl.reduce_mean %y axes = [2, 3] keepdims : tensor<1x4x6x6xf32> -> tensor<1x4x1x1xf32>
  %s = dl.conv2d %m, %v strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x4x1x1xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %r = dl.mul %y, %s : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

// A quantized chain (QDQ between the convolutions, as onnxruntime's
// quantizer writes it): the conversions sink through dl.quantize and
// dl.dequantize, a per-channel scale's axis following its dimension (C is
// axis 1 in NCHW, 3 in NHWC); only the input's and the output's remain.
// CHECK-LABEL: func.func @quantized_chain
// CHECK-SAME: dl.layout_conversions = 2
// CHECK: dl.conv2d {{.*}} layout = "NHWC"
// CHECK: %[[Q:.*]] = dl.quantize %{{.*}}, %{{.*}}, %{{.*}} axis = 3 : (tensor<1x8x8x16xf32>, tensor<16xf32>, tensor<16xi8>) -> tensor<1x8x8x16xi8>
// CHECK: %[[D:.*]] = dl.dequantize %[[Q]], %{{.*}}, %{{.*}} axis = 0 : (tensor<1x8x8x16xi8>, tensor<f32>, tensor<i8>) -> tensor<1x8x8x16xf32>
// CHECK: dl.conv2d %[[D]], {{.*}} layout = "NHWC"
// CHECK: dl.transpose %{{.*}} perm = [0, 3, 1, 2] {dl.layout_conversion}
// expected-remark @below {{dl-layout: 2 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @quantized_chain(%x: tensor<1x16x8x8xf32>, %w1: tensor<16x16x3x3xf32>, %w2: tensor<16x16x3x3xf32>,
                           %s: tensor<16xf32>, %z: tensor<16xi8>, %t: tensor<f32>, %u: tensor<i8>) -> tensor<1x16x8x8xf32> {
  %c1 = dl.conv2d %x, %w1 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  %q = dl.quantize %c1, %s, %z axis = 1 : (tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xi8>) -> tensor<1x16x8x8xi8>
  %d = dl.dequantize %q, %t, %u axis = 0 : (tensor<1x16x8x8xi8>, tensor<f32>, tensor<i8>) -> tensor<1x16x8x8xf32>
  %c2 = dl.conv2d %d, %w2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  return %c2 : tensor<1x16x8x8xf32>
}

// -----

// Conversions a frontend marked (the ONNX importer's integer convolutions
// compute in NHWC between two of them) sink and cancel in a function with no
// NCHW convolution: the i32 result's NHWC -> NCHW conversion goes down
// through the cast, the per-channel scale and the quantize, and meets the
// next convolution's NCHW -> NHWC one. An unmarked transpose (the user's)
// stays where it is.
// CHECK-LABEL: func.func @marked_conversions
// CHECK-SAME: dl.layout_conversions = 0
// CHECK: %[[C:.*]] = dl.cast %arg0 : tensor<1x4x4x8xi32> -> tensor<1x4x4x8xf32>
// CHECK: %[[M:.*]] = dl.mul %[[C]], %{{.*}} : (tensor<1x4x4x8xf32>, tensor<1x1x1x8xf32>)
// CHECK: %[[Q:.*]] = dl.quantize %[[M]]
// CHECK-NOT: dl.transpose
// CHECK: return %[[Q]] : tensor<1x4x4x8xi8>
// CHECK-LABEL: func.func @unmarked_transpose
// CHECK: dl.transpose
// CHECK: dl.transpose
// expected-remark@+1 {{dl-layout: 0 convolution/pooling op(s) in NHWC, 0 layout conversion(s) left}}
func.func @marked_conversions(%acc: tensor<1x4x4x8xi32>) -> tensor<1x4x4x8xi8> {
  %t = dl.transpose %acc perm = [0, 3, 1, 2] {dl.layout_conversion} : tensor<1x4x4x8xi32> -> tensor<1x8x4x4xi32>
  %f = dl.cast %t : tensor<1x8x4x4xi32> -> tensor<1x8x4x4xf32>
  %s = dl.constant dense<[[[0.5]], [[0.25]], [[1.0]], [[2.0]], [[0.5]], [[0.25]], [[1.0]], [[2.0]]]> : tensor<8x1x1xf32>
  %m = dl.mul %f, %s : (tensor<1x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<1x8x4x4xf32>
  %scale = dl.constant dense<0.1> : tensor<f32>
  %zero = dl.constant dense<0> : tensor<i8>
  %q = dl.quantize %m, %scale, %zero axis = 0 : (tensor<1x8x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x4x4xi8>
  %back = dl.transpose %q perm = [0, 2, 3, 1] {dl.layout_conversion} : tensor<1x8x4x4xi8> -> tensor<1x4x4x8xi8>
  return %back : tensor<1x4x4x8xi8>
}
func.func @unmarked_transpose(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %t = dl.transpose %x perm = [0, 3, 1, 2] : tensor<1x4x4x8xf32> -> tensor<1x8x4x4xf32>
  %r = dl.relu %t : tensor<1x8x4x4xf32> -> tensor<1x8x4x4xf32>
  %b = dl.transpose %r perm = [0, 2, 3, 1] : tensor<1x8x4x4xf32> -> tensor<1x4x4x8xf32>
  return %b : tensor<1x4x4x8xf32>
}

// -----

// Two layers of a DenseNet block: each concatenates the block's input (a
// pooling's output) and every earlier layer's output, normalizes the
// concatenation (a batch norm no convolution can absorb) and convolves it.
// The concatenations and batch norms run in NHWC (channels: axis 3, the
// statistics along them); one conversion is left at each end.
// CHECK-LABEL: func.func @dense_block
// CHECK-SAME: dl.layout_conversions = 2
// CHECK: %[[IN:.*]] = dl.transpose %arg0 perm = [0, 2, 3, 1] {dl.layout_conversion}
// CHECK: %[[P:.*]] = dl.max_pool2d %[[IN]] {{.*}} layout = "NHWC"
// CHECK: %[[F1:.*]] = dl.conv2d %[[P]], {{.*}} layout = "NHWC" {{.*}} -> tensor<1x4x4x4xf32>
// CHECK: %[[CAT1:.*]] = dl.concat %[[P]], %[[F1]] axis = 3 {{.*}} -> tensor<1x4x4x12xf32>
// CHECK: %[[N:.*]] = dl.batch_norm %[[CAT1]], {{.*}} axis = 3 {{.*}} -> tensor<1x4x4x12xf32>
// CHECK: %[[R:.*]] = dl.relu %[[N]]
// CHECK: %[[F2:.*]] = dl.conv2d %[[R]], {{.*}} layout = "NHWC" {{.*}} -> tensor<1x4x4x4xf32>
// CHECK: %[[CAT2:.*]] = dl.concat %[[P]], %[[F1]], %[[F2]] axis = 3 {{.*}} -> tensor<1x4x4x16xf32>
// CHECK: %[[OUT:.*]] = dl.transpose %[[CAT2]] perm = [0, 3, 1, 2] {dl.layout_conversion}
// CHECK: return %[[OUT]] : tensor<1x16x4x4xf32>
// expected-remark @below {{dl-layout: 3 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @dense_block(%x: tensor<1x8x8x8xf32>, %w1: tensor<4x8x3x3xf32>, %w2: tensor<4x12x3x3xf32>, %s: tensor<12xf32>) -> tensor<1x16x4x4xf32> {
  %p = dl.max_pool2d %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] layout = "NCHW" : tensor<1x8x8x8xf32> -> tensor<1x8x4x4xf32>
  %f1 = dl.conv2d %p, %w1 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x8x4x4xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x4x4xf32>
  %cat1 = dl.concat %p, %f1 axis = 1 : (tensor<1x8x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x12x4x4xf32>
  %n = dl.batch_norm %cat1, %s, %s, %s, %s epsilon = 1.0e-05 axis = 1 : (tensor<1x12x4x4xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>) -> tensor<1x12x4x4xf32>
  %r = dl.relu %n : tensor<1x12x4x4xf32> -> tensor<1x12x4x4xf32>
  %f2 = dl.conv2d %r, %w2 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x12x4x4xf32>, tensor<4x12x3x3xf32>) -> tensor<1x4x4x4xf32>
  %cat2 = dl.concat %p, %f1, %f2 axis = 1 : (tensor<1x8x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x16x4x4xf32>
  return %cat2 : tensor<1x16x4x4xf32>
}

// -----

// Kept: a concatenation with an operand that is not converted (an argument
// in NCHW), and one whose converted operand also feeds an op conversions do
// not cross (the reshape: moving the concatenation would add a conversion
// of its result while the operand's stays for the reshape).
// CHECK-LABEL: func.func @concat_kept
// CHECK: %[[C:.*]] = dl.conv2d {{.*}} layout = "NHWC"
// CHECK: %[[T:.*]] = dl.transpose %[[C]] perm = [0, 3, 1, 2] {dl.layout_conversion}
// CHECK: dl.concat %[[T]], %arg2 axis = 1 {{.*}} -> tensor<1x12x8x8xf32>
// CHECK: dl.concat %[[T]], %[[T]] axis = 1 {{.*}} -> tensor<1x8x8x8xf32>
// CHECK: dl.reshape %[[T]]
// expected-remark @below {{dl-layout: 1 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @concat_kept(%x: tensor<1x8x8x8xf32>, %w: tensor<4x8x3x3xf32>, %y: tensor<1x8x8x8xf32>) -> (tensor<1x12x8x8xf32>, tensor<1x8x8x8xf32>, tensor<1x256xf32>) {
  %f = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x8x8x8xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x8x8xf32>
  %a = dl.concat %f, %y axis = 1 : (tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x12x8x8xf32>
  %b = dl.concat %f, %f axis = 1 : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32>
  %flat = dl.reshape %f shape = [1, 256] : tensor<1x4x8x8xf32> -> tensor<1x256xf32>
  return %a, %b, %flat : tensor<1x12x8x8xf32>, tensor<1x8x8x8xf32>, tensor<1x256xf32>
}
