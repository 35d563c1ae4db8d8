// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-pack-weights{panel=2})' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-pack-weights{panel=2 max-rows=4 report=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-pack-weights)' | FileCheck %s --check-prefix=ZEN3
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},dl-pack-weights)' | FileCheck %s --check-prefix=ZEN4
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-pack-weights{panel=2 convolutions=false})' | FileCheck %s --check-prefix=NOCONV
// RUN: not dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-pack-weights{max-rows=0})' 2>&1 | FileCheck %s --check-prefix=BADROWS
// RUN: not dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-pack-weights{panel=-3})' 2>&1 | FileCheck %s --check-prefix=BADPANEL
// RUN: not dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-pack-weights{conv-max-rows=0})' 2>&1 | FileCheck %s --check-prefix=BADCONVROWS

// One row times a constant [2, 5] in panels of 2 columns: W padded to 6
// columns and laid out as [3, 2, 2] (panel j holds columns 2j, 2j+1 of
// every row, zeros past the last column); the product is batched over the
// panels, reshaped to [1, 6] and sliced to its 5 columns.
// CHECK-LABEL: func.func @one_row
// CHECK-DAG: %[[P:.*]] = dl.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00], [5.000000e+00, 6.000000e+00]], {{\[\[}}2.000000e+00, 3.000000e+00], [7.000000e+00, 8.000000e+00]], {{\[\[}}4.000000e+00, 0.000000e+00], [9.000000e+00, 0.000000e+00]]]> : tensor<3x2x2xf32>
// CHECK: %[[X:.*]] = dl.reshape %arg0 shape = [1, 1, 2] : tensor<1x2xf32> -> tensor<1x1x2xf32>
// CHECK: %[[Y:.*]] = dl.matmul %[[X]], %[[P]] : (tensor<1x1x2xf32>, tensor<3x2x2xf32>) -> tensor<3x1x2xf32>
// CHECK-NOT: dl.transpose
// CHECK: %[[R:.*]] = dl.reshape %[[Y]] shape = [1, 6] : tensor<3x1x2xf32> -> tensor<1x6xf32>
// CHECK: %[[S:.*]] = dl.slice %[[R]] starts = [0, 0] sizes = [1, 5] strides = [1, 1] : tensor<1x6xf32> -> tensor<1x5xf32>
// CHECK: %[[O:.*]] = dl.reshape %[[S]] shape = [1, 5] : tensor<1x5xf32> -> tensor<1x5xf32>
// CHECK: return %[[O]]
// REPORT: remark: dl-pack-weights: weight packed in panels of 2 columns
func.func @one_row(%x: tensor<1x2xf32>) -> tensor<1x5xf32> {
  %w = dl.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0]]> : tensor<2x5xf32>
  %y = dl.matmul %x, %w : (tensor<1x2xf32>, tensor<2x5xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}

// -----

// W as the transpose of a constant [N, K] (a linear layer's weight, a tied
// embedding too large for the folders): packed from it, the same panels as
// above; the transpose and the constant go with their last user.
// CHECK-LABEL: func.func @transposed_weight
// CHECK-NOT: tensor<5x2xf32>
// CHECK-DAG: %[[P:.*]] = dl.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00], [5.000000e+00, 6.000000e+00]], {{\[\[}}2.000000e+00, 3.000000e+00], [7.000000e+00, 8.000000e+00]], {{\[\[}}4.000000e+00, 0.000000e+00], [9.000000e+00, 0.000000e+00]]]> : tensor<3x2x2xf32>
// CHECK-NOT: dl.transpose
// CHECK: dl.matmul %{{.*}}, %[[P]]
// CHECK-NOT: dl.transpose
// CHECK: return
// Another user keeps the transpose (and the constant) where it is.
// CHECK-LABEL: func.func @transposed_weight_used_twice
// CHECK: dl.constant {{.*}} : tensor<5x2xf32>
// CHECK: dl.transpose
// CHECK: dl.matmul {{.*}} tensor<3x2x2xf32>
// Too many rows to pack (dynamic here): the transposed weight is computed
// as a constant instead, and the matmul reads it.
// CHECK-LABEL: func.func @transposed_weight_many_rows
// CHECK: %[[W:.*]] = dl.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00]]> : tensor<2x5xf32>
// CHECK-NOT: dl.transpose
// CHECK: dl.matmul %arg0, %[[W]] : (tensor<?x2xf32>, tensor<2x5xf32>) -> tensor<?x5xf32>
// REPORT: remark: dl-pack-weights: left alone: dynamic rows
// REPORT: remark: dl-pack-weights: the transpose of its constant weight computed at compile time
func.func @transposed_weight(%x: tensor<1x2xf32>) -> tensor<1x5xf32> {
  %wt = dl.constant dense<[[0.0, 5.0], [1.0, 6.0], [2.0, 7.0], [3.0, 8.0], [4.0, 9.0]]> : tensor<5x2xf32>
  %w = dl.transpose %wt perm = [1, 0] : tensor<5x2xf32> -> tensor<2x5xf32>
  %y = dl.matmul %x, %w : (tensor<1x2xf32>, tensor<2x5xf32>) -> tensor<1x5xf32>
  return %y : tensor<1x5xf32>
}
func.func @transposed_weight_used_twice(%x: tensor<1x2xf32>) -> (tensor<1x5xf32>, tensor<2x5xf32>) {
  %wt = dl.constant dense<[[0.0, 5.0], [1.0, 6.0], [2.0, 7.0], [3.0, 8.0], [4.0, 9.0]]> : tensor<5x2xf32>
  %w = dl.transpose %wt perm = [1, 0] : tensor<5x2xf32> -> tensor<2x5xf32>
  %y = dl.matmul %x, %w : (tensor<1x2xf32>, tensor<2x5xf32>) -> tensor<1x5xf32>
  return %y, %w : tensor<1x5xf32>, tensor<2x5xf32>
}
func.func @transposed_weight_many_rows(%x: tensor<?x2xf32>) -> tensor<?x5xf32> {
  %wt = dl.constant dense<[[0.0, 5.0], [1.0, 6.0], [2.0, 7.0], [3.0, 8.0], [4.0, 9.0]]> : tensor<5x2xf32>
  %w = dl.transpose %wt perm = [1, 0] : tensor<5x2xf32> -> tensor<2x5xf32>
  %y = dl.matmul %x, %w : (tensor<?x2xf32>, tensor<2x5xf32>) -> tensor<?x5xf32>
  return %y : tensor<?x5xf32>
}

