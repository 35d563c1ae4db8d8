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

// -----

// A weight broadcast over the batch (torch.export's linear over a
// non-contiguous input: expand + bmm) is read in place: matmul broadcasts
// batch dimensions itself. Through a reshape to its own shape too, and on
// the lhs.
// CHECK-LABEL: func.func @matmul_of_batch_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<8x16x32xf32>, %[[W:.*]]: tensor<32x24xf32>, %[[V:.*]]: tensor<1x16x32xf32>, %[[Y:.*]]: tensor<4x32x24xf32>)
// CHECK-NEXT: %[[P:.*]] = dl.matmul %[[X]], %[[W]] : (tensor<8x16x32xf32>, tensor<32x24xf32>) -> tensor<8x16x24xf32>
// CHECK-NEXT: %[[Q:.*]] = dl.matmul %[[V]], %[[Y]] : (tensor<1x16x32xf32>, tensor<4x32x24xf32>) -> tensor<4x16x24xf32>
// CHECK-NEXT: return %[[P]], %[[Q]]
func.func @matmul_of_batch_broadcast(%x: tensor<8x16x32xf32>, %w: tensor<32x24xf32>, %v: tensor<1x16x32xf32>, %y: tensor<4x32x24xf32>) -> (tensor<8x16x24xf32>, tensor<4x16x24xf32>) {
  %b = dl.broadcast_to %w shape = [8, 32, 24] : tensor<32x24xf32> -> tensor<8x32x24xf32>
  %r = dl.reshape %b shape = [8, 32, 24] : tensor<8x32x24xf32> -> tensor<8x32x24xf32>
  %p = dl.matmul %x, %r : (tensor<8x16x32xf32>, tensor<8x32x24xf32>) -> tensor<8x16x24xf32>
  %vb = dl.broadcast_to %v shape = [4, 16, 32] : tensor<1x16x32xf32> -> tensor<4x16x32xf32>
  %q = dl.matmul %vb, %y : (tensor<4x16x32xf32>, tensor<4x32x24xf32>) -> tensor<4x16x24xf32>
  return %p, %q : tensor<8x16x24xf32>, tensor<4x16x24xf32>
}

// -----

// A broadcast already folded (a constant whose matrices are all equal) is
// one matrix too; a constant with different matrices is not.
// CHECK-LABEL: func.func @matmul_of_equal_constant_matrices
// CHECK-DAG: %[[M:.*]] = dl.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: %[[D:.*]] = dl.constant dense<{{.*}}> : tensor<3x2x2xf32>
// CHECK-DAG: dl.matmul %arg0, %[[M]] : (tensor<3x4x2xf32>, tensor<2x2xf32>) -> tensor<3x4x2xf32>
// CHECK-DAG: dl.matmul %arg0, %[[D]] : (tensor<3x4x2xf32>, tensor<3x2x2xf32>) -> tensor<3x4x2xf32>
func.func @matmul_of_equal_constant_matrices(%x: tensor<3x4x2xf32>) -> (tensor<3x4x2xf32>, tensor<3x4x2xf32>) {
  %same = dl.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]]> : tensor<3x2x2xf32>
  %other = dl.constant dense<[[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 5.0]]]> : tensor<3x2x2xf32>
  %p = dl.matmul %x, %same : (tensor<3x4x2xf32>, tensor<3x2x2xf32>) -> tensor<3x4x2xf32>
  %q = dl.matmul %x, %other : (tensor<3x4x2xf32>, tensor<3x2x2xf32>) -> tensor<3x4x2xf32>
  return %p, %q : tensor<3x4x2xf32>, tensor<3x4x2xf32>
}

// -----

