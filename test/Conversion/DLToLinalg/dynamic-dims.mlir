// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},convert-dl-to-linalg)' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-cpu-pipeline{target-cpu=znver3})' | FileCheck %s --check-prefix=LLVM

// Dynamic dimensions anywhere: every size comes from tensor.dim of the
// operand dimension it mirrors, or from the op's size operands.

// A transpose's sizes follow the permutation.
// CHECK-LABEL: func @transpose
// CHECK: %[[D2:.*]] = tensor.dim %arg0, %c2
// CHECK: %[[D1:.*]] = tensor.dim %arg0, %c1
// CHECK: tensor.empty(%[[D2]], %[[D1]]) : tensor<4x?x?xf32>
// CHECK: linalg.transpose
// LLVM-LABEL: llvm.func @transpose
func.func @transpose(%x: tensor<4x?x?xf32>) -> tensor<4x?x?xf32> {
  %0 = dl.transpose %x perm = [0, 2, 1] : tensor<4x?x?xf32> -> tensor<4x?x?xf32>
  return %0 : tensor<4x?x?xf32>
}

// -----

// Several run-time sizes in one reshape: a shape tensor (memref's
// expand_shape takes one dynamic size per group).
// CHECK-LABEL: func @split_heads
// CHECK: tensor.collapse_shape
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %arg1, %arg2, %{{.*}}, %{{.*}} : tensor<4xindex>
// CHECK: tensor.reshape %{{.*}}(%[[SHAPE]]) : (tensor<?xf32>, tensor<4xindex>) -> tensor<?x?x2x4xf32>
// LLVM-LABEL: llvm.func @split_heads
func.func @split_heads(%x: tensor<?x?x8xf32>, %b: index, %s: index) -> tensor<?x?x2x4xf32> {
  %0 = dl.reshape %x shape = [-1, -1, 2, 4] sizes(%b, %s) : tensor<?x?x8xf32> -> tensor<?x?x2x4xf32>
  return %0 : tensor<?x?x2x4xf32>
}

// -----

// A window of a run-time size is clamped to what the dimension holds from
// its start: min(n, ceil((extent - start) / stride)), never negative.
// CHECK-LABEL: func @window
// CHECK: %[[EXTENT:.*]] = tensor.dim %arg0
// CHECK: %[[LEFT:.*]] = arith.subi %[[EXTENT]]
// CHECK: %[[POS:.*]] = arith.maxsi %[[LEFT]]
// CHECK: %[[AVAIL:.*]] = arith.ceildivsi %[[POS]]
// CHECK: %[[MIN:.*]] = arith.minsi %arg1, %[[AVAIL]]
// CHECK: %[[N:.*]] = arith.maxsi %[[MIN]]
// CHECK: tensor.extract_slice %arg0[0, 1] [1, %[[N]]] [1, 2]
// LLVM-LABEL: llvm.func @window
func.func @window(%ids: tensor<1x16xi64>, %n: index) -> tensor<1x?xi64> {
  %0 = dl.slice %ids starts = [0, 1] sizes = [1, -1] strides = [1, 2] dynamic_sizes(%n) : tensor<1x16xi64> -> tensor<1x?xi64>
  return %0 : tensor<1x?xi64>
}

// -----

// iota: linalg.index of its one loop, converted to the element type.
// CHECK-LABEL: func @iota
// CHECK: tensor.empty(%arg0) : tensor<?xf32>
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: arith.sitofp
// LLVM-LABEL: llvm.func @iota
func.func @iota(%n: index) -> tensor<?xf32> {
  %0 = dl.iota %n : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// A size read from a bool tensor follows it to its i8 storage.
// CHECK-LABEL: func @bool_dim
// CHECK: tensor.dim %{{.*}}, %{{.*}} : tensor<?x?xi8>
// LLVM-LABEL: llvm.func @bool_dim
func.func @bool_dim(%m: tensor<?x?xi1>) -> index {
  %c1 = arith.constant 1 : index
  %0 = tensor.dim %m, %c1 : tensor<?x?xi1>
  return %0 : index
}
