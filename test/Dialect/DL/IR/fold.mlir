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

// Rounding, sign and trigonometry of constants: round is half to even;
// ceil(-0.5) and round(-0.5) are -0.
// CHECK-LABEL: func.func @fold_rounding_sign_trig
// CHECK-DAG: dl.constant dense<[-3.000000e+00, -1.000000e+00, 0.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<5xf32>
// CHECK-DAG: dl.constant dense<[-2.000000e+00, -0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<5xf32>
// CHECK-DAG: dl.constant dense<[-2.000000e+00, -0.000000e+00, 0.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<5xf32>
// CHECK-DAG: dl.constant dense<[-1.000000e+00, 0.000000e+00, 1.000000e+00]> : tensor<3xf64>
// CHECK-DAG: dl.constant dense<[-1, 0, 1]> : tensor<3xi8>
// CHECK-DAG: dl.constant dense<1.000000e+00> : tensor<2xf16>
// CHECK-NOT: dl.floor
// CHECK-NOT: dl.ceil
// CHECK-NOT: dl.round
// CHECK-NOT: dl.sign
// CHECK-NOT: dl.cos
func.func @fold_rounding_sign_trig() -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<3xf64>, tensor<3xi8>, tensor<2xf16>) {
  %a = dl.constant dense<[-2.5, -0.5, 0.5, 1.5, 2.7]> : tensor<5xf32>
  %f = dl.floor %a : tensor<5xf32> -> tensor<5xf32>
  %c = dl.ceil %a : tensor<5xf32> -> tensor<5xf32>
  %r = dl.round %a : tensor<5xf32> -> tensor<5xf32>
  %b = dl.constant dense<[-2.0, 0.0, 3.0]> : tensor<3xf64>
  %s = dl.sign %b : tensor<3xf64> -> tensor<3xf64>
  %i = dl.constant dense<[-5, 0, 7]> : tensor<3xi8>
  %si = dl.sign %i : tensor<3xi8> -> tensor<3xi8>
  %zero = dl.constant dense<0.0> : tensor<2xf16>
  %cos = dl.cos %zero : tensor<2xf16> -> tensor<2xf16>
  return %f, %c, %r, %s, %si, %cos : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<3xf64>, tensor<3xi8>, tensor<2xf16>
}

// -----

// isnan and isinf of constants give bools.
// CHECK-LABEL: func.func @fold_float_classes
// CHECK-DAG: dl.constant dense<[false, true, false, false]> : tensor<4xi1>
// CHECK-DAG: dl.constant dense<[false, false, true, true]> : tensor<4xi1>
func.func @fold_float_classes() -> (tensor<4xi1>, tensor<4xi1>) {
  %a = dl.constant dense<[1.0, 0x7FC00000, 0x7F800000, 0xFF800000]> : tensor<4xf32>
  %n = dl.isnan %a : tensor<4xf32> -> tensor<4xi1>
  %i = dl.isinf %a : tensor<4xf32> -> tensor<4xi1>
  return %n, %i : tensor<4xi1>, tensor<4xi1>
}

// -----

// Logical and bitwise ops of constants; ~ on bools is logical negation.
// CHECK-LABEL: func.func @fold_logical_bitwise
// CHECK-DAG: dl.constant dense<[true, false, false, false]> : tensor<4xi1>
// CHECK-DAG: dl.constant dense<[true, true, true, false]> : tensor<4xi1>
// CHECK-DAG: dl.constant dense<[false, true, true, false]> : tensor<4xi1>
// CHECK-DAG: dl.constant dense<[false, false, true, true]> : tensor<4xi1>
// CHECK-DAG: dl.constant dense<[8, 3]> : tensor<2xi8>
// CHECK-DAG: dl.constant dense<[14, -1]> : tensor<2xi8>
// CHECK-DAG: dl.constant dense<[6, -4]> : tensor<2xi8>
// CHECK-DAG: dl.constant dense<[-13, 0]> : tensor<2xi8>
// CHECK-DAG: dl.constant dense<[false, true]> : tensor<2xi1>
func.func @fold_logical_bitwise() -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2xi8>, tensor<2xi8>, tensor<2xi8>, tensor<2xi8>, tensor<2xi1>) {
  %p = dl.constant dense<[true, true, false, false]> : tensor<4xi1>
  %q = dl.constant dense<[true, false, true, false]> : tensor<4xi1>
  %and = dl.logical_and %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %or = dl.logical_or %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %xor = dl.logical_xor %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %not = dl.logical_not %p : tensor<4xi1> -> tensor<4xi1>
  %a = dl.constant dense<[12, -1]> : tensor<2xi8>
  %b = dl.constant dense<[10, 3]> : tensor<2xi8>
  %band = dl.bitwise_and %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  %bor = dl.bitwise_or %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  %bxor = dl.bitwise_xor %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  %bnot = dl.bitwise_not %a : tensor<2xi8> -> tensor<2xi8>
  %t = dl.constant dense<[true, false]> : tensor<2xi1>
  %tnot = dl.bitwise_not %t : tensor<2xi1> -> tensor<2xi1>
  return %and, %or, %xor, %not, %band, %bor, %bxor, %bnot, %tnot : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<2xi8>, tensor<2xi8>, tensor<2xi8>, tensor<2xi8>, tensor<2xi1>
}

