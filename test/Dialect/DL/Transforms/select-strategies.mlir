// RUN: dl-opt %s --dl-select-strategies | FileCheck %s
// RUN: dl-opt %s --dl-explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dl-opt %s --split-input-file --dl-select-strategies=max-direct-filter-bytes=131072 | FileCheck %s --check-prefix=LIMIT
// RUN: dl-opt %s --split-input-file --dl-select-strategies=max-direct-filter-bytes=-1 | FileCheck %s --check-prefix=NEVER
// RUN: dl-opt %s --split-input-file --dl-explain=max-direct-filter-bytes=131072 -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIMIT-EXPLAIN

// Each compute-heavy op gets the strategy its lowering follows; a strategy
// given in the IR is kept.
// CHECK-LABEL: func @strategies
// CHECK: dl.conv2d {{.*}} {dl.strategy = "im2col-gemm"}
// CHECK: dl.conv2d {{.*}} {dl.strategy = "direct"}
// CHECK: dl.conv2d {{.*}} {dl.strategy = "direct"}
// CHECK: dl.matmul {{.*}} {dl.strategy = "loops"}
// CHECK: dl.matmul {{.*}} {dl.strategy = "register-tiled-gemm"}
// CHECK: dl.softmax {{.*}} {dl.strategy = "vectorized-reduction"}
// CHECK: dl.add
// CHECK-NOT: dl.strategy
// CHECK: return

// EXPLAIN: remark: dl.conv2d: strategy im2col-gemm (groups = 1, f32, static spatial sizes
// EXPLAIN: remark: dl.conv2d: strategy direct (grouped or depthwise: no GEMM to share)
// EXPLAIN: remark: dl.conv2d: strategy direct (given in the IR)
// EXPLAIN: remark: dl.matmul: strategy loops (integer operands: plain loops)
// EXPLAIN: remark: dl.matmul: strategy register-tiled-gemm (float operands with static K and N
// EXPLAIN: remark: dl.softmax: strategy vectorized-reduction
func.func @strategies(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %d: tensor<8x1x3x3xf32>,
                      %a: tensor<4x8xi32>, %b: tensor<8x3xi32>, %f: tensor<?x8xf32>, %g: tensor<8x16xf32>)
    -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<4x3xi32>, tensor<?x16xf32>) {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %1 = dl.conv2d %0, %d strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 8 layout = "NCHW" : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32>
  %2 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" {dl.strategy = "direct"} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %3 = dl.matmul %a, %b : (tensor<4x8xi32>, tensor<8x3xi32>) -> tensor<4x3xi32>
  %4 = dl.matmul %f, %g : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %5 = dl.softmax %4 axis = 1 : tensor<?x16xf32> -> tensor<?x16xf32>
  %6 = dl.add %5, %5 : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %0, %1, %2, %3, %6 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<4x3xi32>, tensor<?x16xf32>
}

// -----

// NHWC f32 convolutions: a direct (register-tiled) convolution while the
// filter stays in cache, im2col + GEMM beyond; the limit is an option
// (here 128 KiB: the 3x3x8x8 filter, 2304 bytes, is under it, the
// 3x3x128x64, 294912 bytes, over it; -1: never direct).
// LIMIT-LABEL: func @nhwc
// LIMIT: dl.conv2d {{.*}} {dl.strategy = "direct"}
// LIMIT: dl.conv2d {{.*}} {dl.strategy = "im2col-gemm"}
// NEVER-LABEL: func @nhwc
// NEVER: dl.conv2d {{.*}} {dl.strategy = "im2col-gemm"}
// NEVER: dl.conv2d {{.*}} {dl.strategy = "im2col-gemm"}
// LIMIT-EXPLAIN: remark: dl.conv2d: strategy direct (NHWC, f32, a filter of 2 KiB that stays in cache (at most 128 KiB): register-tiled direct convolution, no patch matrix)
// LIMIT-EXPLAIN: remark: dl.conv2d: strategy im2col-gemm (groups = 1, f32, static spatial sizes, a filter larger than the direct convolution's limit: patches as a matrix, one register-tiled GEMM)
func.func @nhwc(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x8x8xf32>, %y: tensor<1x6x6x128xf32>, %v: tensor<3x3x128x64xf32>)
    -> (tensor<1x6x6x8xf32>, tensor<1x6x6x64xf32>) {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x6x6x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x6x6x8xf32>
  %1 = dl.conv2d %y, %v strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x6x6x128xf32>, tensor<3x3x128x64xf32>) -> tensor<1x6x6x64xf32>
  return %0, %1 : tensor<1x6x6x8xf32>, tensor<1x6x6x64xf32>
}

// -----

// f16 and bf16 convolutions keep linalg's convolution (accumulating in f32),
// unless every convolution is to be a GEMM (max-direct-filter-bytes=-1, as
// in dl-gpu-pipeline, where 16-bit GEMMs run on tensor cores).
// CHECK-LABEL: func @half
// CHECK: dl.conv2d {{.*}} {dl.strategy = "direct"}
// CHECK: dl.conv2d {{.*}} {dl.strategy = "direct"}
// EXPLAIN: remark: dl.conv2d: strategy direct (not f32: linalg's convolution accumulating in f32)
// NEVER-LABEL: func @half
// NEVER: dl.conv2d {{.*}} {dl.strategy = "im2col-gemm"}
// NEVER: dl.conv2d {{.*}} {dl.strategy = "im2col-gemm"}
func.func @half(%x: tensor<1x8x6x6xf16>, %w: tensor<8x8x3x3xf16>, %y: tensor<1x6x6x8xbf16>, %v: tensor<3x3x8x8xbf16>)
    -> (tensor<1x8x6x6xf16>, tensor<1x6x6x8xbf16>) {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x8x6x6xf16>, tensor<8x8x3x3xf16>) -> tensor<1x8x6x6xf16>
  %1 = dl.conv2d %y, %v strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x6x6x8xbf16>, tensor<3x3x8x8xbf16>) -> tensor<1x6x6x8xbf16>
  return %0, %1 : tensor<1x8x6x6xf16>, tensor<1x6x6x8xbf16>
}
