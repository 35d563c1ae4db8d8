// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},convert-dl-to-linalg)' | FileCheck %s

// Broadcasting is an indexing map: the rank-1 operand reads (d1), the size-1
// dimensions read index 0; nothing is copied. The dynamic size comes from the
// operand with the dynamic dimension.

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @add_broadcast
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[DIM:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<?x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<?x4xf32>, tensor<4xf32>) outs(%[[INIT]] : tensor<?x4xf32>)
// CHECK: arith.addf
// CHECK-NOT: dl.
func.func @add_broadcast(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %0 = dl.add %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, d2)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-LABEL: func @sub_int_broadcast_both
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #{{.*}}]
// CHECK: arith.subi
func.func @sub_int_broadcast_both(%c: tensor<3x1x4xi32>, %d: tensor<5x1xi32>) -> tensor<3x5x4xi32> {
  %0 = dl.sub %c, %d : (tensor<3x1x4xi32>, tensor<5x1xi32>) -> tensor<3x5x4xi32>
  return %0 : tensor<3x5x4xi32>
}

// -----

// CHECK-LABEL: func @mul_div_scalar
// CHECK: arith.mulf
// CHECK: arith.divf
// CHECK: arith.divsi
func.func @mul_div_scalar(%a: tensor<3xf32>, %s: tensor<f32>, %i: tensor<3xi64>) -> (tensor<3xf32>, tensor<3xi64>) {
  %0 = dl.mul %a, %s : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = dl.div %0, %s : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %2 = dl.div %i, %i : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %1, %2 : tensor<3xf32>, tensor<3xi64>
}

// -----

// CHECK-LABEL: func @unary
// CHECK: linalg.generic
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.maximumf %{{.*}}, %[[ZERO]] : f32
// CHECK: linalg.generic
// CHECK: math.exp %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: arith.maxsi
func.func @unary(%a: tensor<?x4xf32>, %b: tensor<3xi8>) -> (tensor<?x4xf32>, tensor<3xi8>) {
  %0 = dl.relu %a : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = dl.exp %0 : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = dl.relu %b : tensor<3xi8> -> tensor<3xi8>
  return %1, %2 : tensor<?x4xf32>, tensor<3xi8>
}

// -----

// 2-D matmul: linalg.matmul into a zero-filled init, M from lhs.
// CHECK-LABEL: func @matmul_2d
// CHECK-SAME: (%[[X:.*]]: tensor<?x784xf32>, %[[W:.*]]: tensor<784x128xf32>)
// CHECK: %[[M:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x784xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[M]]) : tensor<?x128xf32>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<?x128xf32>)
// The matmul carries its strategy (chosen for the target where the dl op
// carries none) to the loop nest its micro-kernel is built in.
// CHECK: linalg.matmul {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 4>} ins(%[[X]], %[[W]] : tensor<?x784xf32>, tensor<784x128xf32>) outs(%[[FILL]] : tensor<?x128xf32>)
func.func @matmul_2d(%x: tensor<?x784xf32>, %w: tensor<784x128xf32>) -> tensor<?x128xf32> {
  %0 = dl.matmul %x, %w : (tensor<?x784xf32>, tensor<784x128xf32>) -> tensor<?x128xf32>
  return %0 : tensor<?x128xf32>
}

// -----

// CHECK-LABEL: func @matmul_batched
// CHECK: linalg.batch_matmul {dl.strategy = {{.*}}} ins(%{{.*}}, %{{.*}} : tensor<?x3x4xf32>, tensor<?x4x5xf32>) outs(%{{.*}} : tensor<?x3x5xf32>)
func.func @matmul_batched(%p: tensor<?x3x4xf32>, %q: tensor<?x4x5xf32>) -> tensor<?x3x5xf32> {
  %0 = dl.matmul %p, %q : (tensor<?x3x4xf32>, tensor<?x4x5xf32>) -> tensor<?x3x5xf32>
  return %0 : tensor<?x3x5xf32>
}

// -----

