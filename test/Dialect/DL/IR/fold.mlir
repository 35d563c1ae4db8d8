// RUN: dl-opt %s --split-input-file --canonicalize | FileCheck %s

// Constant folding through broadcasting: [2,1] + [3] -> [2,3].
// CHECK-LABEL: func.func @fold_broadcast_add
// CHECK-NEXT: %[[C:.*]] = dl.constant dense<{{\[}}[1.100000e+01, 2.100000e+01, 3.100000e+01], [1.200000e+01, 2.200000e+01, 3.200000e+01]]> : tensor<2x3xf32>
// CHECK-NEXT: return %[[C]]
func.func @fold_broadcast_add() -> tensor<2x3xf32> {
  %a = dl.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %b = dl.constant dense<[10.0, 20.0, 30.0]> : tensor<3xf32>
  %r = dl.add %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// Through transpose, abs, reshape, a reduction and a cast:
// sum(abs([[1, -3], [-2, 4]]), axis 0) = [3, 7].
// CHECK-LABEL: func.func @fold_chain
// CHECK-NEXT: %[[C:.*]] = dl.constant dense<[3, 7]> : tensor<2xi32>
// CHECK-NEXT: return %[[C]]
func.func @fold_chain() -> tensor<2xi32> {
  %a = dl.constant dense<[[1.0, -2.0], [-3.0, 4.0]]> : tensor<2x2xf32>
  %t = dl.transpose %a perm = [1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
  %abs = dl.abs %t : tensor<2x2xf32> -> tensor<2x2xf32>
  %r = dl.reshape %abs shape = [2, 2] : tensor<2x2xf32> -> tensor<2x2xf32>
  %s = dl.reduce_sum %r axes = [0] : tensor<2x2xf32> -> tensor<2xf32>
  %i = dl.cast %s : tensor<2xf32> -> tensor<2xi32>
  return %i : tensor<2xi32>
}

// -----

// Splats stay splats whatever the size.
// CHECK-LABEL: func.func @fold_splat
// CHECK-NEXT: %[[C:.*]] = dl.constant dense<5.000000e-01> : tensor<1024x1024xf32>
// CHECK-NEXT: return %[[C]]
func.func @fold_splat() -> tensor<1024x1024xf32> {
  %a = dl.constant dense<0.0> : tensor<1024x1024xf32>
  %s = dl.sigmoid %a : tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %s : tensor<1024x1024xf32>
}

// -----

// Integers wrap at their width; comparisons give bools; where selects.
// CHECK-LABEL: func.func @fold_integers
// CHECK-DAG: dl.constant dense<[-128, 0]> : tensor<2xi8>
// CHECK-DAG: dl.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: dl.constant dense<[2, 8]> : tensor<2xi8>
func.func @fold_integers() -> (tensor<2xi8>, tensor<2xi1>, tensor<2xi8>) {
  %a = dl.constant dense<[127, -1]> : tensor<2xi8>
  %one = dl.constant dense<1> : tensor<i8>
  %sum = dl.add %a, %one : (tensor<2xi8>, tensor<i8>) -> tensor<2xi8>
  %lt = dl.less %a, %one : (tensor<2xi8>, tensor<i8>) -> tensor<2xi1>
  %x = dl.constant dense<[7, 8]> : tensor<2xi8>
  %y = dl.constant dense<2> : tensor<2xi8>
  %w = dl.where %lt, %y, %x : (tensor<2xi1>, tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  %z = dl.where %lt, %x, %y : (tensor<2xi1>, tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  %m = dl.minimum %z, %x : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  return %sum, %lt, %m : tensor<2xi8>, tensor<2xi1>, tensor<2xi8>
}

// -----

// Shape ops on constants: slice, concat, pad, broadcast_to.
// CHECK-LABEL: func.func @fold_shape_ops
// CHECK-DAG: dl.constant dense<[3.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: dl.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<6xf32>
// CHECK-DAG: dl.constant dense<[9.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 9.000000e+00, 9.000000e+00]> : tensor<6xf32>
// CHECK-DAG: dl.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00], [1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<2x3xf32>
func.func @fold_shape_ops() -> (tensor<2xf32>, tensor<6xf32>, tensor<6xf32>, tensor<2x3xf32>) {
  %a = dl.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = dl.slice %a starts = [2] sizes = [2] strides = [-2] : tensor<3xf32> -> tensor<2xf32>
  %c = dl.concat %a, %a axis = 0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<6xf32>
  %p = dl.pad %a low = [1] high = [2] value = 9.0 : tensor<3xf32> -> tensor<6xf32>
  %b = dl.broadcast_to %a shape = [2, 3] : tensor<3xf32> -> tensor<2x3xf32>
  return %s, %c, %p, %b : tensor<2xf32>, tensor<6xf32>, tensor<6xf32>, tensor<2x3xf32>
}

// -----

// Algebraic identities: x + 0, x * 1, x / 1, -(-x), relu(relu x).
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[R:.*]] = dl.relu %[[X]]
// CHECK-NEXT: return %[[R]]
func.func @identities(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %zero = dl.constant dense<0.0> : tensor<4xf32>
  %one = dl.constant dense<1.0> : tensor<f32>
  %a = dl.add %x, %zero : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %b = dl.mul %one, %a : (tensor<f32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %c = dl.div %b, %one : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %d = dl.neg %c : tensor<?x4xf32> -> tensor<?x4xf32>
  %e = dl.neg %d : tensor<?x4xf32> -> tensor<?x4xf32>
  %f = dl.relu %e : tensor<?x4xf32> -> tensor<?x4xf32>
  %g = dl.relu %f : tensor<?x4xf32> -> tensor<?x4xf32>
  return %g : tensor<?x4xf32>
}

// -----

// x - x and x * 0 are zero on integers.
// CHECK-LABEL: func.func @integer_zeros
// CHECK-NEXT: %[[Z:.*]] = dl.constant dense<0> : tensor<3xi32>
// CHECK-NEXT: return %[[Z]], %[[Z]]
func.func @integer_zeros(%x: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %zero = dl.constant dense<0> : tensor<i32>
  %a = dl.sub %x, %x : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %b = dl.mul %x, %zero : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  return %a, %b : tensor<3xi32>, tensor<3xi32>
}

// -----

// Left alone: x - x and x * 0 on floats (NaN - NaN, inf * 0 are NaN), and
// x + zeros when the zeros broadcast x to a larger shape.
// CHECK-LABEL: func.func @float_not_identities
// CHECK: dl.sub %arg0, %arg0
// CHECK: dl.mul %arg0
// CHECK: dl.add %arg1
// CHECK-NOT: dl.constant dense<0.000000e+00> : tensor<3xf32>
func.func @float_not_identities(%x: tensor<3xf32>, %y: tensor<1xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %zero = dl.constant dense<0.0> : tensor<f32>
  %zeros = dl.constant dense<0.0> : tensor<3xf32>
  %a = dl.sub %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %b = dl.mul %x, %zero : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %c = dl.add %y, %zeros : (tensor<1xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %a, %b, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Integer division by zero is left to run time.
// CHECK-LABEL: func.func @no_fold_division_by_zero
// CHECK: dl.div
func.func @no_fold_division_by_zero() -> tensor<2xi32> {
  %a = dl.constant dense<[1, 2]> : tensor<2xi32>
  %b = dl.constant dense<[1, 0]> : tensor<2xi32>
  %r = dl.div %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %r : tensor<2xi32>
}

// -----

// transpose(transpose x) composes; cancelling permutations vanish.
// CHECK-LABEL: func.func @transposes
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = dl.transpose %[[X]] perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transposes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %a = dl.transpose %x perm = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %b = dl.transpose %a perm = [1, 0, 2] : tensor<3x2x4xf32> -> tensor<2x3x4xf32>
  %c = dl.transpose %a perm = [2, 1, 0] : tensor<3x2x4xf32> -> tensor<4x2x3xf32>
  return %b, %c : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// -----

// reshape(reshape x) is one reshape, also with a dynamic batch.
// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<?x2x6xf32>)
// CHECK-NEXT: %[[R:.*]] = dl.reshape %[[X]] shape = [-1, 3, 2, 2] : tensor<?x2x6xf32> -> tensor<?x3x2x2xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshapes(%x: tensor<?x2x6xf32>) -> tensor<?x3x2x2xf32> {
  %a = dl.reshape %x shape = [-1, 12] : tensor<?x2x6xf32> -> tensor<?x12xf32>
  %b = dl.reshape %a shape = [-1, 3, 2, 2] : tensor<?x12xf32> -> tensor<?x3x2x2xf32>
  return %b : tensor<?x3x2x2xf32>
}

// -----

// A^T B^T = (B A)^T: one transpose of the 8x8 result instead of two of the
// 8x64 and 64x8 operands.
// CHECK-LABEL: func.func @matmul_of_transposes
// CHECK-SAME: (%[[A:.*]]: tensor<64x8xf32>, %[[B:.*]]: tensor<8x64xf32>)
// CHECK-NEXT: %[[P:.*]] = dl.matmul %[[B]], %[[A]] : (tensor<8x64xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: %[[T:.*]] = dl.transpose %[[P]] perm = [1, 0]
// CHECK-NEXT: return %[[T]]
func.func @matmul_of_transposes(%a: tensor<64x8xf32>, %b: tensor<8x64xf32>) -> tensor<8x8xf32> {
  %at = dl.transpose %a perm = [1, 0] : tensor<64x8xf32> -> tensor<8x64xf32>
  %bt = dl.transpose %b perm = [1, 0] : tensor<8x64xf32> -> tensor<64x8xf32>
  %r = dl.matmul %at, %bt : (tensor<8x64xf32>, tensor<64x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Left alone where the result is larger than the operands (64x64 from
// 64x2 and 2x64), or a transpose has another user.
// CHECK-LABEL: func.func @matmul_of_transposes_refused
// CHECK: %[[AT:.*]] = dl.transpose %arg0
// CHECK: %[[BT:.*]] = dl.transpose %arg1
// CHECK: dl.matmul %[[AT]], %[[BT]]
// CHECK: %[[CT:.*]] = dl.transpose %arg2
// CHECK: dl.matmul %[[CT]], %[[CT]]
func.func @matmul_of_transposes_refused(%a: tensor<2x64xf32>, %b: tensor<64x2xf32>, %c: tensor<8x8xf32>) -> (tensor<64x64xf32>, tensor<8x8xf32>) {
  %at = dl.transpose %a perm = [1, 0] : tensor<2x64xf32> -> tensor<64x2xf32>
  %bt = dl.transpose %b perm = [1, 0] : tensor<64x2xf32> -> tensor<2x64xf32>
  %r = dl.matmul %at, %bt : (tensor<64x2xf32>, tensor<2x64xf32>) -> tensor<64x64xf32>
  %ct = dl.transpose %c perm = [1, 0] : tensor<8x8xf32> -> tensor<8x8xf32>
  %s = dl.matmul %ct, %ct : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r, %s : tensor<64x64xf32>, tensor<8x8xf32>
}