// -----

// A weight that several products share, each use with its own constant op
// as the importers write them (ALBERT runs its one layer 12 times): packed
// once, before the first product, which every product then reads; a square
// weight used as it is and transposed gets two packings; a transposed
// weight of products with too many rows is laid out once.
// CHECK-LABEL: func.func @shared_weight
// CHECK: %[[P:.*]] = dl.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00], [5.000000e+00, 6.000000e+00]]{{.*}} : tensor<3x2x2xf32>
// CHECK: dl.matmul %{{.*}}, %[[P]]
// CHECK-NOT: dl.constant {{.*}} : tensor<3x2x2xf32>
// CHECK: dl.matmul %{{.*}}, %[[P]]
// CHECK: %[[Q:.*]] = dl.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00], [4.000000e+00, 5.000000e+00]{{.*}} : tensor<2x4x2xf32>
// CHECK: dl.matmul %{{.*}}, %[[Q]]
// CHECK: %[[R:.*]] = dl.constant dense<{{\[\[\[}}0.000000e+00, 4.000000e+00], [1.000000e+00, 5.000000e+00]{{.*}} : tensor<2x4x2xf32>
// CHECK: dl.matmul %{{.*}}, %[[R]]
// CHECK-NOT: dl.constant {{.*}} : tensor<2x4x2xf32>
// CHECK: dl.matmul %{{.*}}, %[[R]]
// CHECK: return
// CHECK-LABEL: func.func @shared_transposed_weight_many_rows
// CHECK: %[[W:.*]] = dl.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00{{.*}} : tensor<2x5xf32>
// CHECK-NOT: dl.constant
// CHECK: dl.matmul %arg0, %[[W]]
// CHECK-NOT: dl.constant
// CHECK: dl.matmul %arg0, %[[W]]
// CHECK-NOT: dl.transpose
func.func @shared_weight(%x: tensor<1x2xf32>, %v: tensor<1x4xf32>)
    -> (tensor<1x5xf32>, tensor<1x5xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
  %w0 = dl.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0]]> : tensor<2x5xf32>
  %y0 = dl.matmul %x, %w0 : (tensor<1x2xf32>, tensor<2x5xf32>) -> tensor<1x5xf32>
  %w1 = dl.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0]]> : tensor<2x5xf32>
  %y1 = dl.matmul %x, %w1 : (tensor<1x2xf32>, tensor<2x5xf32>) -> tensor<1x5xf32>
  %s0 = dl.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]> : tensor<4x4xf32>
  %y2 = dl.matmul %v, %s0 : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %s1 = dl.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]> : tensor<4x4xf32>
  %t1 = dl.transpose %s1 perm = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %y3 = dl.matmul %v, %t1 : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %s2 = dl.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]> : tensor<4x4xf32>
  %t2 = dl.transpose %s2 perm = [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  %y4 = dl.matmul %v, %t2 : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  return %y0, %y1, %y2, %y3, %y4 : tensor<1x5xf32>, tensor<1x5xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
}
func.func @shared_transposed_weight_many_rows(%x: tensor<?x2xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>) {
  %wt0 = dl.constant dense<[[0.0, 5.0], [1.0, 6.0], [2.0, 7.0], [3.0, 8.0], [4.0, 9.0]]> : tensor<5x2xf32>
  %w0 = dl.transpose %wt0 perm = [1, 0] : tensor<5x2xf32> -> tensor<2x5xf32>
  %y0 = dl.matmul %x, %w0 : (tensor<?x2xf32>, tensor<2x5xf32>) -> tensor<?x5xf32>
  %wt1 = dl.constant dense<[[0.0, 5.0], [1.0, 6.0], [2.0, 7.0], [3.0, 8.0], [4.0, 9.0]]> : tensor<5x2xf32>
  %w1 = dl.transpose %wt1 perm = [1, 0] : tensor<5x2xf32> -> tensor<2x5xf32>
  %y1 = dl.matmul %x, %w1 : (tensor<?x2xf32>, tensor<2x5xf32>) -> tensor<?x5xf32>
  return %y0, %y1 : tensor<?x5xf32>, tensor<?x5xf32>
}