// Kept where the broadcast makes the batch (the other operand has none, so
// the product would lose it) or widens a matrix dimension.
// CHECK-LABEL: func.func @matmul_of_batch_broadcast_refused
// CHECK: %[[B:.*]] = dl.broadcast_to %arg1 shape = [8, 32, 24]
// CHECK: dl.matmul %arg0, %[[B]] : (tensor<16x32xf32>, tensor<8x32x24xf32>)
// CHECK: %[[C:.*]] = dl.broadcast_to %arg2 shape = [32, 24]
// CHECK: dl.matmul %arg3, %[[C]] : (tensor<8x16x32xf32>, tensor<32x24xf32>)
func.func @matmul_of_batch_broadcast_refused(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>, %row: tensor<1x24xf32>, %z: tensor<8x16x32xf32>) -> (tensor<8x16x24xf32>, tensor<8x16x24xf32>) {
  %b = dl.broadcast_to %w shape = [8, 32, 24] : tensor<32x24xf32> -> tensor<8x32x24xf32>
  %p = dl.matmul %x, %b : (tensor<16x32xf32>, tensor<8x32x24xf32>) -> tensor<8x16x24xf32>
  %c = dl.broadcast_to %row shape = [32, 24] : tensor<1x24xf32> -> tensor<32x24xf32>
  %q = dl.matmul %z, %c : (tensor<8x16x32xf32>, tensor<32x24xf32>) -> tensor<8x16x24xf32>
  return %p, %q : tensor<8x16x24xf32>, tensor<8x16x24xf32>
}

// -----