// A linear layer on a batch of sequences, [batch..., M, K] x [K, N]: the
// batch dimensions and M are one dimension of rows, one 2-D linalg.matmul
// (B packed once, cache blocks sized for every row), expanded back.
// CHECK-LABEL: func @matmul_rows_of_a_batch
// CHECK-SAME: (%[[X:.*]]: tensor<?x128x768xf32>, %[[W:.*]]: tensor<768x3072xf32>)
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x128x768xf32>
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<?x128x768xf32> into tensor<?x768xf32>
// CHECK: %[[P:.*]] = linalg.matmul {dl.strategy = {{.*}}} ins(%[[ROWS]], %[[W]] : tensor<?x768xf32>, tensor<768x3072xf32>) outs(%{{.*}} : tensor<?x3072xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2]] output_shape [%[[B]], 128, 3072] : tensor<?x3072xf32> into tensor<?x128x3072xf32>
func.func @matmul_rows_of_a_batch(%x: tensor<?x128x768xf32>, %w: tensor<768x3072xf32>) -> tensor<?x128x3072xf32> {
  %0 = dl.matmul %x, %w : (tensor<?x128x768xf32>, tensor<768x3072xf32>) -> tensor<?x128x3072xf32>
  return %0 : tensor<?x128x3072xf32>
}

// -----

// Two dynamic row dimensions stay a generic contraction: their collapsed
// row dimension could not be expanded back (upstream's
// expand-strided-metadata takes one dynamic size per group).
// CHECK-LABEL: func @matmul_rows_two_dynamic
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x?x768xf32>, tensor<768x64xf32>)
func.func @matmul_rows_two_dynamic(%x: tensor<?x?x768xf32>, %w: tensor<768x64xf32>) -> tensor<?x?x64xf32> {
  %0 = dl.matmul %x, %w : (tensor<?x?x768xf32>, tensor<768x64xf32>) -> tensor<?x?x64xf32>
  return %0 : tensor<?x?x64xf32>
}

// -----

// Four dimensions and f16 (accumulated in f32, rounded before the expand).
// CHECK-LABEL: func @matmul_rows_of_a_batch_f16
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<2x3x4x5xf16> into tensor<24x5xf16>
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<24x5xf16>, tensor<5x6xf16>) outs(%{{.*}} : tensor<24x6xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] output_shape [2, 3, 4, 6] : tensor<24x6xf16> into tensor<2x3x4x6xf16>
func.func @matmul_rows_of_a_batch_f16(%x: tensor<2x3x4x5xf16>, %y: tensor<5x6xf16>) -> tensor<2x3x4x6xf16> {
  %0 = dl.matmul %x, %y : (tensor<2x3x4x5xf16>, tensor<5x6xf16>) -> tensor<2x3x4x6xf16>
  return %0 : tensor<2x3x4x6xf16>
}

// -----

// Broadcast batch dimensions: a generic contraction over (b0, b1, m, n, k).
// f16 products accumulate in f32 and are rounded once at the end.
// CHECK-DAG: #[[L:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[R:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @matmul_broadcast_batch
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x3x4x6xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[L]], #[[R]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x3x4x5xf16>, tensor<3x5x6xf16>) outs(%{{.*}} : tensor<2x3x4x6xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.addf %{{.*}}, %[[P]] : f32
// CHECK: linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @matmul_broadcast_batch(%x: tensor<2x3x4x5xf16>, %y: tensor<3x5x6xf16>) -> tensor<2x3x4x6xf16> {
  %0 = dl.matmul %x, %y : (tensor<2x3x4x5xf16>, tensor<3x5x6xf16>) -> tensor<2x3x4x6xf16>
  return %0 : tensor<2x3x4x6xf16>
}

// -----

