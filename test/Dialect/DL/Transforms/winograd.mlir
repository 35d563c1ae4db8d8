// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-winograd{min-tiles=1 min-channels=1})' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-winograd{report=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-winograd)' | FileCheck %s --check-prefix=DEFAULT
// RUN: not dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-winograd{min-tiles=0})' 2>&1 | FileCheck %s --check-prefix=BADTILES

// A 3x3 convolution of stride 1 as F(2x2, 3x3): the input padded to whole
// 4x4 tiles (2 x 2 tiles of 2x2 outputs: 6 x 6); V = BT d BT^T separably,
// the rows' four views (stride 2 along H) combined into R [4, 2, 6, 1],
// R's four column views (stride 2 along W) into V [16, 2, 2, 1] (index
// j * 4 + i); one batched product with U = G g G^T at the same index (a
// filter whose first row is ones: U[i][j] = [1, .5, .5, 0][i] * [1, 1.5,
// .5, 1][j]); the output transform over j (whole blocks of M), then over
// i with the bias, and one transpose interleaving each tile's 2x2 outputs.
// CHECK-LABEL: func.func @transformed
// CHECK-NOT: dl.conv2d
// CHECK: %[[P:.*]] = dl.pad %arg0 low = [0, 1, 1, 0] high = [0, 1, 1, 0]
// CHECK-SAME: -> tensor<1x6x6x1xf32>
// CHECK: %[[D0:.*]] = dl.slice %[[P]] starts = [0, 0, 0, 0] sizes = [1, 2, 6, 1] strides = [1, 2, 1, 1]
// CHECK: %[[D1:.*]] = dl.slice %[[P]] starts = [0, 1, 0, 0] sizes = [1, 2, 6, 1] strides = [1, 2, 1, 1]
// CHECK: %[[D2:.*]] = dl.slice %[[P]] starts = [0, 2, 0, 0] sizes = [1, 2, 6, 1] strides = [1, 2, 1, 1]
// CHECK: %[[D3:.*]] = dl.slice %[[P]] starts = [0, 3, 0, 0] sizes = [1, 2, 6, 1] strides = [1, 2, 1, 1]
// CHECK: %[[R0:.*]] = dl.sub %[[D0]], %[[D2]]
// CHECK: %[[R1:.*]] = dl.add %[[D1]], %[[D2]]
// CHECK: %[[R2:.*]] = dl.sub %[[D2]], %[[D1]]
// CHECK: %[[R3:.*]] = dl.sub %[[D1]], %[[D3]]
// CHECK: %[[R:.*]] = dl.concat %[[R0]], %[[R1]], %[[R2]], %[[R3]] axis = 0 : {{.*}} -> tensor<4x2x6x1xf32>
// CHECK-COUNT-4: dl.slice %[[R]] starts = [0, 0, {{[0-3]}}, 0] sizes = [4, 2, 2, 1] strides = [1, 1, 2, 1]
// CHECK: %[[V:.*]] = dl.concat {{.*}} axis = 0 : {{.*}} -> tensor<16x2x2x1xf32>
// CHECK: %[[VR:.*]] = dl.reshape %[[V]] shape = [16, 4, 1]
// CHECK: %[[U:.*]] = dl.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}5.000000e-01]], {{\[\[}}5.000000e-01]], {{\[\[}}0.000000e+00]], {{\[\[}}1.500000e+00]], {{\[\[}}7.500000e-01]], {{\[\[}}7.500000e-01]], {{\[\[}}0.000000e+00]], {{\[\[}}5.000000e-01]], {{\[\[}}2.500000e-01]], {{\[\[}}2.500000e-01]], {{\[\[}}0.000000e+00]], {{\[\[}}1.000000e+00]], {{\[\[}}5.000000e-01]], {{\[\[}}5.000000e-01]], {{\[\[}}0.000000e+00]]]> : tensor<16x1x1xf32>
// CHECK: %[[M:.*]] = dl.matmul %[[VR]], %[[U]] : (tensor<16x4x1xf32>, tensor<16x1x1xf32>) -> tensor<16x4x1xf32>
// CHECK: %[[M4:.*]] = dl.reshape %[[M]] shape = [16, 2, 2, 1]
// CHECK-COUNT-4: dl.slice %[[M4]] starts = [{{0|4|8|12}}, 0, 0, 0] sizes = [4, 2, 2, 1]
// CHECK: %[[Z:.*]] = dl.concat {{.*}} axis = 0 : {{.*}} -> tensor<8x2x2x1xf32>
// CHECK: %[[Z6:.*]] = dl.reshape %[[Z]] shape = [2, 4, 1, 2, 2, 1]
// CHECK-COUNT-4: dl.slice %[[Z6]] starts = [0, {{[0-3]}}, 0, 0, 0, 0] sizes = [2, 1, 1, 2, 2, 1]
// CHECK: dl.add {{.*}}, %arg1 : (tensor<2x1x1x2x2x1xf32>, tensor<1xf32>)
// CHECK: dl.add {{.*}}, %arg1 : (tensor<2x1x1x2x2x1xf32>, tensor<1xf32>)
// CHECK: %[[Y:.*]] = dl.concat {{.*}} axis = 1 : {{.*}} -> tensor<2x2x1x2x2x1xf32>
// CHECK: %[[T:.*]] = dl.transpose %[[Y]] perm = [2, 3, 1, 4, 0, 5] : tensor<2x2x1x2x2x1xf32> -> tensor<1x2x2x2x2x1xf32>
// CHECK: %[[O:.*]] = dl.reshape %[[T]] shape = [1, 4, 4, 1]
// CHECK-NOT: dl.slice
// CHECK: return %[[O]]
// REPORT: remark: dl-winograd: left alone: fewer than min-channels (64) input or output channels
// DEFAULT-LABEL: func.func @transformed
// DEFAULT: dl.conv2d
func.func @transformed(%x: tensor<1x4x4x1xf32>, %b: tensor<1xf32>) -> tensor<1x4x4x1xf32> {
  %w = dl.constant dense<[[[[1.0]], [[1.0]], [[1.0]]], [[[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]]]]> : tensor<3x3x1x1xf32>
  %y = dl.conv2d %x, %w, %b strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<1xf32>) -> tensor<1x4x4x1xf32>
  return %y : tensor<1x4x4x1xf32>
}

