// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},convert-dl-to-linalg,canonicalize)' | FileCheck %s

// Convolutions with the "direct" strategy: padding is a tensor.pad; groups =
// 1 is a named conv; one filter per channel is a depthwise conv on the
// collapsed filter; the bias is a broadcasting add along the channel
// dimension.
// CHECK-LABEL: func @conv_bias
// CHECK: %[[PADDED:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[CONV:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, dl.strategy = #dl.strategy<kind = direct>, strides = dense<2> : tensor<2xi64>} ins(%[[PADDED]], %{{.*}} : tensor<?x3x10x10xf32>, tensor<4x3x3x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[CONV]], %{{.*}} : tensor<?x4x4x4xf32>, tensor<4xf32>)
// CHECK: arith.addf
func.func @conv_bias(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4x4x4xf32> {
  %0 = dl.conv2d %x, %w, %b strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" {dl.strategy = #dl.strategy<kind = direct>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  return %0 : tensor<?x4x4x4xf32>
}

// -----

// CHECK-LABEL: func @conv_nhwc
// CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, dl.strategy = #dl.strategy<kind = direct>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x9x9x3xf32>, tensor<3x3x3x4xf32>)
func.func @conv_nhwc(%x: tensor<1x9x9x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x5x5x4xf32> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [2, 2] groups = 1 layout = "NHWC" {dl.strategy = #dl.strategy<kind = direct>} : (tensor<1x9x9x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x5x5x4xf32>
  return %0 : tensor<1x5x5x4xf32>
}

// -----

// CHECK-LABEL: func @depthwise
// CHECK: %[[FILTER:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<8x1x3x3xf32> into tensor<8x3x3xf32>
// CHECK: linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%{{.*}}, %[[FILTER]] : tensor<?x8x7x7xf32>, tensor<8x3x3xf32>)
func.func @depthwise(%x: tensor<?x8x5x5xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<?x8x5x5xf32> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 8 layout = "NCHW" : (tensor<?x8x5x5xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x5x5xf32>
  return %0 : tensor<?x8x5x5xf32>
}

// -----

// Other groups: a generic on views that split the channels into (group,
// channel-in-group); loops (n, g, f, oh, ow, kh, kw, c): in NHWC the
// group's channels innermost, contiguous in the input and the filter.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d3 + d5, d4 + d6, d1, d7)>
// CHECK-DAG: #[[FILT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7, d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d3, d4, d1, d2)>
// CHECK-LABEL: func @grouped
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2], [3, 4]] output_shape [1, 5, 5, 2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[FILT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x3x3x2x3xf32> into tensor<1x3x3x6xf32>
func.func @grouped(%x: tensor<1x5x5x4xf32>, %w: tensor<3x3x2x6xf32>) -> tensor<1x3x3x6xf32> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 2 layout = "NHWC" : (tensor<1x5x5x4xf32>, tensor<3x3x2x6xf32>) -> tensor<1x3x3x6xf32>
  return %0 : tensor<1x3x3x6xf32>
}

// -----

// NCHW groups keep (c, kh, kw) innermost: kw walks the input's contiguous w.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
// CHECK-DAG: #[[FILT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func @grouped_nchw
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[FILT]], #[[OUT]]]
func.func @grouped_nchw(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 2 layout = "NCHW" : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}

// -----

// Max pooling pads with -inf; average pooling without count_include_pad
// divides by a constant table of the non-padding elements per window.
// CHECK-LABEL: func @pools
// CHECK-DAG: %[[TABLE:.*]] = arith.constant dense<{{\[\[}}4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad
// CHECK: tensor.yield %[[NEGINF]] : f32
// CHECK: linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK: %[[SUMS:.*]] = linalg.pooling_nhwc_sum
// CHECK: linalg.generic {{.*}} ins(%[[SUMS]], %[[TABLE]] : tensor<1x3x3x2xf32>, tensor<3x3xf32>)
// CHECK: arith.divf
func.func @pools(%x: tensor<1x2x5x5xf32>, %y: tensor<1x5x5x2xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x3x3x2xf32>) {
  %0 = dl.max_pool2d %x kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = "NCHW" : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %1 = dl.avg_pool2d %y kernel = [3, 3] strides = [2, 2] padding = [1, 1, 1, 1] layout = "NHWC" : tensor<1x5x5x2xf32> -> tensor<1x3x3x2xf32>
  return %0, %1 : tensor<1x2x3x3xf32>, tensor<1x3x3x2xf32>
}

// -----

// argmax: value and index carried together; a NaN wins over numbers.
// CHECK-LABEL: func @argmax
// CHECK: %{{.*}}:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x6xf32>) outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xi64>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf uno
// CHECK: linalg.index 1
func.func @argmax(%x: tensor<4x6xf32>) -> tensor<4xi64> {
  %0 = dl.argmax %x axis = 1 : tensor<4x6xf32> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// gather wraps negative indices and clamps into the dimension: no
// out-of-bounds read.
// CHECK-LABEL: func @gather
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<?x2xi64>) outs(%{{.*}} : tensor<?x2x6xf32>)
// CHECK: arith.cmpi slt
// CHECK: arith.maxsi
// CHECK: arith.minsi %{{.*}}, %c9
// CHECK: tensor.extract %{{.*}} : tensor<10x6xf32>
func.func @gather(%t: tensor<10x6xf32>, %ids: tensor<?x2xi64>) -> tensor<?x2x6xf32> {
  %0 = dl.gather %t, %ids axis = 0 : (tensor<10x6xf32>, tensor<?x2xi64>) -> tensor<?x2x6xf32>
  return %0 : tensor<?x2x6xf32>
}

// -----

// Positive strides: a view; a negative stride: the view of the elements
// read (columns 1, 3, 5), then a generic reversing it.
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1) -> (d0, -d1 + 2)>
// CHECK-LABEL: func @slices
// CHECK: %[[READ:.*]] = tensor.extract_slice %{{.*}}[0, 1] [%{{.*}}, 3] [1, 2] : tensor<?x6xf32> to tensor<?x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[BACK]], #{{.*}}], {{.*}} ins(%[[READ]] :
// CHECK: tensor.extract_slice %{{.*}}[0, 1] [%{{.*}}, 2] [1, 3] : tensor<?x6xf32> to tensor<?x2xf32>
func.func @slices(%x: tensor<?x6xf32>) -> (tensor<?x3xf32>, tensor<?x2xf32>) {
  %0 = dl.slice %x starts = [0, 5] sizes = [-1, 3] strides = [1, -2] : tensor<?x6xf32> -> tensor<?x3xf32>
  %1 = dl.slice %x starts = [0, 1] sizes = [-1, 2] strides = [1, 3] : tensor<?x6xf32> -> tensor<?x2xf32>
  return %0, %1 : tensor<?x3xf32>, tensor<?x2xf32>
}