// Reductions: linalg.reduce from the identity (-inf / INT_MIN for max, 0 for
// sum), then expand_shape puts the size-1 dimensions back for keepdims.
// CHECK-LABEL: func @reductions
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.*}} : tensor<?x5xf32>)
// CHECK: %[[MAX:.*]] = linalg.reduce { arith.maximumf } ins(%{{.*}} : tensor<?x4x5xf32>) outs(%{{.*}} : tensor<?x5xf32>) dimensions = [1]
// CHECK: tensor.expand_shape %[[MAX]] {{\[\[}}0, 1], [2]] output_shape [%{{.*}}, 1, 5] : tensor<?x5xf32> into tensor<?x1x5xf32>
// CHECK: %[[INTMIN:.*]] = arith.constant -2147483648 : i32
// CHECK: linalg.reduce { arith.maxsi }
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[SUM:.*]] = linalg.reduce { arith.addi{{.*}} } ins(%{{.*}} : tensor<2x3xi32>) outs(%{{.*}} : tensor<i32>) dimensions = [0, 1]
// CHECK: tensor.expand_shape %[[SUM]] [] output_shape [1, 1] : tensor<i32> into tensor<1x1xi32>
func.func @reductions(%a: tensor<?x4x5xf32>, %b: tensor<2x3xi32>) -> (tensor<?x1x5xf32>, tensor<2xi32>, tensor<1x1xi32>) {
  %0 = dl.reduce_max %a axes = [1] keepdims : tensor<?x4x5xf32> -> tensor<?x1x5xf32>
  %1 = dl.reduce_max %b axes = [1] : tensor<2x3xi32> -> tensor<2xi32>
  %2 = dl.reduce_sum %b axes = [0, 1] keepdims : tensor<2x3xi32> -> tensor<1x1xi32>
  return %0, %1, %2 : tensor<?x1x5xf32>, tensor<2xi32>, tensor<1x1xi32>
}

// -----

// Reducing over no axis is the identity.
// CHECK-LABEL: func @reduce_no_axes
// CHECK-SAME: (%[[A:.*]]: tensor<3xf32>)
// CHECK-NEXT: return %[[A]]
func.func @reduce_no_axes(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = dl.reduce_sum %a axes = [] : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func @transpose
// CHECK-SAME: (%[[A:.*]]: tensor<?x3x4xf32>)
// CHECK: %[[DIM:.*]] = tensor.dim %[[A]], %{{.*}}
// CHECK: %[[INIT:.*]] = tensor.empty(%[[DIM]]) : tensor<?x4x3xf32>
// CHECK: linalg.transpose ins(%[[A]] : tensor<?x3x4xf32>) outs(%[[INIT]] : tensor<?x4x3xf32>) permutation = [0, 2, 1]
func.func @transpose(%a: tensor<?x3x4xf32>) -> tensor<?x4x3xf32> {
  %0 = dl.transpose %a perm = [0, 2, 1] : tensor<?x3x4xf32> -> tensor<?x4x3xf32>
  return %0 : tensor<?x4x3xf32>
}

// -----

// Reshape: flatten to 1-D, then unflatten (views after bufferization).
// CHECK-LABEL: func @reshape
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<?x3x4xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [%{{.*}}, 12] : tensor<?xf32> into tensor<?x12xf32>
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 1] : tensor<1xf32> into tensor<1x1xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<1x1xf32> into tensor<1xf32>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
func.func @reshape(%a: tensor<?x3x4xf32>, %s: tensor<f32>, %t: tensor<1x1xf32>) -> (tensor<?x12xf32>, tensor<1x1xf32>, tensor<f32>) {
  %0 = dl.reshape %a shape = [-1, 12] : tensor<?x3x4xf32> -> tensor<?x12xf32>
  %1 = dl.reshape %s shape = [1, 1] : tensor<f32> -> tensor<1x1xf32>
  %2 = dl.reshape %t shape = [] : tensor<1x1xf32> -> tensor<f32>
  return %0, %1, %2 : tensor<?x12xf32>, tensor<1x1xf32>, tensor<f32>
}

// -----

// Static shapes: only the groups of dimensions that merge are collapsed and
// only those that split are expanded ([R, J, p] read as [1, R, J*p] keeps R
// a dimension of its own); a pure collapse or expansion is one op.
// CHECK-LABEL: func @reshape_static
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<5x3x8xf32> into tensor<5x24xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [1, 5, 24] : tensor<5x24xf32> into tensor<1x5x24xf32>
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<5x3x8xf32> into tensor<120xf32>
// CHECK: tensor.expand_shape %arg1 {{\[\[}}0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK: %[[U:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0, 1]] : tensor<6x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[U]] {{\[\[}}0, 1, 2]] output_shape [4, 1, 6] : tensor<24xf32> into tensor<4x1x6xf32>
func.func @reshape_static(%a: tensor<5x3x8xf32>, %b: tensor<6x4xf32>) -> (tensor<1x5x24xf32>, tensor<120xf32>, tensor<2x3x4xf32>, tensor<4x1x6xf32>) {
  %0 = dl.reshape %a shape = [1, 5, 24] : tensor<5x3x8xf32> -> tensor<1x5x24xf32>
  %1 = dl.reshape %a shape = [120] : tensor<5x3x8xf32> -> tensor<120xf32>
  %2 = dl.reshape %b shape = [2, 3, 4] : tensor<6x4xf32> -> tensor<2x3x4xf32>
  %3 = dl.reshape %b shape = [4, 1, 6] : tensor<6x4xf32> -> tensor<4x1x6xf32>
  return %0, %1, %2, %3 : tensor<1x5x24xf32>, tensor<120xf32>, tensor<2x3x4xf32>, tensor<4x1x6xf32>
}

