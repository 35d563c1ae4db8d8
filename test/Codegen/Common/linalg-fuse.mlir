// RUN: dl-opt %s --dl-linalg-fuse | FileCheck %s

// The output map @packed_transposed's product is given: rows first.
// CHECK: #[[$ROWS:map[0-9]*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>

// Two elementwise ops, each reading the other's result once per element:
// one loop nest computes both.
// CHECK-LABEL: func @chain
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return

// A GEMM reads each element of its operand N times: relu stays a kernel of
// its own rather than being recomputed inside the matmul.
// CHECK-LABEL: func @into_matmul
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.matmul ins(%1,

// An NHWC 1x1 convolution as dl-to-linalg writes it: the GEMM over
// [N*H*W, F], its bias add, expanded to [N, H, W, F], then relu. The bias
// add runs expanded (reading the GEMM through the expand_shape), so relu
// fuses with it: one elementwise kernel, the GEMM's epilogue later.
// CHECK-LABEL: func @bias_expand_relu
// CHECK: %[[P:.*]] = linalg.matmul
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [3, 2, 2, 8]
// CHECK: linalg.generic {{.*}} ins(%[[E]], %{{.*}} : tensor<3x2x2x8xf32>, tensor<8xf32>)
// CHECK: arith.addf
// CHECK-NEXT: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return

// Refused with a dynamic expansion (the register tile's epilogue reads C
// only through a static one): the bias add stays 2-D, relu its own kernel.
// CHECK-LABEL: func @bias_expand_dynamic
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<?x8xf32>
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: } -> tensor<?x2x2x8xf32>

// Refused for a producer that asks for its indices (a gather's or a
// resize's coordinates): it stays 2-D, its index arithmetic untouched.
// CHECK-LABEL: func @index_expand
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: } -> tensor<12x8xf32>
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: } -> tensor<3x2x2x8xf32>
// dl-pack-weights' product [J, R, p] transposed back to rows [R, J, p]: the
// product writes its tiles where the rows go (its output map permuted, a
// fill of the transposed shape), and no transpose is left.
// CHECK-LABEL: func @packed_transposed
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<5x3x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{[a-z0-9]*}}, #{{[a-z0-9]*}}, #[[$ROWS]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%[[F]] : tensor<5x3x8xf32>)
// CHECK: arith.mulf
// CHECK: } -> tensor<5x3x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return

