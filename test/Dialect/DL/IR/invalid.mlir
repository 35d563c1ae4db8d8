// RUN: dl-opt %s -split-input-file -verify-diagnostics

// Every verifier error of the dl dialect. Shape and attribute errors come from
// result-type inference, which InferTypeOpInterface's verifier follows with
// "failed to infer returned types". Any dimension may be dynamic (ops.mlir).

func.func @reshape_sizes_count(%a: tensor<?x?x6xf32>, %n: index) {
  // expected-error @+2 {{'dl.reshape' op expects one size operand per -1 in the new shape [-1, -1, 2, 3] (2), but got 1}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [-1, -1, 2, 3] sizes(%n) : tensor<?x?x6xf32> -> tensor<?x?x2x3xf32>
  return
}

// -----

func.func @bool_arithmetic(%a: tensor<4xi1>) {
  // expected-error @+1 {{'dl.add' op operand #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32 or ui64 values}}
  %0 = dl.add %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @exp_of_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{'dl.exp' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values}}
  %0 = dl.exp %a : tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

// Signed (si8) and 4-bit integers are not dl element types; unsigned ones are.
func.func @unsupported_element(%a: tensor<4xsi8>) {
  // expected-error @+1 {{'dl.relu' op operand #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32 or ui64 values}}
  %0 = dl.relu %a : tensor<4xsi8> -> tensor<4xsi8>
  return
}

// -----

func.func @wrong_result_type(%a: tensor<4xf32>) {
  // expected-error @+2 {{'dl.relu' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<5xf32>'}}
  // expected-error @+1 {{'dl.relu' op failed to infer returned types}}
  %0 = dl.relu %a : tensor<4xf32> -> tensor<5xf32>
  return
}

// -----

func.func @constant_not_tensor() {
  // expected-error @+2 {{'dl.constant' op expects a statically shaped tensor value, but got 'vector<4xf32>'}}
  // expected-error @+1 {{'dl.constant' op failed to infer returned types}}
  %0 = "dl.constant"() {value = dense<1.0> : vector<4xf32>} : () -> tensor<4xf32>
  return
}