// -----

// Several rows, in a batch of x: rows = 2 * 3; the panels' results are
// transposed to [rows, panels, 2] before the reshape, and the result gets
// x @ W's shape back. A whole number of panels needs no slice.
// CHECK-LABEL: func.func @rows_in_a_batch
// CHECK: dl.reshape %arg0 shape = [1, 6, 2] : tensor<2x3x2xf32> -> tensor<1x6x2xf32>
// CHECK: dl.matmul {{.*}} -> tensor<2x6x2xf32>
// CHECK: dl.transpose %{{.*}} perm = [1, 0, 2] : tensor<2x6x2xf32> -> tensor<6x2x2xf32>
// CHECK: dl.reshape %{{.*}} shape = [6, 4] : tensor<6x2x2xf32> -> tensor<6x4xf32>
// CHECK-NOT: dl.slice
// CHECK: dl.reshape %{{.*}} shape = [2, 3, 4] : tensor<6x4xf32> -> tensor<2x3x4xf32>
// REPORT: remark: dl-pack-weights: left alone: too many rows
func.func @rows_in_a_batch(%x: tensor<2x3x2xf32>) -> tensor<2x3x4xf32> {
  %w = dl.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %y = dl.matmul %x, %w : (tensor<2x3x2xf32>, tensor<2x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// Left alone, each for its reason.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-6: dl.matmul {{.*}} : (tensor<{{[?0-9]+}}x2xf{{16|32}}>
// CHECK-NEXT: return
// REPORT: remark: dl-pack-weights: left alone: dynamic rows
// REPORT: remark: dl-pack-weights: left alone: not f32
// REPORT: remark: dl-pack-weights: left alone: the weight is not a dense constant or its transpose
// REPORT: remark: dl-pack-weights: left alone: the weight is not a dense constant or its transpose
// REPORT: remark: dl-pack-weights: left alone: fewer than two panels
// REPORT: remark: dl-pack-weights: left alone: its strategy is recorded
// REPORT: remark: dl-pack-weights: left alone: no elements
func.func @left_alone(%x: tensor<?x2xf32>, %h: tensor<1x2xf16>, %v: tensor<2x4xf32>)
    -> (tensor<?x4xf32>, tensor<1x4xf16>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x3xf32>, tensor<1x4xf32>) {
  %w = dl.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf32>
  %w16 = dl.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : tensor<2x4xf16>
  %splat = dl.constant dense<2.0> : tensor<2x4xf32>
  %narrow = dl.constant dense<[[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]]> : tensor<2x3xf32>
  %x1 = dl.reshape %h shape = [1, 2] : tensor<1x2xf16> -> tensor<1x2xf16>
  %xf = dl.cast %x1 : tensor<1x2xf16> -> tensor<1x2xf32>
  %a = dl.matmul %x, %w : (tensor<?x2xf32>, tensor<2x4xf32>) -> tensor<?x4xf32>
  %b = dl.matmul %h, %w16 : (tensor<1x2xf16>, tensor<2x4xf16>) -> tensor<1x4xf16>
  %c = dl.matmul %xf, %v : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %d = dl.matmul %xf, %splat : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  %e = dl.matmul %xf, %narrow : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
  %f = dl.matmul %xf, %w {dl.strategy = #dl.strategy<kind = loops>} : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  return %a, %b, %c, %d, %e, %f : tensor<?x4xf32>, tensor<1x4xf16>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x3xf32>, tensor<1x4xf32>
}
// CHECK-LABEL: func.func @empty
// CHECK: dl.matmul %arg0, %{{.*}} : (tensor<1x0xf32>, tensor<0x60xf32>)
func.func @empty(%x: tensor<1x0xf32>) -> tensor<1x60xf32> {
  %w0 = dl.constant dense<> : tensor<0x60xf32>
  %a = dl.matmul %x, %w0 : (tensor<1x0xf32>, tensor<0x60xf32>) -> tensor<1x60xf32>
  return %a : tensor<1x60xf32>
}

// -----

// The panel width comes from the target's register tile: 3 vectors of 8
// floats on Zen 3 (AVX2), 4 vectors of 16 on Zen 4 (AVX-512).
// ZEN3-LABEL: func.func @target_panels
// ZEN3: dl.matmul {{.*}} : (tensor<1x1x4xf32>, tensor<6x4x24xf32>) -> tensor<6x1x24xf32>
// ZEN3: dl.slice %{{.*}} sizes = [1, 130]
// ZEN4-LABEL: func.func @target_panels
// ZEN4: dl.matmul {{.*}} : (tensor<1x1x4xf32>, tensor<3x4x64xf32>) -> tensor<3x1x64xf32>
// ZEN4: dl.slice %{{.*}} sizes = [1, 130]
// BADROWS: dl-pack-weights: max-rows must be at least 1, but got 0
// BADPANEL: dl-pack-weights: panel must be 0 (the target's) or positive, but got -3
// BADCONVROWS: dl-pack-weights: conv-max-rows must be at least 1, but got 0
func.func @target_panels(%x: tensor<1x4xf32>) -> tensor<1x130xf32> {
  %w = dl.constant dense<[[-0.52, 0.09, -0.26, 0.21, 0.25, -0.87, -0.97, 0.67, -0.48, -0.53, 0.99, -0.06, 0.67, -0.05, 0.28, -0.70, 0.27, 0.74, 0.05, 0.48, 0.34, -0.87, 0.52, 0.18, -0.40, -0.94, 0.73, -0.05, 0.44, 0.76, 0.43, 0.84, -0.21, 0.60, -0.11, 0.87, 0.76, -0.81, -0.73, -0.57, 0.93, -0.13, 0.25, -0.40, 0.01, -0.23, -0.30, 0.17, 0.17, 0.81, 0.36, 0.86, 0.71, 0.98, 0.34, -0.67, 0.72, 0.93, 0.81, 0.14, 0.43, -0.58, 0.66, 0.15, -0.43, -0.87, 0.71, 0.98, -0.82, 0.60, -0.18, -0.70, -0.41, 0.54, 0.75, -0.91, 0.23, -0.91, 0.44, -0.34, 0.76, 0.96, 0.01, 1.00, -0.38, -0.85, 0.20, -0.94, -0.61, -0.18, 0.22, -0.69, -0.92, 0.74, -0.37, 0.92, 0.79, -0.24, -0.08, 0.04, 0.29, 0.19, 0.12, 0.24, 0.88, 0.01, -0.14, 0.44, -0.52, -0.40, 0.96, 0.04, 0.10, -0.98, -0.17, 0.16, -0.96, 0.23, 0.26, -0.88, 0.25, -0.07, 0.36, -0.29, 0.41, 0.48, -0.96, -0.88, 0.35, 0.93], [-0.50, -0.09, 0.19, -0.36, -0.27, -0.37, -0.26, 0.19, -0.40, -0.25, 0.54, -0.95, 0.14, 0.47, -0.38, -0.55, 0.61, -0.52, -0.63, -0.13, 0.40, -0.80, -0.36, -0.33, 0.67, -0.12, 0.71, -0.66, -0.33, 0.30, 0.77, -0.10, -0.55, -0.76, 0.06, -0.62, 0.61, 0.68, -0.63, -0.44, 0.61, 0.28, 0.61, -0.31, -0.74, -0.42, 0.59, -0.46, -0.31, -0.17, -0.16, -0.18, 0.84, -0.69, -0.99, 0.89, 0.76, 0.97, -0.13, 0.90, 0.85, -0.56, 0.49, 0.67, 0.33, 0.04, -0.42, -0.32, -0.55, -0.86, 0.18, -0.43, 0.62, -0.91, 0.81, 0.39, 0.85, 0.79, 0.80, 0.15, -0.97, 0.49, -0.66, -0.40, 0.33, 0.05, -0.17, 0.88, 0.22, -0.32, -0.50, 0.72, -0.05, 0.56, -0.30, -0.61, 0.07, 0.63, -0.66, 0.58, 0.84, 0.61, 0.65, -0.98, 0.26, 0.73, -0.90, -0.46, -0.46, 0.05, -0.15, -0.05, 0.55, -1.00, -0.89, -0.75, -0.75, -0.86, 0.95, 0.71, -0.83, 0.00, -0.37, -0.37, -0.30, 0.29, 0.17, -0.28, -0.62, -0.34], [-0.75, 0.11, 0.43, -0.24, -0.84, -0.64, -0.25, 0.21, 0.57, -0.24, 0.60, 0.25, -0.14, -0.26, -0.01, 0.41, -0.16, 0.39, -0.08, -0.51, 0.07, 0.39, -0.86, -0.15, -0.15, 0.76, 0.87, -0.25, 0.80, 0.58, -0.48, -0.07, -0.75, 0.63, 0.32, 0.77, 0.58, 0.34, 0.47, 0.13, -0.79, 0.18, -0.99, -0.71, 0.55, -0.91, -0.82, -0.80, 0.76, -0.64, -0.95, 0.68, -0.76, 0.69, 0.35, 0.67, 0.90, 0.16, 0.60, -0.93, 0.53, 0.02, 0.43, -0.79, 0.50, 0.87, -0.88, -0.35, 0.13, 0.66, -0.52, -0.64, -0.50, 0.23, 0.51, -0.21, -0.27, -0.21, -0.30, -0.16, -0.83, 0.00, 0.95, -0.17, 0.49, -0.68, 0.38, 0.51, 0.35, 0.03, -0.03, 0.29, 0.79, -0.70, -0.81, 0.50, 0.83, 0.03, -0.11, 0.44, -0.63, -0.47, -0.60, 0.17, -0.37, -0.54, 0.38, 0.91, -0.41, 0.41, -0.17, 0.71, 0.17, -0.47, -0.56, -0.95, -0.04, -0.23, -0.66, -0.28, -0.36, 0.55, -0.71, 0.98, -0.04, 0.20, -0.06, 0.67, 0.64, 0.11], [-0.04, 0.44, 0.71, -0.20, 0.47, 0.92, -0.07, -0.54, -0.53, 0.44, 0.35, 0.92, 0.71, -0.52, -0.62, -0.48, -0.63, 0.41, 0.72, 0.80, -0.49, 0.73, -0.37, -0.15, 0.46, -0.83, -0.81, 0.67, -0.42, -0.29, 0.16, 0.35, -0.99, -0.33, -0.13, -0.03, -0.58, 0.17, 0.91, -0.22, 0.09, -0.76, -0.45, 0.33, -0.77, 0.77, 0.82, -0.81, 0.88, -0.25, 0.54, 0.51, -0.41, 0.35, 0.31, 0.61, -0.47, 0.51, 0.92, 0.35, 0.07, -0.77, -0.01, -0.30, 0.44, 0.36, 0.13, -0.64, 0.29, 0.26, -0.64, 0.78, 0.31, -0.75, 0.86, -0.72, -0.34, 0.44, 0.19, 0.11, 0.29, -0.08, -0.38, -0.65, -0.86, 0.43, 0.51, 0.09, 0.48, -0.28, -0.47, -0.23, 0.75, -0.92, 0.01, -0.51, 0.54, -0.29, -0.33, -0.19, 0.08, 0.54, -0.29, 0.69, -0.78, -0.46, -0.80, -0.77, 0.56, 0.45, -0.63, -0.62, -0.17, 0.49, 0.63, 0.50, 0.18, -0.71, -0.20, -0.61, 0.06, 0.14, -0.60, -0.50, 0.56, -0.94, 0.61, 0.78, 0.90, -0.23]]> : tensor<4x130xf32>
  %y = dl.matmul %x, %w : (tensor<1x4xf32>, tensor<4x130xf32>) -> tensor<1x130xf32>
  return %y : tensor<1x130xf32>
}

// -----

// An NHWC convolution with a constant filter and few output pixels (4 here,
// padding 1, stride 2): im2col -- the padded input's 9 strided windows
// concatenated along the channels, in the filter's (kh, kw, c) order -- times
// the filter as a [9, 4] matrix, packed like a linear layer's weight; the
// bias is added after.
// CHECK-LABEL: func.func @conv_as_packed_product
// CHECK: %[[P:.*]] = dl.pad %arg0 low = [0, 1, 1, 0] high = [0, 1, 1, 0] value = 0.000000e+00 : tensor<1x3x3x1xf32> -> tensor<1x5x5x1xf32>
// CHECK: dl.slice %[[P]] starts = [0, 0, 0, 0] sizes = [1, 2, 2, 1] strides = [1, 2, 2, 1]
// CHECK-COUNT-7: dl.slice %[[P]]
// CHECK: %[[LAST:.*]] = dl.slice %[[P]] starts = [0, 2, 2, 0] sizes = [1, 2, 2, 1] strides = [1, 2, 2, 1]
// CHECK: %[[COLS:.*]] = dl.concat {{.*}}, %[[LAST]] axis = 3 : {{.*}} -> tensor<1x2x2x9xf32>
// CHECK: %[[X:.*]] = dl.reshape %[[COLS]] shape = [4, 9] : tensor<1x2x2x9xf32> -> tensor<4x9xf32>
// CHECK: %[[X3:.*]] = dl.reshape %[[X]] shape = [1, 4, 9]
// CHECK: %[[Y:.*]] = dl.matmul %[[X3]], %{{.*}} : (tensor<1x4x9xf32>, tensor<2x9x2xf32>) -> tensor<2x4x2xf32>
// CHECK: dl.transpose %[[Y]] perm = [1, 0, 2]
// CHECK: %[[O:.*]] = dl.reshape %{{.*}} shape = [1, 2, 2, 4] : tensor<4x4xf32> -> tensor<1x2x2x4xf32>
// CHECK: %[[B:.*]] = dl.add %[[O]], %arg1 : (tensor<1x2x2x4xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
// CHECK-NOT: dl.conv2d
// CHECK: return %[[B]]
// REPORT: remark: dl-pack-weights: convolution as im2col @ its filter packed in panels of 2 columns
// NOCONV-LABEL: func.func @conv_as_packed_product
// NOCONV: dl.conv2d
func.func @conv_as_packed_product(%x: tensor<1x3x3x1xf32>, %b: tensor<4xf32>) -> tensor<1x2x2x4xf32> {
  %w = dl.constant dense<[[[[-0.83, -0.53, 0.60, 0.16]], [[-0.81, -0.13, -0.04, -0.68]], [[0.47, -0.77, -0.22, 0.03]]], [[[-0.14, 0.17, 0.48, 0.91]], [[-0.43, 0.30, 0.39, -0.41]], [[-1.00, 0.95, -0.40, -0.37]]], [[[0.78, 0.17, -0.06, 0.55]], [[-0.94, 0.41, -0.25, -0.82]], [[0.32, 0.86, -0.59, 0.26]]]]> : tensor<3x3x1x4xf32>
  %y = dl.conv2d %x, %w, %b strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x3x3x1xf32>, tensor<3x3x1x4xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// A 1x1 convolution of stride 1 and no padding reads its input as it lies:
// no pad, window or concatenation; without a bias, no add.
// CHECK-LABEL: func.func @pointwise_conv
// CHECK-NOT: dl.pad
// CHECK-NOT: dl.slice
// CHECK-NOT: dl.concat
// CHECK: %[[X:.*]] = dl.reshape %arg0 shape = [4, 3] : tensor<1x2x2x3xf32> -> tensor<4x3xf32>
// CHECK: dl.matmul %{{.*}}, %{{.*}} : (tensor<1x4x3xf32>, tensor<2x3x2xf32>) -> tensor<2x4x2xf32>
// CHECK-NOT: dl.add
// CHECK: return
func.func @pointwise_conv(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x2x4xf32> {
  %w = dl.constant dense<[[[[-0.40, 0.48, 0.44, -0.56], [0.66, 0.32, 0.37, 0.64], [-0.14, 0.52, 0.76, -0.80]]]]> : tensor<1x1x3x4xf32>
  %y = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x2x2x3xf32>, tensor<1x1x3x4xf32>) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// A dilated window starts dilation apart.
// CHECK-LABEL: func.func @dilated_conv
// CHECK: dl.slice %arg0 starts = [0, 0, 0, 0] sizes = [1, 1, 1, 1] strides = [1, 1, 1, 1]
// CHECK: dl.slice %arg0 starts = [0, 0, 2, 0] sizes = [1, 1, 1, 1]
// CHECK: dl.slice %arg0 starts = [0, 0, 4, 0] sizes = [1, 1, 1, 1]
// CHECK: dl.slice %arg0 starts = [0, 2, 0, 0] sizes = [1, 1, 1, 1]
// CHECK: dl.concat
// CHECK: dl.matmul %{{.*}}, %{{.*}} : (tensor<1x1x9xf32>, tensor<2x9x2xf32>)
func.func @dilated_conv(%x: tensor<1x5x5x1xf32>) -> tensor<1x1x1x4xf32> {
  %w = dl.constant dense<[[[[0.70, -0.21, -0.04, -0.71]], [[0.40, -0.42, 0.74, -0.45]], [[0.12, -0.20, 0.23, -0.61]]], [[[-0.64, 0.49, 0.50, 0.13]], [[0.84, -0.59, 0.70, -0.66]], [[0.93, 0.25, 0.21, 0.94]]], [[[0.57, 0.58, -0.89, -0.26]], [[-0.83, -0.61, -0.57, 0.72]], [[-0.75, -0.41, -0.01, 0.70]]]]> : tensor<3x3x1x4xf32>
  %y = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [2, 2] groups = 1 layout = "NHWC" : (tensor<1x5x5x1xf32>, tensor<3x3x1x4xf32>) -> tensor<1x1x1x4xf32>
  return %y : tensor<1x1x1x4xf32>
}

// Windows that tile the image (stride = kernel: a patch embedding) are its
// blocks: the rows a whole window does not reach cut off (5 -> 4), reshaped
// to [N, OH, KH, OW, KW, C], one transpose to (kh, kw, c) order -- no slices
// and no concatenation of KH*KW operands (ViT's 256 cost one-shot
// bufferization 5 s).
// CHECK-LABEL: func.func @patch_embedding
// CHECK-NOT: dl.concat
// CHECK: %[[S:.*]] = dl.slice %arg0 starts = [0, 0, 0, 0] sizes = [1, 4, 4, 1] strides = [1, 1, 1, 1] : tensor<1x5x4x1xf32> -> tensor<1x4x4x1xf32>
// CHECK: %[[B:.*]] = dl.reshape %[[S]] shape = [1, 2, 2, 2, 2, 1] : tensor<1x4x4x1xf32> -> tensor<1x2x2x2x2x1xf32>
// CHECK: %[[T:.*]] = dl.transpose %[[B]] perm = [0, 1, 3, 2, 4, 5] : tensor<1x2x2x2x2x1xf32> -> tensor<1x2x2x2x2x1xf32>
// CHECK: %[[X:.*]] = dl.reshape %[[T]] shape = [4, 4] : tensor<1x2x2x2x2x1xf32> -> tensor<4x4xf32>
// CHECK: dl.matmul %{{.*}}, %{{.*}} : (tensor<1x4x4xf32>, tensor<2x4x2xf32>) -> tensor<2x4x2xf32>
// CHECK-NOT: dl.conv2d
// CHECK: return
func.func @patch_embedding(%x: tensor<1x5x4x1xf32>) -> tensor<1x2x2x4xf32> {
  %w = dl.constant dense<[[[[0.70, -0.21, -0.04, -0.71]], [[0.40, -0.42, 0.74, -0.45]]], [[[-0.64, 0.49, 0.50, 0.13]], [[0.84, -0.59, 0.70, -0.66]]]]> : tensor<2x2x1x4xf32>
  %y = dl.conv2d %x, %w strides = [2, 2] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x5x4x1xf32>, tensor<2x2x1x4xf32>) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// -----

// Convolutions left alone, each for its reason (and all of them with
// convolutions=false).
// CHECK-LABEL: func.func @convolutions_left_alone
// CHECK-COUNT-6: dl.conv2d
// CHECK-NOT: dl.matmul
// REPORT: remark: dl-pack-weights: convolution left alone: not NHWC
// REPORT: remark: dl-pack-weights: convolution left alone: grouped
// REPORT: remark: dl-pack-weights: convolution left alone: the filter is not a dense constant
// REPORT: remark: dl-pack-weights: convolution left alone: fewer than two panels
// REPORT: remark: dl-pack-weights: convolution left alone: too many rows
// REPORT: remark: dl-pack-weights: convolution left alone: dynamic shape
func.func @convolutions_left_alone(%nchw: tensor<1x3x2x2xf32>, %x: tensor<1x3x3x2xf32>, %v: tensor<3x3x1x4xf32>,
                                   %one: tensor<1x3x3x1xf32>, %big: tensor<1x23x23x1xf32>, %dyn: tensor<?x3x3x1xf32>)
    -> (tensor<1x4x2x2xf32>, tensor<1x3x3x4xf32>, tensor<1x1x1x4xf32>, tensor<1x2x2x2xf32>, tensor<1x23x23x4xf32>, tensor<?x3x3x4xf32>) {
  %n2 = dl.constant dense<[[[[-0.04]], [[-0.31]], [[-0.48]]], [[[0.14]], [[-0.36]], [[0.24]]], [[[0.16]], [[-0.79]], [[-0.12]]], [[[-0.22]], [[0.41]], [[-0.82]]]]> : tensor<4x3x1x1xf32>
  %g = dl.constant dense<[[[[0.70, -0.21, -0.04, -0.71]], [[0.40, -0.42, 0.74, -0.45]], [[0.12, -0.20, 0.23, -0.61]]], [[[-0.64, 0.49, 0.50, 0.13]], [[0.84, -0.59, 0.70, -0.66]], [[0.93, 0.25, 0.21, 0.94]]], [[[0.57, 0.58, -0.89, -0.26]], [[-0.83, -0.61, -0.57, 0.72]], [[-0.75, -0.41, -0.01, 0.70]]]]> : tensor<3x3x1x4xf32>
  %narrow = dl.constant dense<[[[[0.74, -0.43], [0.21, 0.56]], [[0.43, 0.83], [0.72, 0.84]]], [[[-0.95, -0.13], [-0.03, -0.87]], [[-0.99, 0.66], [0.97, 0.57]]]]> : tensor<2x2x2x2xf32>
  %a = dl.conv2d %nchw, %n2 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x3x2x2xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x2x2xf32>
  %b = dl.conv2d %x, %g strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 2 layout = "NHWC" : (tensor<1x3x3x2xf32>, tensor<3x3x1x4xf32>) -> tensor<1x3x3x4xf32>
  %c = dl.conv2d %one, %v strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x3x3x1xf32>, tensor<3x3x1x4xf32>) -> tensor<1x1x1x4xf32>
  %d = dl.conv2d %x, %narrow strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x3x3x2xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %e = dl.conv2d %big, %g strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x23x23x1xf32>, tensor<3x3x1x4xf32>) -> tensor<1x23x23x4xf32>
  %f = dl.conv2d %dyn, %g strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<?x3x3x1xf32>, tensor<3x3x1x4xf32>) -> tensor<?x3x3x4xf32>
  return %a, %b, %c, %d, %e, %f : tensor<1x4x2x2xf32>, tensor<1x3x3x4xf32>, tensor<1x1x1x4xf32>, tensor<1x2x2x2xf32>, tensor<1x23x23x4xf32>, tensor<?x3x3x4xf32>
}

// -----

// Groups of half a vector of output channels (4 of znver3's 8 lanes; 2
// inputs each) merged in pairs: groups 4 -> 2, the filter [1, 1, 4, 16]
// block-diagonal: output channel o of a pair reads the inputs of its own
// half ((o / 4) % 2) and zeros at the other's. znver4's 16 lanes: groups of
// 4 are a quarter of a vector, left alone; groups of 8 merged there.
// Depthwise (one input per group), odd group counts, NCHW and filters that
// are no constant are left alone.
// CHECK-LABEL: func.func @groups_merged
// CHECK: %[[W:.*]] = dl.constant dense<{{\[\[\[\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 8.000000e+00, 9.000000e+00, 1.000000e+01, 1.100000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [1.000000e+01, 1.100000e+01, 1.200000e+01, 1.300000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.800000e+01, 1.900000e+01, 2.000000e+01, 2.100000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.200000e+01, 1.300000e+01, 1.400000e+01, 1.500000e+01], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.400000e+01, 1.500000e+01, 1.600000e+01, 1.700000e+01, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 2.200000e+01, 2.300000e+01, 2.400000e+01, 2.500000e+01]]]]> : tensor<1x1x4x16xf32>
// CHECK: dl.conv2d %arg0, %[[W]] {{.*}} groups = 2 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x4x16xf32>) -> tensor<1x3x3x16xf32>
// CHECK-NOT: tensor<1x1x2x16xf32>
// ZEN3-LABEL: func.func @groups_merged
// ZEN3: groups = 2 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x4x16xf32>)
// ZEN3: groups = 4 layout = "NHWC" : (tensor<1x3x3x16xf32>, tensor<3x3x4x32xf32>)
// ZEN4-LABEL: func.func @groups_merged
// ZEN4: groups = 4 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x2x16xf32>)
// ZEN4: groups = 2 layout = "NHWC" : (tensor<1x3x3x16xf32>, tensor<3x3x8x32xf32>)
// NOCONV-LABEL: func.func @groups_merged
// NOCONV: groups = 4 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x2x16xf32>)
// REPORT: remark: dl-pack-weights: groups left as they are: groups not of half a vector of output channels
// REPORT: remark: dl-pack-weights: groups merged in pairs (4 -> 2), the filter block-diagonal
func.func @groups_merged(%x: tensor<1x3x3x8xf32>, %y: tensor<1x3x3x16xf32>) -> (tensor<1x3x3x16xf32>, tensor<1x3x3x32xf32>) {
  %w = dl.constant dense<[[[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0]]]]> : tensor<1x1x2x16xf32>
  %a = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 4 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x2x16xf32>) -> tensor<1x3x3x16xf32>
  %v = dl.constant dense<0.5> : tensor<3x3x4x32xf32>
  %b = dl.conv2d %y, %v strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 4 layout = "NHWC" : (tensor<1x3x3x16xf32>, tensor<3x3x4x32xf32>) -> tensor<1x3x3x32xf32>
  return %a, %b : tensor<1x3x3x16xf32>, tensor<1x3x3x32xf32>
}