// Refused where the product has another user (it is needed as it is) and
// where it accumulates into an argument (its initial values would need the
// transpose too): the transpose stays.
// CHECK-LABEL: func @packed_transposed_used
// CHECK: } -> tensor<3x5x8xf32>
// CHECK: linalg.transpose
// CHECK-LABEL: func @packed_transposed_accumulate
// CHECK: outs(%arg2 : tensor<3x5x8xf32>)
// CHECK: } -> tensor<3x5x8xf32>
// CHECK: linalg.transpose
// ... and its bias add after the reshape back to [1, R, J*p] (collapse J, p;
// expand R to 1 x R): the expansion goes first, then the add runs expanded
// over [1, R, J, p], reading the product through an expand_shape that
// leaves its columns whole (the GEMM's epilogue later), the bias as [J, p].
// CHECK-LABEL: func @packed_bias
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2], [3]] output_shape [1, 5, 3, 8]
// CHECK: %[[B:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [3, 8]
// CHECK: linalg.generic {{.*}} ins(%[[E]], %[[B]] : tensor<1x5x3x8xf32>, tensor<3x8xf32>)
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<1x5x3x8xf32> into tensor<1x5x24xf32>
// A fill that CSE shared between two products is rebuilt for each.
// CHECK-LABEL: func @packed_shared_fill
// CHECK-COUNT-2: linalg.generic {indexing_maps = [#{{[a-z0-9]*}}, #{{[a-z0-9]*}}, #[[$ROWS]]]
// CHECK-NOT: linalg.transpose
// CHECK: return
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pa = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
#pb = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#pc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rows = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias3 = affine_map<(d0, d1, d2) -> (d2)>
module {
  func.func @chain(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = math.exp %in : f32
      linalg.yield %4 : f32
    } -> tensor<4x8xf32>
    %2 = tensor.empty() : tensor<4x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x8xf32>) outs(%2 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %4 = arith.maximumf %in, %cst : f32
      linalg.yield %4 : f32
    } -> tensor<4x8xf32>
    return %3 : tensor<4x8xf32>
  }
  func.func @into_matmul(%arg0: tensor<4x8xf32>, %arg1: tensor<8x16xf32>) -> tensor<4x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %5 = arith.maximumf %in, %cst : f32
      linalg.yield %5 : f32
    } -> tensor<4x8xf32>
    %2 = tensor.empty() : tensor<4x16xf32>
    %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %4 = linalg.matmul ins(%1, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%3 : tensor<4x16xf32>) -> tensor<4x16xf32>
    return %4 : tensor<4x16xf32>
  }
  func.func @bias_expand_relu(%x: tensor<12x4xf32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<3x2x2x8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<12x8xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<12x8xf32>) -> tensor<12x8xf32>
    %2 = linalg.matmul ins(%x, %w : tensor<12x4xf32>, tensor<4x8xf32>) outs(%1 : tensor<12x8xf32>) -> tensor<12x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]} ins(%2, %b : tensor<12x8xf32>, tensor<8xf32>) outs(%0 : tensor<12x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %6 = arith.addf %in, %in_0 : f32
      linalg.yield %6 : f32
    } -> tensor<12x8xf32>
    %4 = tensor.expand_shape %3 [[0, 1, 2], [3]] output_shape [3, 2, 2, 8] : tensor<12x8xf32> into tensor<3x2x2x8xf32>
    %5 = tensor.empty() : tensor<3x2x2x8xf32>
    %6 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<3x2x2x8xf32>) outs(%5 : tensor<3x2x2x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %7 = arith.maximumf %in, %cst : f32
      linalg.yield %7 : f32
    } -> tensor<3x2x2x8xf32>
    return %6 : tensor<3x2x2x8xf32>
  }
  func.func @bias_expand_dynamic(%x: tensor<?x4xf32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>, %n: index) -> tensor<?x2x2x8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    %rows = tensor.dim %x, %c0 : tensor<?x4xf32>
    %0 = tensor.empty(%rows) : tensor<?x8xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<?x8xf32>) -> tensor<?x8xf32>
    %2 = linalg.matmul ins(%x, %w : tensor<?x4xf32>, tensor<4x8xf32>) outs(%1 : tensor<?x8xf32>) -> tensor<?x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]} ins(%2, %b : tensor<?x8xf32>, tensor<8xf32>) outs(%0 : tensor<?x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %6 = arith.addf %in, %in_0 : f32
      linalg.yield %6 : f32
    } -> tensor<?x8xf32>
    %4 = tensor.expand_shape %3 [[0, 1, 2], [3]] output_shape [%n, 2, 2, 8] : tensor<?x8xf32> into tensor<?x2x2x8xf32>
    %5 = tensor.empty(%n) : tensor<?x2x2x8xf32>
    %6 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<?x2x2x8xf32>) outs(%5 : tensor<?x2x2x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %7 = arith.maximumf %in, %cst : f32
      linalg.yield %7 : f32
    } -> tensor<?x2x2x8xf32>
    return %6 : tensor<?x2x2x8xf32>
  }
  func.func @index_expand(%x: tensor<12x8xf32>) -> tensor<3x2x2x8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<12x8xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<12x8xf32>) outs(%0 : tensor<12x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %6 = arith.addf %in, %f : f32
      linalg.yield %6 : f32
    } -> tensor<12x8xf32>
    %4 = tensor.expand_shape %3 [[0, 1, 2], [3]] output_shape [3, 2, 2, 8] : tensor<12x8xf32> into tensor<3x2x2x8xf32>
    %5 = tensor.empty() : tensor<3x2x2x8xf32>
    %6 = linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<3x2x2x8xf32>) outs(%5 : tensor<3x2x2x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %7 = arith.maximumf %in, %cst : f32
      linalg.yield %7 : f32
    } -> tensor<3x2x2x8xf32>
    return %6 : tensor<3x2x2x8xf32>
  }
  func.func @packed_transposed(%x: tensor<1x5x4xf32>, %w: tensor<3x4x8xf32>) -> tensor<5x3x8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<3x5x8xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x5x8xf32>) -> tensor<3x5x8xf32>
    %2 = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x5x4xf32>, tensor<3x4x8xf32>) outs(%1 : tensor<3x5x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %m = arith.mulf %in, %in_0 : f32
      %s = arith.addf %out, %m : f32
      linalg.yield %s : f32
    } -> tensor<3x5x8xf32>
    %3 = tensor.empty() : tensor<5x3x8xf32>
    %t = linalg.transpose ins(%2 : tensor<3x5x8xf32>) outs(%3 : tensor<5x3x8xf32>) permutation = [1, 0, 2]
    return %t : tensor<5x3x8xf32>
  }
  func.func @packed_transposed_used(%x: tensor<1x5x4xf32>, %w: tensor<3x4x8xf32>) -> (tensor<5x3x8xf32>, tensor<3x5x8xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<3x5x8xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x5x8xf32>) -> tensor<3x5x8xf32>
    %2 = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x5x4xf32>, tensor<3x4x8xf32>) outs(%1 : tensor<3x5x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %m = arith.mulf %in, %in_0 : f32
      %s = arith.addf %out, %m : f32
      linalg.yield %s : f32
    } -> tensor<3x5x8xf32>
    %3 = tensor.empty() : tensor<5x3x8xf32>
    %t = linalg.transpose ins(%2 : tensor<3x5x8xf32>) outs(%3 : tensor<5x3x8xf32>) permutation = [1, 0, 2]
    return %t, %2 : tensor<5x3x8xf32>, tensor<3x5x8xf32>
  }
  func.func @packed_transposed_accumulate(%x: tensor<1x5x4xf32>, %w: tensor<3x4x8xf32>, %acc: tensor<3x5x8xf32>) -> tensor<5x3x8xf32> {
    %2 = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x5x4xf32>, tensor<3x4x8xf32>) outs(%acc : tensor<3x5x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %m = arith.mulf %in, %in_0 : f32
      %s = arith.addf %out, %m : f32
      linalg.yield %s : f32
    } -> tensor<3x5x8xf32>
    %3 = tensor.empty() : tensor<5x3x8xf32>
    %t = linalg.transpose ins(%2 : tensor<3x5x8xf32>) outs(%3 : tensor<5x3x8xf32>) permutation = [1, 0, 2]
    return %t : tensor<5x3x8xf32>
  }
  func.func @packed_bias(%x: tensor<1x5x4xf32>, %w: tensor<3x4x8xf32>, %b: tensor<24xf32>) -> tensor<1x5x24xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<5x3x8xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<5x3x8xf32>) -> tensor<5x3x8xf32>
    %2 = linalg.generic {indexing_maps = [#pa, #pb, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x5x4xf32>, tensor<3x4x8xf32>) outs(%1 : tensor<5x3x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %m = arith.mulf %in, %in_0 : f32
      %s = arith.addf %out, %m : f32
      linalg.yield %s : f32
    } -> tensor<5x3x8xf32>
    %c = tensor.collapse_shape %2 [[0], [1, 2]] : tensor<5x3x8xf32> into tensor<5x24xf32>
    %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [1, 5, 24] : tensor<5x24xf32> into tensor<1x5x24xf32>
    %3 = tensor.empty() : tensor<1x5x24xf32>
    %4 = linalg.generic {indexing_maps = [#map3, #bias3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e, %b : tensor<1x5x24xf32>, tensor<24xf32>) outs(%3 : tensor<1x5x24xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %6 = arith.addf %in, %in_0 : f32
      linalg.yield %6 : f32
    } -> tensor<1x5x24xf32>
    return %4 : tensor<1x5x24xf32>
  }
  func.func @packed_shared_fill(%x: tensor<1x5x4xf32>, %w: tensor<3x4x8xf32>, %v: tensor<3x4x8xf32>) -> (tensor<5x3x8xf32>, tensor<5x3x8xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<3x5x8xf32>
    %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<3x5x8xf32>) -> tensor<3x5x8xf32>
    %2 = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x5x4xf32>, tensor<3x4x8xf32>) outs(%1 : tensor<3x5x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %m = arith.mulf %in, %in_0 : f32
      %s = arith.addf %out, %m : f32
      linalg.yield %s : f32
    } -> tensor<3x5x8xf32>
    %3 = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %v : tensor<1x5x4xf32>, tensor<3x4x8xf32>) outs(%1 : tensor<3x5x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %m = arith.mulf %in, %in_0 : f32
      %s = arith.addf %out, %m : f32
      linalg.yield %s : f32
    } -> tensor<3x5x8xf32>
    %4 = tensor.empty() : tensor<5x3x8xf32>
    %t = linalg.transpose ins(%2 : tensor<3x5x8xf32>) outs(%4 : tensor<5x3x8xf32>) permutation = [1, 0, 2]
    %u = linalg.transpose ins(%3 : tensor<3x5x8xf32>) outs(%4 : tensor<5x3x8xf32>) permutation = [1, 0, 2]
    return %t, %u : tensor<5x3x8xf32>, tensor<5x3x8xf32>
  }
}