// A broadcast of a constant is folded while small (or at most 4x its
// input); past 2^20 elements and 4x its input it stays a broadcast (a weight
// copied per batch element is not made a constant of its own).
// CHECK-LABEL: func.func @broadcast_fold_limit
// CHECK-DAG: %[[W:.*]] = dl.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: dl.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [1.000000e+00, 2.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG: dl.broadcast_to %[[W]] shape = [1024, 1025, 2]
func.func @broadcast_fold_limit() -> (tensor<2x2xf32>, tensor<1024x1025x2xf32>) {
  %w = dl.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %small = dl.broadcast_to %w shape = [2, 2] : tensor<2xf32> -> tensor<2x2xf32>
  %large = dl.broadcast_to %w shape = [1024, 1025, 2] : tensor<2xf32> -> tensor<1024x1025x2xf32>
  return %small, %large : tensor<2x2xf32>, tensor<1024x1025x2xf32>
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

// -----

// torch.export's nn.Linear (rows flattened, product, rows restored) and its
// batched attention products (batch dims regrouped) are one N-D matmul, as
// ONNX's MatMul gives them.
// CHECK-LABEL: func.func @matmul_through_reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x7x16xf32>, %[[W:.*]]: tensor<16x32xf32>, %[[A:.*]]: tensor<1x6x9x4xf32>, %[[B:.*]]: tensor<1x6x4x9xf32>)
// CHECK-NEXT: %[[L:.*]] = dl.matmul %[[X]], %[[W]] : (tensor<2x7x16xf32>, tensor<16x32xf32>) -> tensor<2x7x32xf32>
// CHECK-NEXT: %[[M:.*]] = dl.matmul %[[A]], %[[B]] : (tensor<1x6x9x4xf32>, tensor<1x6x4x9xf32>) -> tensor<1x6x9x9xf32>
// CHECK-NEXT: return %[[L]], %[[M]]
func.func @matmul_through_reshapes(%x: tensor<2x7x16xf32>, %w: tensor<16x32xf32>, %a: tensor<1x6x9x4xf32>, %b: tensor<1x6x4x9xf32>) -> (tensor<2x7x32xf32>, tensor<1x6x9x9xf32>) {
  %0 = dl.reshape %x shape = [14, 16] : tensor<2x7x16xf32> -> tensor<14x16xf32>
  %1 = dl.matmul %0, %w : (tensor<14x16xf32>, tensor<16x32xf32>) -> tensor<14x32xf32>
  %2 = dl.reshape %1 shape = [2, 7, 32] : tensor<14x32xf32> -> tensor<2x7x32xf32>
  %3 = dl.reshape %a shape = [6, 9, 4] : tensor<1x6x9x4xf32> -> tensor<6x9x4xf32>
  %4 = dl.reshape %b shape = [6, 4, 9] : tensor<1x6x4x9xf32> -> tensor<6x4x9xf32>
  %5 = dl.matmul %3, %4 : (tensor<6x9x4xf32>, tensor<6x4x9xf32>) -> tensor<6x9x9xf32>
  %6 = dl.reshape %5 shape = [1, 6, 9, 9] : tensor<6x9x9xf32> -> tensor<1x6x9x9xf32>
  return %2, %6 : tensor<2x7x32xf32>, tensor<1x6x9x9xf32>
}

// -----

// A batched product of reshapes flattened to one dimension (the importer
// fuzzer's attention output `.reshape(-1)`, seed 626501 program 84): no
// batch and matrix to split, so it is left alone (the pattern split the
// rank-1 shape first and aborted).
// CHECK-LABEL: func.func @batched_matmul_flattened
// CHECK: dl.matmul %{{.*}} -> tensor<16x2x2xf32>
// CHECK: dl.reshape %{{.*}} shape = [64] : tensor<16x2x2xf32> -> tensor<64xf32>
func.func @batched_matmul_flattened(%a: tensor<8x2x2x2xf32>, %b: tensor<8x2x2x2xf32>) -> tensor<64xf32> {
  %0 = dl.reshape %a shape = [16, 2, 2] : tensor<8x2x2x2xf32> -> tensor<16x2x2xf32>
  %1 = dl.reshape %b shape = [16, 2, 2] : tensor<8x2x2x2xf32> -> tensor<16x2x2xf32>
  %2 = dl.matmul %0, %1 : (tensor<16x2x2xf32>, tensor<16x2x2xf32>) -> tensor<16x2x2xf32>
  %3 = dl.reshape %2 shape = [64] : tensor<16x2x2xf32> -> tensor<64xf32>
  return %3 : tensor<64xf32>
}

// -----

// Kept: an outer reshape that changes N, an inner one that moves elements
// across K, and a product with another user. Batches regrouped differently
// on the two sides ([2, 3] and [3, 2], both 6 in row-major order) become
// one reshape of the side that lacks the outer batch dimensions.
// CHECK-LABEL: func.func @matmul_reshapes_kept
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<2x3x9x4xf32>, %[[B:[a-z0-9]+]]: tensor<3x2x4x9xf32>)
// CHECK: dl.matmul %{{.*}} -> tensor<14x32xf32>
// CHECK: dl.reshape %{{.*}} shape = [7, 2, 4, 8]
// CHECK: dl.matmul %{{.*}} -> tensor<7x32xf32>
// CHECK: %[[B2:.*]] = dl.reshape %[[B]] shape = [2, 3, 4, 9]
// CHECK-NEXT: dl.matmul %[[A]], %[[B2]] : (tensor<2x3x9x4xf32>, tensor<2x3x4x9xf32>) -> tensor<2x3x9x9xf32>
// CHECK: dl.matmul %{{.*}} -> tensor<14x32xf32>
// CHECK: return
func.func @matmul_reshapes_kept(%x: tensor<2x7x16xf32>, %w: tensor<16x32xf32>, %y: tensor<2x7x16xf32>, %v: tensor<32x32xf32>, %a: tensor<2x3x9x4xf32>, %b: tensor<3x2x4x9xf32>) -> (tensor<7x2x4x8xf32>, tensor<7x32xf32>, tensor<2x3x9x9xf32>, tensor<2x7x32xf32>, tensor<14x32xf32>) {
  %0 = dl.reshape %x shape = [14, 16] : tensor<2x7x16xf32> -> tensor<14x16xf32>
  %1 = dl.matmul %0, %w : (tensor<14x16xf32>, tensor<16x32xf32>) -> tensor<14x32xf32>
  %2 = dl.reshape %1 shape = [7, 2, 4, 8] : tensor<14x32xf32> -> tensor<7x2x4x8xf32>
  %3 = dl.reshape %y shape = [7, 32] : tensor<2x7x16xf32> -> tensor<7x32xf32>
  %4 = dl.matmul %3, %v : (tensor<7x32xf32>, tensor<32x32xf32>) -> tensor<7x32xf32>
  %5 = dl.reshape %a shape = [6, 9, 4] : tensor<2x3x9x4xf32> -> tensor<6x9x4xf32>
  %6 = dl.reshape %b shape = [6, 4, 9] : tensor<3x2x4x9xf32> -> tensor<6x4x9xf32>
  %7 = dl.matmul %5, %6 : (tensor<6x9x4xf32>, tensor<6x4x9xf32>) -> tensor<6x9x9xf32>
  %8 = dl.reshape %7 shape = [2, 3, 9, 9] : tensor<6x9x9xf32> -> tensor<2x3x9x9xf32>
  %9 = dl.reshape %y shape = [14, 16] : tensor<2x7x16xf32> -> tensor<14x16xf32>
  %10 = dl.matmul %9, %w : (tensor<14x16xf32>, tensor<16x32xf32>) -> tensor<14x32xf32>
  %11 = dl.reshape %10 shape = [2, 7, 32] : tensor<14x32xf32> -> tensor<2x7x32xf32>
  return %2, %4, %8, %11, %10 : tensor<7x2x4x8xf32>, tensor<7x32xf32>, tensor<2x3x9x9xf32>, tensor<2x7x32xf32>, tensor<14x32xf32>
}