// -----

// CHECK-LABEL: func.func @groups_kept
// CHECK: groups = 8 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x1x32xf32>)
// CHECK: groups = 3 layout = "NHWC" : (tensor<1x3x3x6xf32>, tensor<1x1x2x12xf32>)
// CHECK: groups = 4 layout = "NCHW"
// CHECK: groups = 4 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x2x16xf32>)
// REPORT: remark: dl-pack-weights: groups left as they are: depthwise
// REPORT: remark: dl-pack-weights: groups left as they are: an odd number of groups
// REPORT: remark: dl-pack-weights: groups left as they are: not NHWC
// REPORT: remark: dl-pack-weights: groups left as they are: the filter is not a dense constant
// REPORT: remark: dl-pack-weights: groups left as they are: its strategy is recorded
// REPORT: remark: dl-pack-weights: groups left as they are: dynamic shape
// REPORT: remark: dl-pack-weights: groups left as they are: not f32
// CHECK: groups = 4 layout = "NHWC" {dl.strategy
// CHECK: groups = 4 layout = "NHWC" : (tensor<?x3x3x8xf32>, tensor<1x1x2x16xf32>)
// CHECK: groups = 4 layout = "NHWC" : (tensor<1x3x3x8xf16>, tensor<1x1x2x16xf16>)
func.func @groups_kept(%x: tensor<1x3x3x8xf32>, %z: tensor<1x3x3x6xf32>, %n: tensor<1x8x3x3xf32>, %f: tensor<1x1x2x16xf32>,
                       %dyn: tensor<?x3x3x8xf32>, %half: tensor<1x3x3x8xf16>)
    -> (tensor<1x3x3x32xf32>, tensor<1x3x3x12xf32>, tensor<1x16x3x3xf32>, tensor<1x3x3x16xf32>, tensor<1x3x3x16xf32>, tensor<?x3x3x16xf32>, tensor<1x3x3x16xf16>) {
  %dw = dl.constant dense<0.25> : tensor<1x1x1x32xf32>
  %a = dl.conv2d %x, %dw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 8 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x1x32xf32>) -> tensor<1x3x3x32xf32>
  %three = dl.constant dense<0.25> : tensor<1x1x2x12xf32>
  %b = dl.conv2d %z, %three strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 3 layout = "NHWC" : (tensor<1x3x3x6xf32>, tensor<1x1x2x12xf32>) -> tensor<1x3x3x12xf32>
  %nw = dl.constant dense<0.25> : tensor<16x2x1x1xf32>
  %c = dl.conv2d %n, %nw strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 4 layout = "NCHW" : (tensor<1x8x3x3xf32>, tensor<16x2x1x1xf32>) -> tensor<1x16x3x3xf32>
  %d = dl.conv2d %x, %f strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 4 layout = "NHWC" : (tensor<1x3x3x8xf32>, tensor<1x1x2x16xf32>) -> tensor<1x3x3x16xf32>
  %w = dl.constant dense<0.25> : tensor<1x1x2x16xf32>
  %e = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 4 layout = "NHWC" {dl.strategy = #dl.strategy<kind = direct, layout = "NHWC">} : (tensor<1x3x3x8xf32>, tensor<1x1x2x16xf32>) -> tensor<1x3x3x16xf32>
  %g = dl.conv2d %dyn, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 4 layout = "NHWC" : (tensor<?x3x3x8xf32>, tensor<1x1x2x16xf32>) -> tensor<?x3x3x16xf32>
  %wh = dl.constant dense<0.25> : tensor<1x1x2x16xf16>
  %h = dl.conv2d %half, %wh strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 4 layout = "NHWC" : (tensor<1x3x3x8xf16>, tensor<1x1x2x16xf16>) -> tensor<1x3x3x16xf16>
  return %a, %b, %c, %d, %e, %g, %h : tensor<1x3x3x32xf32>, tensor<1x3x3x12xf32>, tensor<1x16x3x3xf32>, tensor<1x3x3x16xf32>, tensor<1x3x3x16xf32>, tensor<?x3x3x16xf32>, tensor<1x3x3x16xf16>
}