// -----

// An odd output (5 x 3, no bias, padding only at the top and left): 3 x 2
// tiles, the input padded to 8 x 6, the interleaved 6 x 4 sliced to 5 x 3.
// CHECK-LABEL: func.func @odd_output
// CHECK: dl.pad %arg0 low = [0, 1, 1, 0] high = [0, 2, 2, 0] {{.*}} : tensor<1x5x3x2xf32> -> tensor<1x8x6x2xf32>
// CHECK: dl.matmul {{.*}} : (tensor<16x6x2xf32>, tensor<16x2x3xf32>) -> tensor<16x6x3xf32>
// CHECK-NOT: dl.add {{.*}}tensor<3xf32>
// CHECK: dl.reshape {{.*}} shape = [1, 6, 4, 3]
// CHECK: dl.slice {{.*}} starts = [0, 0, 0, 0] sizes = [1, 5, 3, 3] strides = [1, 1, 1, 1] : tensor<1x6x4x3xf32> -> tensor<1x5x3x3xf32>
func.func @odd_output(%x: tensor<1x5x3x2xf32>) -> tensor<1x5x3x3xf32> {
  %w = dl.constant dense<0.5> : tensor<3x3x2x3xf32>
  %y = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x5x3x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x5x3x3xf32>
  return %y : tensor<1x5x3x3xf32>
}

// -----

