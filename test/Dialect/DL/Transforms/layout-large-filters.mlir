// RUN: dl-opt %s --pass-pipeline='builtin.module(func.func(dl-layout{report=true nchw-min-filter-bytes=8192}))' --verify-diagnostics | FileCheck %s
// RUN: dl-opt %s --pass-pipeline='builtin.module(func.func(dl-layout{nchw-min-filter-bytes=-1}))' | FileCheck %s --check-prefix=ALL

// With filters over nchw-min-filter-bytes (8 KiB here), an f32 NCHW
// convolution stays NCHW: its im2col GEMM reads the OIHW filter as it lies
// rather than rewriting it to HWIO at every call. The 1x1 convolution's
// 1 KiB filter is under the limit: it goes to NHWC, between conversions.
// -1 sends every convolution to NHWC.
// CHECK-LABEL: func @large_and_small
// CHECK: %[[BIG:.*]] = dl.conv2d %{{.*}}, %{{.*}} {{.*}} layout = "NCHW" : (tensor<1x32x7x7xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x7x7xf32>
// CHECK: %[[R:.*]] = dl.relu %[[BIG]]
// CHECK: dl.transpose %[[R]] perm = [0, 2, 3, 1]
// CHECK: dl.conv2d {{.*}} layout = "NHWC" : (tensor<1x7x7x32xf32>, tensor<1x1x32x8xf32>) -> tensor<1x7x7x8xf32>
// CHECK: dl.transpose
// ALL-LABEL: func @large_and_small
// ALL-NOT: layout = "NCHW"
// expected-remark @+1 {{dl-layout: 1 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left, 1 convolution(s) kept in NCHW (large filters, or by their strategy)}}
func.func @large_and_small(%x: tensor<1x32x7x7xf32>, %w: tensor<32x32x3x3xf32>, %v: tensor<8x32x1x1xf32>) -> tensor<1x8x7x7xf32> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x32x7x7xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x7x7xf32>
  %1 = dl.relu %0 : tensor<1x32x7x7xf32> -> tensor<1x32x7x7xf32>
  %2 = dl.conv2d %1, %v strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x32x7x7xf32>, tensor<8x32x1x1xf32>) -> tensor<1x8x7x7xf32>
  return %2 : tensor<1x8x7x7xf32>
}

// Only f32 dense convolutions stay: an f16 one of the same size goes to
// NHWC.
// CHECK-LABEL: func @half
// CHECK: layout = "NHWC"
// expected-remark @+1 {{dl-layout: 1 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @half(%x: tensor<1x32x7x7xf16>, %w: tensor<32x32x3x3xf16>) -> tensor<1x32x7x7xf16> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x32x7x7xf16>, tensor<32x32x3x3xf16>) -> tensor<1x32x7x7xf16>
  return %0 : tensor<1x32x7x7xf16>
}

// A strategy written in the IR with a layout decides: the small filter
// stays NCHW by its strategy, the large one goes to NHWC by its.
// CHECK-LABEL: func @by_strategy
// CHECK: dl.conv2d {{.*}} layout = "NCHW" {dl.strategy = #dl.strategy<kind = direct, layout = "NCHW">} : (tensor<1x32x7x7xf32>, tensor<8x32x1x1xf32>)
// CHECK: dl.conv2d {{.*}} layout = "NHWC" {dl.strategy = #dl.strategy<kind = im2col_gemm, layout = "NHWC">} : (tensor<1x7x7x32xf32>, tensor<3x3x32x32xf32>)
// ALL-LABEL: func @by_strategy
// ALL: layout = "NCHW" {dl.strategy = #dl.strategy<kind = direct, layout = "NCHW">}
// expected-remark @+1 {{dl-layout: 1 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left, 1 convolution(s) kept in NCHW (large filters, or by their strategy)}}
func.func @by_strategy(%x: tensor<1x32x7x7xf32>, %w: tensor<32x32x3x3xf32>, %v: tensor<8x32x1x1xf32>) -> (tensor<1x8x7x7xf32>, tensor<1x32x7x7xf32>) {
  %0 = dl.conv2d %x, %v strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" {dl.strategy = #dl.strategy<kind = direct, layout = "NCHW">} : (tensor<1x32x7x7xf32>, tensor<8x32x1x1xf32>) -> tensor<1x8x7x7xf32>
  %1 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" {dl.strategy = #dl.strategy<kind = im2col_gemm, layout = "NHWC">} : (tensor<1x32x7x7xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x7x7xf32>
  return %0, %1 : tensor<1x8x7x7xf32>, tensor<1x32x7x7xf32>
}

// Constant filters over the limit go to NHWC all the same: the folders
// transpose them to HWIO once, at compile time, so no call pays for it.
// CHECK-LABEL: func @constant_filters
// CHECK: dl.conv2d {{.*}} layout = "NHWC" : (tensor<1x7x7x32xf32>, tensor<3x3x32x32xf32>) -> tensor<1x7x7x32xf32>
// CHECK: dl.conv2d {{.*}} layout = "NHWC" : (tensor<1x7x7x32xf32>, tensor<1x1x32x96xf32>) -> tensor<1x7x7x96xf32>
// expected-remark @+1 {{dl-layout: 2 convolution/pooling op(s) in NHWC, 2 layout conversion(s) left}}
func.func @constant_filters(%x: tensor<1x32x7x7xf32>) -> tensor<1x96x7x7xf32> {
  %w = dl.constant dense<0.5> : tensor<32x32x3x3xf32>
  %v = dl.constant dense<0.25> : tensor<96x32x1x1xf32>
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x32x7x7xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x7x7xf32>
  %1 = dl.conv2d %0, %v strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x32x7x7xf32>, tensor<96x32x1x1xf32>) -> tensor<1x96x7x7xf32>
  return %1 : tensor<1x96x7x7xf32>
}