// -----

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{'dl.add' op operands are not broadcast-compatible: dimension -1 is 3 in lhs 'tensor<2x3xf32>' and 4 in rhs 'tensor<4xf32>'}}
  // expected-error @+1 {{'dl.add' op failed to infer returned types}}
  %0 = dl.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @broadcast_dynamic_against_static(%a: tensor<?x3xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+2 {{'dl.sub' op operands are not broadcast-compatible: dimension -2 is dynamic in lhs 'tensor<?x3xf32>' and 5 in rhs 'tensor<5x3xf32>'; a dynamic dimension broadcasts only with a dynamic one or 1}}
  // expected-error @+1 {{'dl.sub' op failed to infer returned types}}
  %0 = dl.sub %a, %b : (tensor<?x3xf32>, tensor<5x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @broadcast_dynamic_to_static(%a: tensor<2x?xf32>) {
  // expected-error @+2 {{'dl.broadcast_to' op cannot broadcast 'tensor<2x?xf32>' to [2, 4]: dimension 1 is dynamic; keep it with -1}}
  // expected-error @+1 {{'dl.broadcast_to' op failed to infer returned types}}
  %0 = dl.broadcast_to %a shape = [2, 4] : tensor<2x?xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+2 {{'dl.div' op expects operands of the same element type, but got lhs 'tensor<3xf32>' and rhs 'tensor<3xf16>'}}
  // expected-error @+1 {{'dl.div' op failed to infer returned types}}
  %0 = dl.div %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<4xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+2 {{'dl.matmul' op expects operands of rank 2 or more, but got lhs 'tensor<4xf32>' and rhs 'tensor<4x3xf32>'}}
  // expected-error @+1 {{'dl.matmul' op failed to infer returned types}}
  %0 = dl.matmul %a, %b : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{'dl.matmul' op contraction dimensions differ: lhs 'tensor<2x3xf32>' has K = 3 but rhs 'tensor<4x5xf32>' has K = 4}}
  // expected-error @+1 {{'dl.matmul' op failed to infer returned types}}
  %0 = dl.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<2x3xf32>, %b: tensor<3x5xi32>) {
  // expected-error @+2 {{'dl.matmul' op expects operands of the same element type, but got lhs 'tensor<2x3xf32>' and rhs 'tensor<3x5xi32>'}}
  // expected-error @+1 {{'dl.matmul' op failed to infer returned types}}
  %0 = dl.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xi32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<4x3x5xf32>) {
  // expected-error @+2 {{'dl.matmul' op batch dimensions are not broadcast-compatible: dimension -1 is 2 in lhs 'tensor<2x2x3xf32>' and 4 in rhs 'tensor<4x3x5xf32>'}}
  // expected-error @+1 {{'dl.matmul' op failed to infer returned types}}
  %0 = dl.matmul %a, %b : (tensor<2x2x3xf32>, tensor<4x3x5xf32>) -> tensor<2x2x5xf32>
  return
}

// -----

func.func @broadcast_sizes_over_static(%a: tensor<1x3xf32>, %n: index, %m: index) {
  // expected-error @+2 {{'dl.broadcast_to' op cannot broadcast 'tensor<1x3xf32>' to [-1, -1]: dimension 1 is 3, which only a size of 1 or a dynamic size broadcasts to a run-time size}}
  // expected-error @+1 {{'dl.broadcast_to' op failed to infer returned types}}
  %0 = dl.broadcast_to %a shape = [-1, -1] sizes(%n, %m) : tensor<1x3xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @reduce_axis_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.reduce_sum' op axis 2 is out of range for input 'tensor<2x3xf32>' of rank 2; axes must be in [0, rank)}}
  // expected-error @+1 {{'dl.reduce_sum' op failed to infer returned types}}
  %0 = dl.reduce_sum %a axes = [2] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_axis_negative(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.reduce_max' op axis -1 is out of range for input 'tensor<2x3xf32>' of rank 2; axes must be in [0, rank)}}
  // expected-error @+1 {{'dl.reduce_max' op failed to infer returned types}}
  %0 = dl.reduce_max %a axes = [-1] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_axes_order(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.reduce_sum' op expects strictly increasing axes, but got [1, 0]}}
  // expected-error @+1 {{'dl.reduce_sum' op failed to infer returned types}}
  %0 = dl.reduce_sum %a axes = [1, 0] : tensor<2x3xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_result(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.reduce_sum' op inferred type(s) 'tensor<2x1xf32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  // expected-error @+1 {{'dl.reduce_sum' op failed to infer returned types}}
  %0 = dl.reduce_sum %a axes = [1] keepdims : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @transpose_length(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.transpose' op expects a permutation of 2 entries for input 'tensor<2x3xf32>', but got [0]}}
  // expected-error @+1 {{'dl.transpose' op failed to infer returned types}}
  %0 = dl.transpose %a perm = [0] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @transpose_not_permutation(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.transpose' op expects a permutation of 0..1, but got [1, 1]}}
  // expected-error @+1 {{'dl.transpose' op failed to infer returned types}}
  %0 = dl.transpose %a perm = [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @slice_sizes_negative_stride(%x: tensor<8xf32>, %n: index) {
  // expected-error @+2 {{'dl.slice' op dimension 0 of 'tensor<8xf32>': a slice of a run-time size needs a start in [0, size] and a positive stride, but got start 7, stride -1}}
  // expected-error @+1 {{'dl.slice' op failed to infer returned types}}
  %0 = dl.slice %x starts = [7] sizes = [-1] strides = [-1] dynamic_sizes(%n) : tensor<8xf32> -> tensor<?xf32>
  return
}

// -----

func.func @reshape_two_inferred(%a: tensor<2x6xf32>) {
  // expected-error @+2 {{'dl.reshape' op expects at most one -1 in the new shape without size operands, but got [-1, -1]}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [-1, -1] : tensor<2x6xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @reshape_negative(%a: tensor<2x6xf32>) {
  // expected-error @+2 {{'dl.reshape' op expects sizes >= 0 or -1 in the new shape, but got [-2, 6]}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [-2, 6] : tensor<2x6xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x6xf32>) {
  // expected-error @+2 {{'dl.reshape' op cannot reshape 'tensor<2x6xf32>' (12 elements) into [5, 2] (10 elements)}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [5, 2] : tensor<2x6xf32> -> tensor<5x2xf32>
  return
}

// -----

func.func @reshape_inferred_count(%a: tensor<2x6xf32>) {
  // expected-error @+2 {{'dl.reshape' op cannot reshape 'tensor<2x6xf32>' (12 elements) into [5, -1]}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [5, -1] : tensor<2x6xf32> -> tensor<5x2xf32>
  return
}

// -----

func.func @reshape_dynamic_needs_inferred(%a: tensor<?x6xf32>) {
  // expected-error @+2 {{'dl.reshape' op reshaping 'tensor<?x6xf32>' (dynamic dimensions) needs a -1 in the new shape for them, or size operands, but got [2, 6]}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [2, 6] : tensor<?x6xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @reshape_dynamic_divisibility(%a: tensor<?x6xf32>) {
  // expected-error @+2 {{'dl.reshape' op cannot reshape 'tensor<?x6xf32>' into [-1, 4] for every size of its dynamic dimensions: the 6 elements of its static dimensions are not a multiple of the 4 elements of the static part of the new shape}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [-1, 4] : tensor<?x6xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.softmax' op axis 2 is out of range for input 'tensor<2x3xf32>' of rank 2; it must be in [0, rank)}}
  // expected-error @+1 {{'dl.softmax' op failed to infer returned types}}
  %0 = dl.softmax %a axis = 2 : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @softmax_integer(%a: tensor<2x3xi32>) {
  // expected-error @+1 {{'dl.softmax' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values}}
  %0 = dl.softmax %a axis = 1 : tensor<2x3xi32> -> tensor<2x3xi32>
  return
}

// -----

func.func @conv_dynamic_channels(%x: tensor<1x?x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'dl.conv2d' op expects a static channel dimension (the batch and the image may be dynamic), but got 'tensor<1x?x8x8xf32>'}}
  // expected-error @+1 {{'dl.conv2d' op failed to infer returned types}}
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x?x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @pool_dynamic_channels(%x: tensor<2x8x8x?xf32>) {
  // expected-error @+2 {{'dl.max_pool2d' op expects a static channel dimension (the batch and the image may be dynamic), but got 'tensor<2x8x8x?xf32>'}}
  // expected-error @+1 {{'dl.max_pool2d' op failed to infer returned types}}
  %0 = dl.max_pool2d %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] layout = "NHWC" : tensor<2x8x8x?xf32> -> tensor<2x4x4x?xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<2x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{'dl.conv2d' op expects the filter to have 3 input channels (input 'tensor<2x3x8x8xf32>' has 3 channels, groups = 1), but filter 'tensor<4x2x3x3xf32>' has 2}}
  // expected-error @+1 {{'dl.conv2d' op failed to infer returned types}}
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<2x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x6x6xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<2x6x8x8xf32>, %w: tensor<5x3x3x3xf32>) {
  // expected-error @+2 {{'dl.conv2d' op expects groups (2) to divide the input channels (6) and the filters (5)}}
  // expected-error @+1 {{'dl.conv2d' op failed to infer returned types}}
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 2 layout = "NCHW" : (tensor<2x6x8x8xf32>, tensor<5x3x3x3xf32>) -> tensor<2x5x6x6xf32>
  return
}

// -----

func.func @conv_layout(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'dl.conv2d' op expects layout "NCHW" or "NHWC", but got "NCWH"}}
  // expected-error @+1 {{'dl.conv2d' op failed to infer returned types}}
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCWH" : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  return
}

// -----

func.func @conv_window(%x: tensor<2x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'dl.conv2d' op the convolution window spans 3 elements but the padded input has only 2}}
  // expected-error @+1 {{'dl.conv2d' op failed to infer returned types}}
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<2x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x1x1xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'dl.conv2d' op expects strides entries >= 1, but got [0, 1]}}
  // expected-error @+1 {{'dl.conv2d' op failed to infer returned types}}
  %0 = dl.conv2d %x, %w strides = [0, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'dl.conv2d' op expects a bias of shape [4], but got 'tensor<3xf32>'}}
  // expected-error @+1 {{'dl.conv2d' op failed to infer returned types}}
  %0 = dl.conv2d %x, %w, %b strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<2x4x6x6xf32>
  return
}

