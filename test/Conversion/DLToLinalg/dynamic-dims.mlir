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

// -----

// A convolution over an image of run-time size: each output size is
// max(0, (padded size - span) floordiv stride + 1) (an image smaller than the
// window gives an empty output), the im2col GEMM's pixel count their
// product, and the [N, F, OH*OW] result takes its two run-time sizes back
// through a shape tensor (one group, two dynamic sizes).
// CHECK-LABEL: func @conv_dynamic_image
// CHECK: %[[PADDED:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[H:.*]] = tensor.dim %[[PADDED]], %c2
// CHECK: %[[HS:.*]] = arith.subi %[[H]], %c3
// CHECK: %[[HQ:.*]] = arith.floordivsi %[[HS]], %c2
// CHECK: %[[HO:.*]] = arith.addi %[[HQ]], %c1
// CHECK: %[[OH:.*]] = arith.maxsi %[[HO]], %c0
// CHECK: %[[OW:.*]] = arith.maxsi
// CHECK: %[[PIXELS:.*]] = arith.muli %[[OH]], %[[OW]] : index
// CHECK: tensor.empty(%{{.*}}, %[[OH]], %[[OW]]) : tensor<?x?x?x3x3x3xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3, 4, 5]] : tensor<?x?x?x3x3x3xf32> into tensor<?x?x27xf32>
// CHECK: tensor.empty(%{{.*}}, %[[PIXELS]]) : tensor<?x?x8xf32>
// CHECK: dl.strategy = #dl.strategy<kind = im2col_gemm
// CHECK: %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %c8, %[[OH]], %[[OW]] : tensor<4xindex>
// CHECK: tensor.reshape %{{.*}}(%[[SHAPE]]) : (tensor<?x8x?xf32>, tensor<4xindex>) -> tensor<?x8x?x?xf32>
// LLVM-LABEL: llvm.func @conv_dynamic_image
func.func @conv_dynamic_image(%x: tensor<?x3x?x?xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x8x?x?xf32> {
  %0 = dl.conv2d %x, %w, %b strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" {dl.strategy = #dl.strategy<kind = im2col_gemm, rows = 4, vectors = 3, layout = "NCHW">} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// NHWC: the GEMM's rows are N*OH*OW; one run-time height alone keeps
// expand_shape (one dynamic size in its group).
// CHECK-LABEL: func @conv_nhwc_dynamic_height
// CHECK: linalg.matmul {dl.strategy = #dl.strategy<kind = im2col_gemm{{.*}}} ins(%{{.*}}, %{{.*}} : tensor<?x27xf32>, tensor<27x8xf32>)
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1, 2], [3]] output_shape [2, %{{.*}}, 7, 8] : tensor<?x8xf32> into tensor<2x?x7x8xf32>
// LLVM-LABEL: llvm.func @conv_nhwc_dynamic_height
func.func @conv_nhwc_dynamic_height(%x: tensor<2x?x7x3xf32>, %w: tensor<3x3x3x8xf32>) -> tensor<2x?x7x8xf32> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" {dl.strategy = #dl.strategy<kind = im2col_gemm, rows = 4, vectors = 3, layout = "NHWC">} : (tensor<2x?x7x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x?x7x8xf32>
  return %0 : tensor<2x?x7x8xf32>
}

// -----

// Average pooling without the padding in the divisor, over a run-time
// image: the divisor is computed per position from linalg.index (a static
// image has a constant table).
// CHECK-LABEL: func @avg_pool_dynamic_image
// CHECK: linalg.pooling_nchw_sum
// CHECK: linalg.generic
// CHECK: linalg.index 2
// CHECK: arith.minsi
// CHECK: linalg.index 3
// CHECK: arith.sitofp
// CHECK: arith.divf
// LLVM-LABEL: llvm.func @avg_pool_dynamic_image
func.func @avg_pool_dynamic_image(%x: tensor<1x4x?x?xf32>) -> tensor<1x4x?x?xf32> {
  %0 = dl.avg_pool2d %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = "NCHW" : tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %0 : tensor<1x4x?x?xf32>
}