// -----

// A gather of constant indices from a constant folds (Swin's relative
// position bias table); negative indices count from the end, out-of-range
// ones clamp, as at run time.
// CHECK-LABEL: func.func @fold_gather
// CHECK-NEXT: %[[G:.*]] = dl.constant dense<{{\[}}{{\[}}[1.000000e+00, 3.000000e+00], [3.000000e+00, 2.000000e+00], [3.000000e+00, 1.000000e+00]], {{\[}}[4.000000e+00, 6.000000e+00], [6.000000e+00, 5.000000e+00], [6.000000e+00, 4.000000e+00]]]> : tensor<2x3x2xf32>
// CHECK-NEXT: %[[H:.*]] = dl.constant dense<{{\[}}[10, 11], [16, 17], [14, 15]]> : tensor<3x2xi64>
// CHECK-NEXT: return %[[G]], %[[H]]
func.func @fold_gather() -> (tensor<2x3x2xf32>, tensor<3x2xi64>) {
  %t = dl.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %i = dl.constant dense<[[0, -1], [5, 1], [2, 0]]> : tensor<3x2xi64>
  %g = dl.gather %t, %i axis = 1 : (tensor<2x3xf32>, tensor<3x2xi64>) -> tensor<2x3x2xf32>
  %e = dl.constant dense<[[10, 11], [12, 13], [14, 15], [16, 17]]> : tensor<4x2xi64>
  %j = dl.constant dense<[0, 3, -2]> : tensor<3xi64>
  %h = dl.gather %e, %j axis = 0 : (tensor<4x2xi64>, tensor<3xi64>) -> tensor<3x2xi64>
  return %g, %h : tensor<2x3x2xf32>, tensor<3x2xi64>
}

// -----

// A gather from a table of run-time values stays.
// CHECK-LABEL: func.func @gather_of_an_argument
// CHECK: dl.gather
func.func @gather_of_an_argument(%t: tensor<4x2xf32>) -> tensor<3x2xf32> {
  %j = dl.constant dense<[0, 3, 1]> : tensor<3xi64>
  %h = dl.gather %t, %j axis = 0 : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %h : tensor<3x2xf32>
}

// -----