// -----

func.func @pool_padding(%x: tensor<2x3x8x8xf32>) {
  // expected-error @+2 {{'dl.max_pool2d' op expects padding of at most half the kernel, but got padding [2, 0, 0, 0] for kernel [2, 2]}}
  // expected-error @+1 {{'dl.max_pool2d' op failed to infer returned types}}
  %0 = dl.max_pool2d %x kernel = [2, 2] strides = [2, 2] padding = [2, 0, 0, 0] layout = "NCHW" : tensor<2x3x8x8xf32> -> tensor<2x3x5x4xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+2 {{'dl.avg_pool2d' op expects a 4-D input, but got 'tensor<3x8x8xf32>'}}
  // expected-error @+1 {{'dl.avg_pool2d' op failed to infer returned types}}
  %0 = dl.avg_pool2d %x kernel = [2, 2] strides = [2, 2] padding = [0, 0, 0, 0] layout = "NCHW" : tensor<3x8x8xf32> -> tensor<3x4x4xf32>
  return
}

// -----

func.func @batch_norm_params(%x: tensor<2x3xf32>, %m: tensor<4xf32>) {
  // expected-error @+2 {{'dl.batch_norm' op expects mean of shape [3] (the size of axis 1 of 'tensor<2x3xf32>'), but got 'tensor<4xf32>'}}
  // expected-error @+1 {{'dl.batch_norm' op failed to infer returned types}}
  %0 = dl.batch_norm %x, %m, %m, %m, %m epsilon = 1.0e-5 axis = 1 : (tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_params(%x: tensor<2x3xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{'dl.layer_norm' op expects gamma of shape [3] (the normalized dimensions of 'tensor<2x3xf32>'), but got 'tensor<4xf32>'}}
  // expected-error @+1 {{'dl.layer_norm' op failed to infer returned types}}
  %0 = dl.layer_norm %x, %g, %g axis = 1 epsilon = 1.0e-5 : (tensor<2x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_dynamic(%x: tensor<?x3xf32>, %g: tensor<3xf32>) {
  // expected-error @+2 {{'dl.layer_norm' op cannot normalize over the dynamic dimension of 'tensor<?x3xf32>'}}
  // expected-error @+1 {{'dl.layer_norm' op failed to infer returned types}}
  %0 = dl.layer_norm %x, %g, %g axis = 0 epsilon = 1.0e-5 : (tensor<?x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @slice_bounds(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.slice' op dimension 1 of 'tensor<2x3xf32>': start 2, size 2, stride 1 reads outside [0, 3)}}
  // expected-error @+1 {{'dl.slice' op failed to infer returned types}}
  %0 = dl.slice %x starts = [0, 2] sizes = [2, 2] strides = [1, 1] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @slice_dynamic(%x: tensor<?x3xf32>) {
  // expected-error @+2 {{'dl.slice' op size -1 takes the whole dynamic dimension (start 0, stride 1) without size operands, but dimension 0 of 'tensor<?x3xf32>' has start 1, stride 1}}
  // expected-error @+1 {{'dl.slice' op failed to infer returned types}}
  %0 = dl.slice %x starts = [1, 0] sizes = [-1, 3] strides = [1, 1] : tensor<?x3xf32> -> tensor<?x3xf32>
  return
}

// -----

func.func @concat_sizes(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) {
  // expected-error @+2 {{'dl.concat' op expects inputs of equal sizes except along axis 0, but dimension 1 differs: 'tensor<2x3xf32>' and 'tensor<2x4xf32>'}}
  // expected-error @+1 {{'dl.concat' op failed to infer returned types}}
  %0 = dl.concat %x, %y axis = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_types(%x: tensor<2x3xf32>, %y: tensor<2x3xf16>) {
  // expected-error @+2 {{'dl.concat' op expects operands of the same element type, but got input #0 'tensor<2x3xf32>' and input #1 'tensor<2x3xf16>'}}
  // expected-error @+1 {{'dl.concat' op failed to infer returned types}}
  %0 = dl.concat %x, %y axis = 0 : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  return
}

// -----

func.func @broadcast_to(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.broadcast_to' op cannot broadcast 'tensor<2x3xf32>' to [4, 3]: dimension 0 is [2], not 1 or 4}}
  // expected-error @+1 {{'dl.broadcast_to' op failed to infer returned types}}
  %0 = dl.broadcast_to %x shape = [4, 3] : tensor<2x3xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @gather_float_indices(%x: tensor<5x3xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'dl.gather' op operand #1 must be ranked tensor of i32 or i64 values, but got 'tensor<2xf32>'}}
  %0 = dl.gather %x, %i axis = 0 : (tensor<5x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @cast_shape(%x: tensor<5x3xf32>) {
  // expected-error @+1 {{'dl.cast' op expects the result to have the input's shape [5, 3], but got [3, 5]}}
  %0 = dl.cast %x : tensor<5x3xf32> -> tensor<3x5xi32>
  return
}

// -----

func.func @where_condition_type(%c: tensor<3xf32>, %x: tensor<3xf32>) {
  // expected-error @+1 {{'dl.where' op operand #0 must be ranked tensor of i1 (bool) values}}
  %0 = dl.where %c, %x, %x : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @where_values(%c: tensor<3xi1>, %x: tensor<3xf32>, %y: tensor<4xf32>) {
  // expected-error @+2 {{'dl.where' op operands are not broadcast-compatible: dimension -1 is 3 in lhs 'tensor<3xf32>' and 4 in rhs 'tensor<4xf32>'}}
  // expected-error @+1 {{'dl.where' op failed to infer returned types}}
  %0 = dl.where %c, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @where_condition_shape(%c: tensor<4xi1>, %x: tensor<3xf32>) {
  // expected-error @+2 {{'dl.where' op condition and values are not broadcast-compatible: dimension -1 is 4 in condition 'tensor<4xi1>' and 3 in broadcast values 'tensor<3xf32>'}}
  // expected-error @+1 {{'dl.where' op failed to infer returned types}}
  %0 = dl.where %c, %x, %x : (tensor<4xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @compare_types(%x: tensor<3xf32>, %y: tensor<3xi32>) {
  // expected-error @+2 {{'dl.greater' op expects operands of the same element type, but got lhs 'tensor<3xf32>' and rhs 'tensor<3xi32>'}}
  // expected-error @+1 {{'dl.greater' op failed to infer returned types}}
  %0 = dl.greater %x, %y : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  return
}

// -----

func.func @argmax_axis(%x: tensor<5x3xf32>) {
  // expected-error @+2 {{'dl.argmax' op axis 2 is out of range for input 'tensor<5x3xf32>' of rank 2; it must be in [0, rank)}}
  // expected-error @+1 {{'dl.argmax' op failed to infer returned types}}
  %0 = dl.argmax %x axis = 2 : tensor<5x3xf32> -> tensor<5xi64>
  return
}

// -----

func.func @pad_entries(%x: tensor<5x3xf32>) {
  // expected-error @+2 {{'dl.pad' op expects low to have 2 entries, but got [1]}}
  // expected-error @+1 {{'dl.pad' op failed to infer returned types}}
  %0 = dl.pad %x low = [1] high = [1, 1] value = 0.0 : tensor<5x3xf32> -> tensor<7x5xf32>
  return
}

// -----

func.func @mean_of_integers(%x: tensor<5x3xi32>) {
  // expected-error @+1 {{'dl.reduce_mean' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values}}
  %0 = dl.reduce_mean %x axes = [1] : tensor<5x3xi32> -> tensor<5xi32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<5x3xf32>) {
  // expected-error @+2 {{'dl.log_softmax' op axis -1 is out of range for input 'tensor<5x3xf32>' of rank 2; it must be in [0, rank)}}
  // expected-error @+1 {{'dl.log_softmax' op failed to infer returned types}}
  %0 = dl.log_softmax %x axis = -1 : tensor<5x3xf32> -> tensor<5x3xf32>
  return
}

// -----

// Sizes that overflow int64_t are refused by every dl op before anything
// (shape inference, folders, passes) multiplies them.
func.func @element_count_overflows(%a: tensor<4294967296x4294967296x16xf32>) {
  // expected-error @+1 {{'dl.add' op operand #0 has type 'tensor<4294967296x4294967296x16xf32>', whose size in elements or bytes does not fit in 64 bits}}
  %0 = dl.add %a, %a : (tensor<4294967296x4294967296x16xf32>, tensor<4294967296x4294967296x16xf32>) -> tensor<4294967296x4294967296x16xf32>
  return
}

// -----

// 2^62 elements fit in int64_t; their 2^64 bytes do not.
func.func @byte_size_overflows(%a: tensor<4611686018427387904xf32>) {
  // expected-error @+1 {{'dl.reshape' op operand #0 has type 'tensor<4611686018427387904xf32>', whose size in elements or bytes does not fit in 64 bits}}
  %0 = dl.reshape %a shape = [2, 2305843009213693952] : tensor<4611686018427387904xf32> -> tensor<2x2305843009213693952xf32>
  return
}

// -----

func.func @result_overflows(%a: tensor<1x1xf32>) {
  // expected-error @+1 {{'dl.broadcast_to' op result #0 has type 'tensor<1099511627776x1099511627776xf32>', whose size in elements or bytes does not fit in 64 bits}}
  %0 = dl.broadcast_to %a shape = [1099511627776, 1099511627776] : tensor<1x1xf32> -> tensor<1099511627776x1099511627776xf32>
  return
}

// -----

func.func @sin_of_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{'dl.sin' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values}}
  %0 = dl.sin %a : tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @round_changes_type(%a: tensor<4xf32>) {
  // expected-error @+2 {{'dl.round' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<4xf16>'}}
  // expected-error @+1 {{'dl.round' op failed to infer returned types}}
  %0 = dl.round %a : tensor<4xf32> -> tensor<4xf16>
  return
}

// -----

func.func @sign_of_bools(%a: tensor<4xi1>) {
  // expected-error @+1 {{'dl.sign' op operand #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32 or ui64 values}}
  %0 = dl.sign %a : tensor<4xi1> -> tensor<4xi1>
  return
}

// -----

func.func @isnan_of_integers(%a: tensor<4xi32>) {
  // expected-error @+1 {{'dl.isnan' op operand #0 must be ranked tensor of f16, bf16, f32 or f64 values}}
  %0 = dl.isnan %a : tensor<4xi32> -> tensor<4xi1>
  return
}

// -----

func.func @isinf_result_not_bool(%a: tensor<4xf32>) {
  // expected-error @+1 {{'dl.isinf' op result #0 must be ranked tensor of i1 (bool) values}}
  %0 = dl.isinf %a : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @isnan_wrong_shape(%a: tensor<?x4xf32>) {
  // expected-error @+2 {{'dl.isnan' op inferred type(s) 'tensor<?x4xi1>' are incompatible with return type(s) of operation 'tensor<4xi1>'}}
  // expected-error @+1 {{'dl.isnan' op failed to infer returned types}}
  %0 = dl.isnan %a : tensor<?x4xf32> -> tensor<4xi1>
  return
}

// -----

func.func @logical_of_integers(%a: tensor<4xi8>) {
  // expected-error @+1 {{'dl.logical_and' op operand #0 must be ranked tensor of i1 (bool) values}}
  %0 = dl.logical_and %a, %a : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return
}

// -----

func.func @logical_not_of_floats(%a: tensor<4xf32>) {
  // expected-error @+1 {{'dl.logical_not' op operand #0 must be ranked tensor of i1 (bool) values}}
  %0 = dl.logical_not %a : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @bitwise_of_floats(%a: tensor<4xf32>) {
  // expected-error @+1 {{'dl.bitwise_or' op operand #0 must be ranked tensor of i1 (bool), i8, i16, i32, i64, ui8, ui16, ui32 or ui64 values}}
  %0 = dl.bitwise_or %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @bitwise_not_of_floats(%a: tensor<4xf16>) {
  // expected-error @+1 {{'dl.bitwise_not' op operand #0 must be ranked tensor of i1 (bool), i8, i16, i32, i64, ui8, ui16, ui32 or ui64 values}}
  %0 = dl.bitwise_not %a : tensor<4xf16> -> tensor<4xf16>
  return
}

// -----

func.func @bitwise_mixed_widths(%a: tensor<4xi32>, %b: tensor<4xi64>) {
  // expected-error @+2 {{'dl.bitwise_xor' op expects operands of the same element type, but got lhs 'tensor<4xi32>' and rhs 'tensor<4xi64>'}}
  // expected-error @+1 {{'dl.bitwise_xor' op failed to infer returned types}}
  %0 = dl.bitwise_xor %a, %b : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  return
}

// -----

func.func @remainder_not_broadcastable(%a: tensor<2x3xi32>, %b: tensor<2xi32>) {
  // expected-error @+2 {{'dl.remainder' op operands are not broadcast-compatible: dimension -1 is 3 in lhs 'tensor<2x3xi32>' and 2 in rhs 'tensor<2xi32>'}}
  // expected-error @+1 {{'dl.remainder' op failed to infer returned types}}
  %0 = dl.remainder %a, %b : (tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x3xi32>
  return
}

// -----

func.func @fmod_of_bools(%a: tensor<4xi1>) {
  // expected-error @+1 {{'dl.fmod' op operand #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32 or ui64 values}}
  %0 = dl.fmod %a, %a : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

// Sizes computed from attributes are checked for int64 overflow before a type
// is built from them (RankedTensorType::get asserts on a negative size; the
// dl-opt fuzzer found this one in dl.pad's type inference, under the parser).
func.func @pad_overflows(%a: tensor<3xf32>) {
  // expected-error @+2 {{'dl.pad' op the padded size of dimension 0 overflows (3 + 9223372036854775807 + 2)}}
  // expected-error @+1 {{'dl.pad' op failed to infer returned types}}
  %0 = dl.pad %a low = [9223372036854775807] high = [2] value = 0.0 : tensor<3xf32> -> tensor<6xf32>
  return
}

// -----

func.func @pool_padding_overflows(%a: tensor<1x1x8x8xf32>) {
  // expected-error @+2 {{'dl.max_pool2d' op the padded pooling size overflows (8 + 9223372036854775807 + 0)}}
  // expected-error @+1 {{'dl.max_pool2d' op failed to infer returned types}}
  %0 = dl.max_pool2d %a kernel = [2, 2] strides = [1, 1] padding = [9223372036854775807, 0, 0, 0] layout = "NCHW" : tensor<1x1x8x8xf32> -> tensor<1x1x8x8xf32>
  return
}

// -----

func.func @conv_dilation_overflows(%a: tensor<1x1x8x8xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+2 {{'dl.conv2d' op the convolution window's span overflows (dilation 9223372036854775807, window 3)}}
  // expected-error @+1 {{'dl.conv2d' op failed to infer returned types}}
  %0 = dl.conv2d %a, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [9223372036854775807, 1] groups = 1 layout = "NCHW" : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x8x8xf32>
  return
}

// -----

func.func @quantize_scale_rank(%x: tensor<4x3xf32>, %s: tensor<4x3xf32>, %z: tensor<4x3xi8>) {
  // expected-error @+2 {{'dl.quantize' op expects a scale of rank 0 (per tensor) or 1 (per axis), but got 'tensor<4x3xf32>'}}
  // expected-error @+1 {{'dl.quantize' op failed to infer returned types}}
  %0 = dl.quantize %x, %s, %z axis = 0 : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xi8>) -> tensor<4x3xi8>
  return
}

// -----

func.func @quantize_scale_count(%x: tensor<4x3xf32>, %s: tensor<4xf32>, %z: tensor<4xi8>) {
  // expected-error @+2 {{'dl.quantize' op expects one scale per index of axis 1 (3 in 'tensor<4x3xf32>'), but got 'tensor<4xf32>'}}
  // expected-error @+1 {{'dl.quantize' op failed to infer returned types}}
  %0 = dl.quantize %x, %s, %z axis = 1 : (tensor<4x3xf32>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x3xi8>
  return
}

// -----

func.func @quantize_axis(%x: tensor<4x3xf32>, %s: tensor<4xf32>, %z: tensor<4xi8>) {
  // expected-error @+2 {{'dl.quantize' op axis 2 is out of range for input 'tensor<4x3xf32>' of rank 2; it must be in [0, rank)}}
  // expected-error @+1 {{'dl.quantize' op failed to infer returned types}}
  %0 = dl.quantize %x, %s, %z axis = 2 : (tensor<4x3xf32>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x3xi8>
  return
}

// -----

func.func @quantize_shapes_differ(%x: tensor<4x3xf32>, %s: tensor<3xf32>, %z: tensor<i8>) {
  // expected-error @+2 {{'dl.quantize' op expects scale and zero_point of the same shape, but got 'tensor<3xf32>' and 'tensor<i8>'}}
  // expected-error @+1 {{'dl.quantize' op failed to infer returned types}}
  %0 = dl.quantize %x, %s, %z axis = 1 : (tensor<4x3xf32>, tensor<3xf32>, tensor<i8>) -> tensor<4x3xi8>
  return
}

// -----

func.func @quantize_zero_point_type(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i64>) {
  // expected-error @+2 {{'dl.quantize' op expects a zero point of i8, ui8, i16, ui16 or i32, but got 'tensor<i64>'}}
  // expected-error @+1 {{'dl.quantize' op failed to infer returned types}}
  %0 = dl.quantize %x, %s, %z axis = 0 : (tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xi64>
  return
}

// -----

func.func @quantize_scale_type(%x: tensor<4xf32>, %s: tensor<f16>, %z: tensor<i8>) {
  // expected-error @+2 {{'dl.quantize' op expects a scale of the input's element type, but got 'tensor<f16>' for input 'tensor<4xf32>'}}
  // expected-error @+1 {{'dl.quantize' op failed to infer returned types}}
  %0 = dl.quantize %x, %s, %z axis = 0 : (tensor<4xf32>, tensor<f16>, tensor<i8>) -> tensor<4xi8>
  return
}

// -----

func.func @dequantize_zero_point_type(%q: tensor<4xui8>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+2 {{'dl.dequantize' op expects a zero point of the input's element type, but got 'tensor<i8>' for input 'tensor<4xui8>'}}
  // expected-error @+1 {{'dl.dequantize' op failed to infer returned types}}
  %0 = dl.dequantize %q, %s, %z axis = 0 : (tensor<4xui8>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  return
}

// -----

func.func @dequantize_float_input(%q: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{'dl.dequantize' op operand #0 must be ranked tensor of i1 (bool), i8, i16, i32, i64, ui8, ui16, ui32 or ui64 values, but got 'tensor<4xf32>'}}
  %0 = dl.dequantize %q, %s, %z axis = 0 : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xf32>
  return
}

// -----

func.func @matmul_integer_wide(%a: tensor<2x3xi16>, %b: tensor<3x4xi8>) {
  // expected-error @+2 {{'dl.matmul_integer' op expects 8-bit integer operands (i8 or ui8), but got lhs 'tensor<2x3xi16>'}}
  // expected-error @+1 {{'dl.matmul_integer' op failed to infer returned types}}
  %0 = dl.matmul_integer %a, %b : (tensor<2x3xi16>, tensor<3x4xi8>) -> tensor<2x4xi32>
  return
}

// -----

func.func @matmul_integer_k(%a: tensor<2x3xui8>, %b: tensor<5x4xi8>) {
  // expected-error @+2 {{'dl.matmul_integer' op contraction dimensions differ: lhs 'tensor<2x3xui8>' has K = 3 but rhs 'tensor<5x4xi8>' has K = 5}}
  // expected-error @+1 {{'dl.matmul_integer' op failed to infer returned types}}
  %0 = dl.matmul_integer %a, %b : (tensor<2x3xui8>, tensor<5x4xi8>) -> tensor<2x4xi32>
  return
}
