// RUN: dl-opt %s -split-input-file -verify-diagnostics

// Every verifier error of the dl dialect. Shape and attribute errors come from
// result-type inference, which InferTypeOpInterface's verifier follows with
// "failed to infer returned types".

func.func @dynamic_inner_dim(%a: tensor<4x?xf32>) {
  // expected-error @+1 {{'dl.relu' op operand #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32 or i64 values with static dimensions except an optionally dynamic leading one, but got 'tensor<4x?xf32>'}}
  %0 = dl.relu %a : tensor<4x?xf32> -> tensor<4x?xf32>
  return
}

// -----

func.func @bool_arithmetic(%a: tensor<4xi1>) {
  // expected-error @+1 {{'dl.add' op operand #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32 or i64 values}}
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

func.func @unsupported_element(%a: tensor<4xui8>) {
  // expected-error @+1 {{'dl.relu' op operand #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32 or i64 values}}
  %0 = dl.relu %a : tensor<4xui8> -> tensor<4xui8>
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

func.func @broadcast_moves_dynamic(%a: tensor<?x3xf32>, %b: tensor<2x1x3xf32>) {
  // expected-error @+1 {{'dl.mul' op result #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32 or i64 values with static dimensions except an optionally dynamic leading one, but got 'tensor<2x?x3xf32>'}}
  %0 = dl.mul %a, %b : (tensor<?x3xf32>, tensor<2x1x3xf32>) -> tensor<2x?x3xf32>
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

func.func @matmul_dynamic_not_leading(%a: tensor<?x3xf32>, %b: tensor<4x3x5xf32>) {
  // expected-error @+1 {{'dl.matmul' op result #0 must be ranked tensor of f16, bf16, f32, f64, i8, i16, i32 or i64 values with static dimensions except an optionally dynamic leading one, but got 'tensor<4x?x5xf32>'}}
  %0 = dl.matmul %a, %b : (tensor<?x3xf32>, tensor<4x3x5xf32>) -> tensor<4x?x5xf32>
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

func.func @transpose_moves_dynamic(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{'dl.transpose' op result #0 must be ranked tensor of f16, bf16, f32, f64, i1, i8, i16, i32 or i64 values with static dimensions except an optionally dynamic leading one, but got 'tensor<3x?xf32>'}}
  %0 = dl.transpose %a perm = [1, 0] : tensor<?x3xf32> -> tensor<3x?xf32>
  return
}

// -----

func.func @reshape_two_inferred(%a: tensor<2x6xf32>) {
  // expected-error @+2 {{'dl.reshape' op expects at most one -1 in the new shape, but got [-1, -1]}}
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
  // expected-error @+2 {{'dl.reshape' op reshaping 'tensor<?x6xf32>' (dynamic leading dimension) needs -1 as the first entry of the new shape, but got [2, 6]}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [2, 6] : tensor<?x6xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @reshape_dynamic_divisibility(%a: tensor<?x6xf32>) {
  // expected-error @+2 {{'dl.reshape' op cannot reshape 'tensor<?x6xf32>' into [-1, 4] for every batch size: the 6 elements per leading index are not a multiple of the 4 elements of the static part of the new shape}}
  // expected-error @+1 {{'dl.reshape' op failed to infer returned types}}
  %0 = dl.reshape %a shape = [-1, 4] : tensor<?x6xf32> -> tensor<?x4xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'dl.softmax' op axis 2 is out of range for input 'tensor<2x3xf32>' of rank 2; the axis must be in [0, rank)}}
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