// Bitwise ops on bools are the logical ones; a gather of one constant index
// is a slice (and a reshape dropping the axis); a gather of an [N, 1]
// column whose unit dimension is reshaped away gathers from [N].
// CHECK-LABEL: func.func @gathers_and_bools
// CHECK-SAME: (%[[A:.*]]: tensor<2x7xi1>, %[[B:.*]]: tensor<2x7xi1>, %[[X:.*]]: tensor<1x5x8xf32>, %[[C:.*]]: tensor<14x1xi1>, %[[I:.*]]: tensor<2x7xi64>)
// CHECK-NEXT: %[[AND:.*]] = dl.logical_and %[[A]], %[[B]]
// CHECK-NEXT: %[[OR:.*]] = dl.logical_or %[[A]], %[[B]]
// CHECK-NEXT: %[[XOR:.*]] = dl.logical_xor %[[A]], %[[B]]
// CHECK-NEXT: %[[S:.*]] = dl.slice %[[X]] starts = [0, 4, 0] sizes = [1, 1, 8] strides = [1, 1, 1]
// CHECK-NEXT: %[[R:.*]] = dl.reshape %[[S]] shape = [1, 8]
// CHECK-NEXT: %[[FLAT:.*]] = dl.reshape %[[C]] shape = [14]
// CHECK-NEXT: %[[G:.*]] = dl.gather %[[FLAT]], %[[I]] axis = 0 : (tensor<14xi1>, tensor<2x7xi64>) -> tensor<2x7xi1>
// CHECK-NEXT: return %[[AND]], %[[OR]], %[[XOR]], %[[R]], %[[G]]
func.func @gathers_and_bools(%a: tensor<2x7xi1>, %b: tensor<2x7xi1>, %x: tensor<1x5x8xf32>, %c: tensor<14x1xi1>, %i: tensor<2x7xi64>) -> (tensor<2x7xi1>, tensor<2x7xi1>, tensor<2x7xi1>, tensor<1x8xf32>, tensor<2x7xi1>) {
  %0 = dl.bitwise_and %a, %b : (tensor<2x7xi1>, tensor<2x7xi1>) -> tensor<2x7xi1>
  %1 = dl.bitwise_or %a, %b : (tensor<2x7xi1>, tensor<2x7xi1>) -> tensor<2x7xi1>
  %2 = dl.bitwise_xor %a, %b : (tensor<2x7xi1>, tensor<2x7xi1>) -> tensor<2x7xi1>
  %minus = dl.constant dense<-1> : tensor<i64>
  %3 = dl.gather %x, %minus axis = 1 : (tensor<1x5x8xf32>, tensor<i64>) -> tensor<1x8xf32>
  %4 = dl.gather %c, %i axis = 0 : (tensor<14x1xi1>, tensor<2x7xi64>) -> tensor<2x7x1xi1>
  %5 = dl.reshape %4 shape = [2, 7] : tensor<2x7x1xi1> -> tensor<2x7xi1>
  return %0, %1, %2, %3, %5 : tensor<2x7xi1>, tensor<2x7xi1>, tensor<2x7xi1>, tensor<1x8xf32>, tensor<2x7xi1>
}

// -----