// -----

// Remainders of constants: remainder takes the divisor's sign, fmod the
// dividend's; integer x % 0 is 0, as at run time.
// CHECK-LABEL: func.func @fold_remainders
// CHECK-DAG: dl.constant dense<[1, 2, -2, -1, 0]> : tensor<5xi32>
// CHECK-DAG: dl.constant dense<[1, -1, 1, -1, 0]> : tensor<5xi32>
// CHECK-DAG: dl.constant dense<[1.500000e+00, 5.000000e-01, -5.000000e-01, -1.500000e+00]> : tensor<4xf32>
// CHECK-DAG: dl.constant dense<[1.500000e+00, -1.500000e+00, 1.500000e+00, -1.500000e+00]> : tensor<4xf32>
func.func @fold_remainders() -> (tensor<5xi32>, tensor<5xi32>, tensor<4xf32>, tensor<4xf32>) {
  %a = dl.constant dense<[7, -7, 7, -7, 5]> : tensor<5xi32>
  %b = dl.constant dense<[3, 3, -3, -3, 0]> : tensor<5xi32>
  %r = dl.remainder %a, %b : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %m = dl.fmod %a, %b : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
  %x = dl.constant dense<[7.5, -7.5, 7.5, -7.5]> : tensor<4xf32>
  %y = dl.constant dense<[2.0, 2.0, -2.0, -2.0]> : tensor<4xf32>
  %fr = dl.remainder %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %fm = dl.fmod %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r, %m, %fr, %fm : tensor<5xi32>, tensor<5xi32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// not(not x) is x, x & x and x | x are x; floor, ceil, round and sign are
// idempotent.
// CHECK-LABEL: func.func @logical_identities
// CHECK-SAME: (%[[P:.*]]: tensor<3xi1>, %[[I:.*]]: tensor<3xi32>, %[[X:.*]]: tensor<3xf32>)
// CHECK-NEXT: %[[F:.*]] = dl.floor %[[X]]
// CHECK-NEXT: %[[S:.*]] = dl.sign %[[I]]
// CHECK-NEXT: return %[[P]], %[[P]], %[[I]], %[[I]], %[[F]], %[[S]]
func.func @logical_identities(%p: tensor<3xi1>, %i: tensor<3xi32>, %x: tensor<3xf32>) -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi32>, tensor<3xi32>, tensor<3xf32>, tensor<3xi32>) {
  %n = dl.logical_not %p : tensor<3xi1> -> tensor<3xi1>
  %nn = dl.logical_not %n : tensor<3xi1> -> tensor<3xi1>
  %a = dl.logical_and %nn, %nn : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  %b = dl.bitwise_not %i : tensor<3xi32> -> tensor<3xi32>
  %bb = dl.bitwise_not %b : tensor<3xi32> -> tensor<3xi32>
  %o = dl.bitwise_or %bb, %bb : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %f = dl.floor %x : tensor<3xf32> -> tensor<3xf32>
  %ff = dl.floor %f : tensor<3xf32> -> tensor<3xf32>
  %s = dl.sign %i : tensor<3xi32> -> tensor<3xi32>
  %ss = dl.sign %s : tensor<3xi32> -> tensor<3xi32>
  return %nn, %a, %bb, %o, %ff, %ss : tensor<3xi1>, tensor<3xi1>, tensor<3xi32>, tensor<3xi32>, tensor<3xf32>, tensor<3xi32>
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

// A pad of a dynamic dimension keeps the type but not the shape: not folded.
// CHECK-LABEL: func @pad_dynamic_not_folded
// CHECK: dl.pad
func.func @pad_dynamic_not_folded(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = dl.pad %x low = [1, 0] high = [2, 0] value = 0.0 : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// A reshape of the same type with two dynamic dimensions may trade their
// sizes: not folded; with one, it is the identity.
// CHECK-LABEL: func @reshape_dynamic_identity
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[Y:.*]]: tensor<?x4xf32>
// CHECK: %[[R:.*]] = dl.reshape %[[X]]
// CHECK: return %[[R]], %[[Y]]
func.func @reshape_dynamic_identity(%x: tensor<?x?xf32>, %y: tensor<?x4xf32>, %a: index, %b: index) -> (tensor<?x?xf32>, tensor<?x4xf32>) {
  %0 = dl.reshape %x shape = [-1, -1] sizes(%a, %b) : tensor<?x?xf32> -> tensor<?x?xf32>
  %1 = dl.reshape %y shape = [-1, 4] : tensor<?x4xf32> -> tensor<?x4xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x4xf32>
}

// A slice of a run-time size may be shorter than its input: not folded.
// CHECK-LABEL: func @slice_window_not_folded
// CHECK: dl.slice
func.func @slice_window_not_folded(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %0 = dl.slice %x starts = [0] sizes = [-1] strides = [1] dynamic_sizes(%n) : tensor<?xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