// -----

// Softmax: max-reduce, exp(x - max), sum-reduce, times the reciprocal of
// the row's sum (1 / sum depends on the row only: one division per row once
// the loop-invariant code moves out of the loop over it).
// CHECK-DAG: #[[FULL:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @softmax
// CHECK: %[[MAX:.*]] = linalg.reduce { arith.maximumf } ins(%{{.*}} : tensor<?x10xf32>) outs(%{{.*}} : tensor<?xf32>) dimensions = [1]
// CHECK: %[[EXP:.*]] = linalg.generic {indexing_maps = [#[[FULL]], #[[ROWS]], #[[FULL]]]{{.*}} ins(%{{.*}}, %[[MAX]] : tensor<?x10xf32>, tensor<?xf32>)
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.reduce { arith.addf } ins(%[[EXP]] : tensor<?x10xf32>) outs(%{{.*}} : tensor<?xf32>) dimensions = [1]
// CHECK: linalg.generic {indexing_maps = [#[[FULL]], #[[ROWS]], #[[FULL]]]{{.*}} ins(%[[EXP]], %[[SUM]] : tensor<?x10xf32>, tensor<?xf32>)
// CHECK: ^bb0(%[[E:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[INVERSE:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK: arith.mulf %[[E]], %[[INVERSE]] : f32
func.func @softmax(%a: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %0 = dl.softmax %a axis = 1 : tensor<?x10xf32> -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// -----

// CHECK-LABEL: func @constant
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @constant() -> tensor<2xf32> {
  %0 = dl.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// f16 sums accumulate in f32 and are rounded once at the end.
// CHECK-LABEL: func @half_sum
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%{{.*}} : tensor<4x5xf16>) outs(%{{.*}} : tensor<4xf32>) dimensions = [1]
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.addf %{{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @half_sum(%a: tensor<4x5xf16>) -> tensor<4xf16> {
  %0 = dl.reduce_sum %a axes = [1] : tensor<4x5xf16> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// A slice read backwards along a dimension: the elements read, as a slice
// with positive steps from the lowest index read, then reversed by a
// generic whose operands all have the result's extents (x[::-1, :3]; a map
// (3 - d0, d1) on the whole input failed linalg's shape check).
// CHECK-LABEL: func @reversed_slice
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 3] [1, 1] : tensor<4x5xf32> to tensor<4x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[REV:.*]], #{{.*}}], {{.*}} ins(%[[S]] : tensor<4x3xf32>)
func.func @reversed_slice(%x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %0 = dl.slice %x starts = [3, 0] sizes = [4, 3] strides = [-1, 1] : tensor<4x5xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// An empty slice reads nothing: x[:, 1:] of a 0x3 tensor is an empty
// tensor (extract_slice would refuse offset 0 of an empty dimension).
// CHECK-LABEL: func @empty_slice
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0x2xf32>
// CHECK: return %[[E]]
func.func @empty_slice(%x: tensor<0x3xf32>) -> tensor<0x2xf32> {
  %0 = dl.slice %x starts = [0, 1] sizes = [0, 2] strides = [1, 1] : tensor<0x3xf32> -> tensor<0x2xf32>
  return %0 : tensor<0x2xf32>
}

// -----

// An empty operand of a concatenation inserts nothing.
// CHECK-LABEL: func @concat_empty_last
// CHECK-COUNT-1: tensor.insert_slice
// CHECK-NOT: tensor.insert_slice
func.func @concat_empty_last(%x: tensor<4x5xf32>, %y: tensor<0x5xf32>) -> tensor<4x5xf32> {
  %0 = dl.concat %x, %y axis = 0 : (tensor<4x5xf32>, tensor<0x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