// -----

// Concatenation along the dynamic axis: offsets and size from tensor.dim.
// CHECK-LABEL: func @concat
// CHECK: %[[A:.*]] = tensor.dim %[[X:.*]], %c0
// CHECK: %[[B:.*]] = tensor.dim %{{.*}}, %c0
// CHECK: %[[N:.*]] = arith.addi %[[A]], %[[B]] : index
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK: %[[S:.*]] = tensor.insert_slice %{{.*}} into %[[E]][0, 0] [%{{.*}}, 3] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %[[S]][%[[A]], 0] [%{{.*}}, 3] [1, 1]
func.func @concat(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = dl.concat %x, %y axis = 0 : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Casts: to bool is `!= 0` stored as an i8; from bool is unsigned.
// CHECK-LABEL: func @casts
// CHECK-SAME: %{{.*}}: tensor<3xi8>) -> (tensor<3xi8>, tensor<3xf32>, tensor<3xi64>)
// CHECK: arith.cmpf une
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK: arith.uitofp %{{.*}} : i8 to f32
// CHECK: arith.fptosi %{{.*}} : f32 to i64
func.func @casts(%x: tensor<3xf32>, %b: tensor<3xi1>) -> (tensor<3xi1>, tensor<3xf32>, tensor<3xi64>) {
  %0 = dl.cast %x : tensor<3xf32> -> tensor<3xi1>
  %1 = dl.cast %b : tensor<3xi1> -> tensor<3xf32>
  %2 = dl.cast %x : tensor<3xf32> -> tensor<3xi64>
  return %0, %1, %2 : tensor<3xi1>, tensor<3xf32>, tensor<3xi64>
}

// -----

// Integer division never traps: x / 0 = 0 and x / -1 = -x.
// CHECK-LABEL: func @integer_division
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[Y:.*]], %c0_i32
// CHECK: %[[MINUS:.*]] = arith.cmpi eq, %[[Y]], %c-1_i32
// CHECK: %[[UNSAFE:.*]] = arith.ori %[[ZERO]], %[[MINUS]]
// CHECK: %[[D:.*]] = arith.select %[[UNSAFE]], %c1_i32, %[[Y]]
// CHECK: arith.divsi %{{.*}}, %[[D]]
// CHECK: math.ipowi
func.func @integer_division(%x: tensor<3xi32>, %y: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {
  %0 = dl.div %x, %y : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %1 = dl.pow %x, %y : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0, %1 : tensor<3xi32>, tensor<3xi32>
}

// -----

// Comparisons are ordered (false on NaN) except not_equal; where selects on
// the i8 condition.
// CHECK-LABEL: func @compare_where
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf une
// CHECK: arith.cmpi ne, %{{.*}}, %c0_i8 : i8
// CHECK: arith.select
func.func @compare_where(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xf32>) {
  %0 = dl.less %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = dl.not_equal %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = dl.where %1, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %2 : tensor<4xi1>, tensor<4xf32>
}

// -----

// Normalizations: batch norm is one generic reading the [C] parameters along
// the channel; layer norm reduces over the trailing dimensions twice (mean,
// then variance around it).
// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func @norms
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[CHANNEL]], #[[CHANNEL]], #[[CHANNEL]], #[[CHANNEL]], #{{.*}}]
// CHECK: math.sqrt
// CHECK: linalg.reduce { arith.addf } ins(%{{.*}} : tensor<?x4x6xf32>) outs(%{{.*}} : tensor<?xf32>) dimensions = [1, 2]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK: math.rsqrt
func.func @norms(%x: tensor<?x3x4x4xf32>, %c: tensor<3xf32>, %y: tensor<?x4x6xf32>, %g: tensor<4x6xf32>) -> (tensor<?x3x4x4xf32>, tensor<?x4x6xf32>) {
  %0 = dl.batch_norm %x, %c, %c, %c, %c epsilon = 1.0e-5 axis = 1 : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x4x4xf32>
  %1 = dl.layer_norm %y, %g, %g axis = 1 epsilon = 1.0e-5 : (tensor<?x4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<?x4x6xf32>
  return %0, %1 : tensor<?x3x4x4xf32>, tensor<?x4x6xf32>
}

// -----

// Activations: the tanh form of GELU; f16 transcendental math runs in f32.
// CHECK-LABEL: func @activations
// CHECK: math.tanh %{{.*}} : f32
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.erf %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @activations(%x: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = dl.gelu %x approximate_tanh : tensor<4xf32> -> tensor<4xf32>
  %1 = dl.erf %h : tensor<4xf16> -> tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// -----

// mean over a dynamic dimension divides by its runtime size.
// CHECK-LABEL: func @dynamic_mean
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x3xf32>
// CHECK: %[[I:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: arith.sitofp %[[I]] : i64 to f32
// CHECK: arith.divf
func.func @dynamic_mean(%x: tensor<?x3xf32>) -> tensor<3xf32> {
  %0 = dl.reduce_mean %x axes = [0] : tensor<?x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// im2col + GEMM (the default for f32, groups = 1).
// NCHW: the patches as rows col[n, (oh, ow), (c, kh, kw)], gathered by a
// 6-D generic whose input map is the convolution window; the GEMM reads the
// OIHW filter as it lies ([F, C*KH*KW], a transposed B); the [N, OH*OW, F]
// product transposed to NCHW by one generic that also adds the bias along F.
// CHECK-DAG: #[[GATHER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func @conv_im2col
// CHECK: %[[PADDED:.*]] = tensor.pad
// CHECK: %[[COL6:.*]] = linalg.generic {indexing_maps = [#[[GATHER]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[PADDED]] : tensor<?x3x10x10xf32>) outs(%{{.*}} : tensor<?x4x4x3x3x3xf32>)
// CHECK: %[[COL:.*]] = tensor.collapse_shape %[[COL6]] {{\[\[}}0], [1, 2], [3, 4, 5]] : tensor<?x4x4x3x3x3xf32> into tensor<?x16x27xf32>
// CHECK: %[[W:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[COL]], %[[W]] : tensor<?x16x27xf32>, tensor<4x27xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[BACK]], #[[BIAS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<?x16x4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<?x4x16xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]]
func.func @conv_im2col(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4x4x4xf32> {
  %0 = dl.conv2d %x, %w, %b strides = [2, 2] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  return %0 : tensor<?x4x4x4xf32>
}

// -----

// NHWC: the patches col[(n, oh, ow), (kh, kw, c)] against the HWIO filter
// as [KH*KW*C, F]: a plain linalg.matmul, no transposes. (The strategy is
// given: for so small a filter the target's choice is a direct convolution.)
// CHECK-LABEL: func @conv_im2col_nhwc
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x5x5x3x3x3xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<1x5x5x3x3x3xf32> into tensor<25x27xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3]] : tensor<3x3x3x4xf32> into tensor<27x4xf32>
// CHECK: linalg.matmul {dl.strategy = #dl.strategy<kind = im2col_gemm>} ins(%{{.*}}, %{{.*}} : tensor<25x27xf32>, tensor<27x4xf32>)
// CHECK-NOT: linalg.transpose
func.func @conv_im2col_nhwc(%x: tensor<1x9x9x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x5x5x4xf32> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [2, 2] groups = 1 layout = "NHWC" {dl.strategy = #dl.strategy<kind = im2col_gemm>} : (tensor<1x9x9x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x5x5x4xf32>
  return %0 : tensor<1x5x5x4xf32>
}