// Kept: bitwise ops on integers, a gather of several constant indices, a
// gather of a column whose result keeps its unit dimension.
// CHECK-LABEL: func.func @gathers_and_integers_kept
// CHECK: dl.bitwise_and
// CHECK: dl.gather
// CHECK: dl.gather
// CHECK: return
func.func @gathers_and_integers_kept(%a: tensor<4xi32>, %b: tensor<4xi32>, %x: tensor<5x8xf32>, %c: tensor<14x1xi1>, %i: tensor<3xi64>) -> (tensor<4xi32>, tensor<2x8xf32>, tensor<3x1xi1>) {
  %0 = dl.bitwise_and %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %two = dl.constant dense<[1, 3]> : tensor<2xi64>
  %1 = dl.gather %x, %two axis = 0 : (tensor<5x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  %2 = dl.gather %c, %i axis = 0 : (tensor<14x1xi1>, tensor<3xi64>) -> tensor<3x1xi1>
  return %0, %1, %2 : tensor<4xi32>, tensor<2x8xf32>, tensor<3x1xi1>
}

// -----

// [B, H, S, D] -> [B*H, S, D], the last two swapped, split back: one
// transpose, composed with the one before it.
// CHECK-LABEL: func.func @batch_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x30x4x8xf32>)
// CHECK-NEXT: %[[T:.*]] = dl.transpose %[[X]] perm = [0, 2, 3, 1] : tensor<2x30x4x8xf32> -> tensor<2x4x8x30xf32>
// CHECK-NEXT: return %[[T]]
func.func @batch_transpose(%x: tensor<2x30x4x8xf32>) -> tensor<2x4x8x30xf32> {
  %0 = dl.transpose %x perm = [0, 2, 1, 3] : tensor<2x30x4x8xf32> -> tensor<2x4x30x8xf32>
  %1 = dl.reshape %0 shape = [8, 30, 8] : tensor<2x4x30x8xf32> -> tensor<8x30x8xf32>
  %2 = dl.transpose %1 perm = [0, 2, 1] : tensor<8x30x8xf32> -> tensor<8x8x30xf32>
  %3 = dl.reshape %2 shape = [2, 4, 8, 30] : tensor<8x8x30xf32> -> tensor<2x4x8x30xf32>
  return %3 : tensor<2x4x8x30xf32>
}

// -----

// Kept: a transpose that moves the merged dimension, an outer reshape that
// splits it otherwise.
// CHECK-LABEL: func.func @batch_transpose_kept
// CHECK-COUNT-2: dl.transpose
// CHECK: return
func.func @batch_transpose_kept(%x: tensor<2x4x30x8xf32>) -> (tensor<30x8x8xf32>, tensor<4x2x8x30xf32>) {
  %0 = dl.reshape %x shape = [8, 30, 8] : tensor<2x4x30x8xf32> -> tensor<8x30x8xf32>
  %1 = dl.transpose %0 perm = [1, 0, 2] : tensor<8x30x8xf32> -> tensor<30x8x8xf32>
  %2 = dl.reshape %x shape = [8, 30, 8] : tensor<2x4x30x8xf32> -> tensor<8x30x8xf32>
  %3 = dl.transpose %2 perm = [0, 2, 1] : tensor<8x30x8xf32> -> tensor<8x8x30xf32>
  %4 = dl.reshape %3 shape = [4, 2, 8, 30] : tensor<8x8x30xf32> -> tensor<4x2x8x30xf32>
  return %1, %4 : tensor<30x8x8xf32>, tensor<4x2x8x30xf32>
}

// -----

// A product of constants folds: integers (a cumulative sum as a product
// with a triangle, broadcast over a batch) and floats.
// CHECK-LABEL: func.func @fold_matmul
// CHECK-NEXT: %[[I:.*]] = dl.constant dense<{{\[}}{{\[}}[1, 3, 6], [4, 9, 15]]]> : tensor<1x2x3xi64>
// CHECK-NEXT: %[[F:.*]] = dl.constant dense<{{\[}}[1.900000e+01, 2.200000e+01], [4.300000e+01, 5.000000e+01]]> : tensor<2x2xf32>
// CHECK-NEXT: return %[[I]], %[[F]]
func.func @fold_matmul() -> (tensor<1x2x3xi64>, tensor<2x2xf32>) {
  %x = dl.constant dense<[[[1, 2, 3], [4, 5, 6]]]> : tensor<1x2x3xi64>
  %t = dl.constant dense<[[1, 1, 1], [0, 1, 1], [0, 0, 1]]> : tensor<3x3xi64>
  %0 = dl.matmul %x, %t : (tensor<1x2x3xi64>, tensor<3x3xi64>) -> tensor<1x2x3xi64>
  %a = dl.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = dl.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %1 = dl.matmul %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<1x2x3xi64>, tensor<2x2xf32>
}

// -----

// Unsigned constants fold with unsigned semantics: 200 : ui8 is above 3 (as
// i8 it would be -56), its quotient by 3 is 66, sums wrap modulo 256, and a
// float folds to ui8 within [0, 256) only.
// CHECK-LABEL: func.func @fold_unsigned
// CHECK-DAG: dl.constant dense<[200, 3]> : tensor<2xui8>
// CHECK-DAG: dl.constant dense<false> : tensor<2xi1>
// CHECK-DAG: dl.constant dense<[66, 1]> : tensor<2xui8>
// CHECK-DAG: dl.constant dense<[144, 6]> : tensor<2xui8>
// CHECK-DAG: dl.constant dense<[250, 7]> : tensor<2xui8>
// CHECK-DAG: dl.constant dense<[2.000000e+02, 3.000000e+00]> : tensor<2xf32>
// CHECK: dl.cast %{{.*}} : tensor<2xf32> -> tensor<2xui8>
// CHECK-NOT: dl.maximum
// CHECK-NOT: dl.less
func.func @fold_unsigned() -> (tensor<2xui8>, tensor<2xi1>, tensor<2xui8>, tensor<2xui8>, tensor<2xui8>, tensor<2xf32>, tensor<2xui8>) {
  %a = dl.constant dense<[200, 3]> : tensor<2xui8>
  %b = dl.constant dense<[3, 3]> : tensor<2xui8>
  %0 = dl.maximum %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %1 = dl.less %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xi1>
  %2 = dl.div %a, %b : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %3 = dl.add %a, %a : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %f = dl.constant dense<[250.5, 7.0]> : tensor<2xf32>
  %4 = dl.cast %f : tensor<2xf32> -> tensor<2xui8>
  %5 = dl.cast %a : tensor<2xui8> -> tensor<2xf32>
  %g = dl.constant dense<[256.0, 7.0]> : tensor<2xf32>
  %6 = dl.cast %g : tensor<2xf32> -> tensor<2xui8>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2xui8>, tensor<2xi1>, tensor<2xui8>, tensor<2xui8>, tensor<2xui8>, tensor<2xf32>, tensor<2xui8>
}

// -----

// Transposes of constants fold on their raw bytes (f32, f16, i8, a 3-D
// permutation); a splat stays a splat; bool (bit-packed) goes the generic way.
// CHECK-LABEL: func.func @transpose_constants
// CHECK-DAG: dl.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-DAG: dl.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf16>
// CHECK-DAG: dl.constant dense<{{\[}}{{\[}}[0, 4, 8], [12, 16, 20]], {{\[}}[1, 5, 9], [13, 17, 21]], {{\[}}[2, 6, 10], [14, 18, 22]], {{\[}}[3, 7, 11], [15, 19, 23]]]> : tensor<4x2x3xi8>
// CHECK-DAG: dl.constant dense<7.000000e+00> : tensor<3x2xf32>
// CHECK-DAG: dl.constant dense<{{\[}}[true, false], [false, false], [true, true]]> : tensor<3x2xi1>
// CHECK-NOT: dl.transpose
func.func @transpose_constants() -> (tensor<3x2xf32>, tensor<2x2xf16>, tensor<4x2x3xi8>, tensor<3x2xf32>, tensor<3x2xi1>) {
  %a = dl.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %at = dl.transpose %a perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %h = dl.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf16>
  %ht = dl.transpose %h perm = [1, 0] : tensor<2x2xf16> -> tensor<2x2xf16>
  %i = dl.constant dense<[[[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], [[12, 13, 14, 15], [16, 17, 18, 19], [20, 21, 22, 23]]]> : tensor<2x3x4xi8>
  %it = dl.transpose %i perm = [2, 0, 1] : tensor<2x3x4xi8> -> tensor<4x2x3xi8>
  %s = dl.constant dense<7.0> : tensor<2x3xf32>
  %st = dl.transpose %s perm = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %b = dl.constant dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>
  %bt = dl.transpose %b perm = [1, 0] : tensor<2x3xi1> -> tensor<3x2xi1>
  return %at, %ht, %it, %st, %bt : tensor<3x2xf32>, tensor<2x2xf16>, tensor<4x2x3xi8>, tensor<3x2xf32>, tensor<3x2xi1>
}

// -----

// f32 products folded in float straight from the constants' storage (what
// folding in double and rounding gives: 1e30 * 1e30 overflows to inf, NaN
// stays NaN), a filter [2,1,1,3]
// times a per-filter scale [2,1,1,1] and a splat; i32 folds as before.
// CHECK-LABEL: func.func @fold_f32_storage
// CHECK-DAG: dl.constant dense<[3.000000e-01, 0x7F800000, 0x7FC00000, -6.000000e+00]> : tensor<4xf32>
// CHECK-DAG: dl.constant dense<{{\[}}{{\[}}{{\[}}[2.000000e+00, 4.000000e+00, 6.000000e+00]]], {{\[}}{{\[}}[-4.000000e+01, -5.000000e+01, -6.000000e+01]]]]> : tensor<2x1x1x3xf32>
// CHECK-DAG: dl.constant dense<[-1.500000e+00, -5.000000e-01, 5.000000e-01]> : tensor<3xf32>
// CHECK-DAG: dl.constant dense<[7, -3]> : tensor<2xi32>
// CHECK-NOT: dl.mul
// CHECK-NOT: dl.sub
// CHECK-NOT: dl.add
func.func @fold_f32_storage() -> (tensor<4xf32>, tensor<2x1x1x3xf32>, tensor<3xf32>, tensor<2xi32>) {
  %a = dl.constant dense<[0.1, 1.0e30, 0x7FC00000, -2.0]> : tensor<4xf32>
  %b = dl.constant dense<[3.0, 1.0e30, 1.0, 3.0]> : tensor<4xf32>
  %p = dl.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %filter = dl.constant dense<[[[[1.0, 2.0, 3.0]]], [[[4.0, 5.0, 6.0]]]]> : tensor<2x1x1x3xf32>
  %scale = dl.constant dense<[[[[2.0]]], [[[-10.0]]]]> : tensor<2x1x1x1xf32>
  %f = dl.mul %filter, %scale : (tensor<2x1x1x3xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x3xf32>
  %half = dl.constant dense<0.5> : tensor<f32>
  %v = dl.constant dense<[-1.0, 0.0, 1.0]> : tensor<3xf32>
  %s = dl.sub %v, %half : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %i = dl.constant dense<[3, -5]> : tensor<2xi32>
  %j = dl.constant dense<[4, 2]> : tensor<2xi32>
  %k = dl.add %i, %j : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %p, %f, %s, %k : tensor<4xf32>, tensor<2x1x1x3xf32>, tensor<3xf32>, tensor<2xi32>
}

// -----

// x * c and x + c fold to x when a non-splat c holds only 1 (only 0), and
// not when one element differs (isSplatOf stops at it).
// CHECK-LABEL: func.func @non_splat_identities
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[M:.*]] = dl.mul %[[X]]
// CHECK: return %[[X]], %[[X]], %[[M]]
func.func @non_splat_identities(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %ones = dl.constant dense<[1.0, 1.0, 1.0]> : tensor<3xf32>
  %zeros = dl.constant dense<[0.0, -0.0, 0.0]> : tensor<3xf32>
  %almost = dl.constant dense<[1.0, 1.0, 2.0]> : tensor<3xf32>
  %a = dl.mul %x, %ones : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %b = dl.add %zeros, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %c = dl.mul %x, %almost : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %a, %b, %c : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