// What the pass refuses, each with its reason.
// CHECK-LABEL: func.func @refused
// CHECK-COUNT-8: dl.conv2d
// CHECK-NOT: dl.matmul
// REPORT: remark: dl-winograd: left alone: strided
// REPORT: remark: dl-winograd: left alone: not a 3x3 filter
// REPORT: remark: dl-winograd: left alone: dilated
// REPORT: remark: dl-winograd: left alone: grouped
// REPORT: remark: dl-winograd: left alone: not NHWC
// REPORT: remark: dl-winograd: left alone: the filter is not a dense constant
// REPORT: remark: dl-winograd: left alone: its strategy is recorded
// REPORT: remark: dl-winograd: left alone: dynamic shape
func.func @refused(%x: tensor<1x16x16x64xf32>, %xc: tensor<1x64x16x16xf32>, %wa: tensor<3x3x64x64xf32>, %xd: tensor<?x16x16x64xf32>) -> (tensor<1x8x8x64xf32>, tensor<1x12x12x64xf32>, tensor<1x12x12x64xf32>, tensor<1x16x16x64xf32>, tensor<1x64x16x16xf32>, tensor<1x16x16x64xf32>, tensor<1x16x16x64xf32>, tensor<?x16x16x64xf32>) {
  %w = dl.constant dense<1.0> : tensor<3x3x64x64xf32>
  %w5 = dl.constant dense<1.0> : tensor<5x5x64x64xf32>
  %wg = dl.constant dense<1.0> : tensor<3x3x32x64xf32>
  %wc = dl.constant dense<1.0> : tensor<64x64x3x3xf32>
  %0 = dl.conv2d %x, %w strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x16x16x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x8x8x64xf32>
  %1 = dl.conv2d %x, %w5 strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x16x16x64xf32>, tensor<5x5x64x64xf32>) -> tensor<1x12x12x64xf32>
  %2 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [2, 2] groups = 1 layout = "NHWC" : (tensor<1x16x16x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x12x12x64xf32>
  %3 = dl.conv2d %x, %wg strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 2 layout = "NHWC" : (tensor<1x16x16x64xf32>, tensor<3x3x32x64xf32>) -> tensor<1x16x16x64xf32>
  %4 = dl.conv2d %xc, %wc strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x64x16x16xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x16x16xf32>
  %5 = dl.conv2d %x, %wa strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x16x16x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x16x16x64xf32>
  %6 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" {dl.strategy = #dl.strategy<kind = direct, rows = 6, vectors = 2, layout = "NHWC">} : (tensor<1x16x16x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x16x16x64xf32>
  %7 = dl.conv2d %xd, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<?x16x16x64xf32>, tensor<3x3x64x64xf32>) -> tensor<?x16x16x64xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<1x8x8x64xf32>, tensor<1x12x12x64xf32>, tensor<1x12x12x64xf32>, tensor<1x16x16x64xf32>, tensor<1x64x16x16xf32>, tensor<1x16x16x64xf32>, tensor<1x16x16x64xf32>, tensor<?x16x16x64xf32>
}

// -----

// Too few tiles (ResNet-50's 7x7 stage at batch 1: 4 x 4 tiles) or
// channels for the defaults; transformed where the options allow.
// CHECK-LABEL: func.func @too_small
// CHECK-NOT: dl.conv2d
// CHECK: dl.matmul {{.*}} -> tensor<16x16x64xf32>
// CHECK: dl.matmul {{.*}} -> tensor<16x64x64xf32>
// REPORT: remark: dl-winograd: left alone: 16 tiles, fewer than min-tiles (32)
// REPORT: remark: dl-winograd: left alone: fewer than min-channels (64) input or output channels
// DEFAULT-LABEL: func.func @too_small
// DEFAULT-COUNT-2: dl.conv2d
// DEFAULT-NOT: dl.matmul
func.func @too_small(%x: tensor<1x7x7x64xf32>, %y: tensor<1x16x16x32xf32>) -> (tensor<1x7x7x64xf32>, tensor<1x16x16x64xf32>) {
  %w = dl.constant dense<1.0> : tensor<3x3x64x64xf32>
  %w32 = dl.constant dense<1.0> : tensor<3x3x32x64xf32>
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x7x7x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x7x7x64xf32>
  %1 = dl.conv2d %y, %w32 strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x16x16x32xf32>, tensor<3x3x32x64xf32>) -> tensor<1x16x16x64xf32>
  return %0, %1 : tensor<1x7x7x64xf32>, tensor<1x16x16x64xf32>
}

// -----

// BADTILES: dl-winograd: min-tiles and min-channels must be at least 1, but got 0 and 64
func.func @bad_options(%x: tensor<1x4x4x1xf32>) -> tensor<1x4x4x1xf32> {
  return %x : tensor<1x4x4x1xf32>
}
