//===- Winograd.cpp - dl-winograd -----------------------------------------===//
//
// 3x3 convolutions of stride 1 by Winograd's minimal filtering F(2x2, 3x3)
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks",
// 2016): each 2x2 block of outputs from a 4x4 tile of the input, with 16
// multiplications per input and output channel pair instead of 36. In dl
// ops, on an NHWC `dl.conv2d` with a constant HWIO filter g [3, 3, C, K]:
//
//   xp  = x padded to [N, 2T+2, 2S+2, C]   (T x S tiles: T = ceil(OH / 2))
//   R_i = sum_a BT[i,a] xp[:, a::2, :, :]  rows first: four strided views of
//                                         T rows each, two terms per R_i,
//                                         concatenated: [4N, T, 2S+2, C]
//   V_j = sum_b BT[j,b] R[:, :, b::2, :]   then columns: [16N, T, S, C] at
//                                         index (j * 4 + i) * N + n, viewed
//                                         as [16, N*T*S, C]
//   U   = G g G^T                        [16, C, K], computed here (double),
//                                         at the same index j * 4 + i
//   M   = V @ U                          [16, N*T*S, K], one batched product
//   Z_v = sum_j AT[v,j] M[j]              over j: whole blocks [4N, T, S, K]
//   Y_u = sum_i AT[u,i] Z[:, i] + bias    over i: [2 (v), 1, N, T, S, K]
//   y   = Y [v, u, n, t, s, k] transposed to [n, t, u, s, v, k], reshaped,
//         sliced to [N, OH, OW, K]
//
// with BT = [[1,0,-1,0], [0,1,1,0], [0,-1,1,0], [0,1,0,-1]],
// G = [[1,0,0], [1/2,1/2,1/2], [1/2,-1/2,1/2], [0,0,1]] and
// AT = [[1,1,1,0], [0,1,-1,-1]]: the transforms are additions (float32
// sums of two to three terms per step). The product does 16/36 of the
// direct convolution's multiply-adds; the transforms are passes over the
// input and the product, cheap next to it while C and K are a few dozen or
// more. Separable transforms take 8 + 4 loop nests (V's 16 sums of four
// views each, and the output's 4 of nine, took 16 + 4: the same speed in
// ResNet-50, a slower compile: 1.33 -> 0.81 s for one 28x28x128 layer).
//
// Measured on a Zen 3 (AVX2, 2 threads), medians, 3x3 C -> C with bias and
// ReLU against what dlc ran before (im2col GEMM, or the direct convolution
// where the filter fits L2): batch 1 28x28x128 1.60 -> 0.87 ms, 14x14x256
// 1.51 -> 0.80, 56x56x128 6.8 -> 3.8, 56x56x64 1.43 -> 1.13 (direct);
// batch 8 14x14x256 13.2 -> 6.9, 7x7x512 13.1 -> 8.9; timm ResNet-50 batch
// 1 52.2 -> 46.2 ms, batch 8 492 -> 408 ms. The transforms pass over 4x
// the input and the output: few channels lose (112x112x32 1.36 -> 1.63
// ms), hence min-channels. Few tiles lose too: the product's weights (16 C
// K floats, 1.8x the filter) stream from memory for N*T*S rows only
// (ResNet-50's 7x7 stage at batch 1: 16 tiles of 512 x 512, 1.85 -> 2.2
// ms), hence min-tiles.
//
// Non-finite inputs: an infinity in a tile reaches its outputs through
// sums of opposite signs, so they read NaN where the direct sum gives
// +-inf (as in every Winograd convolution: cuDNN's, oneDNN's, NNPACK's);
// finite inputs keep float32 accuracy.
//
// Cost: each distinct transformed shape adds about 0.5 s of code
// generation on a Zen 3 (12 transform nests and a batched micro-kernel:
// ResNet-50 at batch 1, three distinct shapes, 6.2 -> 8.2 s from dl to
// machine code); `dlc.jit(..., disable="dl-winograd")` trades it back.
//
// Left alone: another kernel size, stride or dilation, groups, NCHW (dl-layout
// runs first), dynamic shapes, element types other than f32, a filter that
// is not a dense constant, a strategy recorded on the op (forced in the IR or
// tuned), fewer than min-tiles tiles or min-channels channels. `report` says
// which and why in remarks.
//
// Upstream MLIR has linalg.winograd_{filter,input,output}_transform ops
// (F(4x4,3x3), F(2x2,5x5)...) and a pattern producing them, but no CPU
// lowering that beats ours: they tile into scalar loops around small
// matmuls per tile. Expressing the transforms as dl ops keeps them on the
// paths dlc already optimizes (fused elementwise nests vectorized along the
// channels, the register-tiled batched product): hence ours.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"
#include "dl/Transforms/Passes.h"
#include "dl/Transforms/Strategy.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLWINOGRAD
#include "dl/Transforms/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

constexpr int BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr int AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

/// The f32 constant behind `value` (a splat too), or null.
DenseElementsAttr constantFilter(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return {};
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.getElementType().isF32())
    return {};
  return dense;
}

int64_t ceilHalf(int64_t v) { return (v + 1) / 2; }

/// Why `conv` is left alone, or "".
std::string refusal(Conv2dOp conv, int64_t minTiles, int64_t minChannels) {
  if (std::string why = denseConvolutionRefusal(conv); !why.empty())
    return why;
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  auto result = cast<RankedTensorType>(conv.getResult().getType());
  if (filter.getDimSize(0) != 3 || filter.getDimSize(1) != 3)
    return "not a 3x3 filter";
  if (llvm::any_of(conv.getStrides(), [](int64_t s) { return s != 1; }))
    return "strided";
  if (llvm::any_of(conv.getDilations(), [](int64_t d) { return d != 1; }))
    return "dilated";
  if (result.getNumElements() == 0)
    return "no elements";
  int64_t channels = input.getDimSize(3), features = filter.getDimSize(3);
  if (channels < minChannels || features < minChannels)
    return "fewer than min-channels (" + std::to_string(minChannels) +
           ") input or output channels";
  int64_t tiles = result.getDimSize(0) * ceilHalf(result.getDimSize(1)) *
                  ceilHalf(result.getDimSize(2));
  if (tiles < minTiles)
    return std::to_string(tiles) + " tiles, fewer than min-tiles (" +
           std::to_string(minTiles) + ")";
  if (!constantFilter(conv.getFilter()))
    return "the filter is not a dense constant";
  return "";
}

/// sum_k coefficient[k] * terms[k] for coefficients in {-1, 0, 1}, as dl
/// additions and subtractions (a +1 term first: every sum here has one).
Value signedSum(OpBuilder &b, Location loc, ArrayRef<int> coefficients,
                ArrayRef<Value> terms) {
  size_t firstPlus = llvm::find(coefficients, 1) - coefficients.begin();
  assert(firstPlus < terms.size() && "a sum without a +1 term");
  Value sum = terms[firstPlus];
  for (size_t k = 0; k < terms.size(); ++k) {
    if (coefficients[k] == 0 || k == firstPlus)
      continue;
    sum = coefficients[k] == 1 ? Value(AddOp::create(b, loc, sum, terms[k]))
                               : Value(SubOp::create(b, loc, sum, terms[k]));
  }
  return sum;
}

void rewrite(Conv2dOp conv) {
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  auto result = cast<RankedTensorType>(conv.getResult().getType());
  int64_t n = input.getDimSize(0), h = input.getDimSize(1),
          w = input.getDimSize(2), c = input.getDimSize(3);
  int64_t k = filter.getDimSize(3);
  int64_t oh = result.getDimSize(1), ow = result.getDimSize(2);
  int64_t th = ceilHalf(oh), tw = ceilHalf(ow), rows = n * th * tw;
  ArrayRef<int64_t> pad = conv.getPadding();
  Type f32 = b.getF32Type();

  // The input padded to whole tiles: 2T + 2 rows and 2S + 2 columns.
  int64_t bottom = 2 * th + 2 - h - pad[0], right = 2 * tw + 2 - w - pad[2];
  Value x = conv.getInput();
  if (pad[0] || bottom || pad[2] || right)
    x = PadOp::create(b, loc, x, b.getDenseI64ArrayAttr({0, pad[0], pad[2], 0}),
                      b.getDenseI64ArrayAttr({0, bottom, right, 0}),
                      b.getF64FloatAttr(0.0));
  // V = BT d BT^T, separably: rows first (R_i over whole rows of tiles),
  // then columns; V's product index is j * 4 + i.
  auto views = [&](Value from, int axis, ArrayRef<int64_t> sizes) {
    SmallVector<Value> out;
    for (int64_t a = 0; a < 4; ++a) {
      SmallVector<int64_t> starts(4, 0), steps(4, 1);
      starts[axis] = a;
      steps[axis] = 2;
      out.push_back(SliceOp::create(b, loc, from, starts, sizes, steps));
    }
    return out;
  };
  auto combine = [&](const int (*matrix)[4], int count, ArrayRef<Value> terms,
                     int64_t axis, Value bias) {
    SmallVector<Value> sums;
    for (int i = 0; i < count; ++i) {
      Value sum = signedSum(b, loc, ArrayRef<int>(matrix[i], 4), terms);
      sums.push_back(bias ? Value(AddOp::create(b, loc, sum, bias)) : sum);
    }
    return ConcatOp::create(b, loc, sums, b.getI64IntegerAttr(axis)).getResult();
  };
  Value rowsDone = combine(BT, 4, views(x, 1, {n, th, 2 * tw + 2, c}), 0, {});
  Value vs = combine(BT, 4, views(rowsDone, 2, {4 * n, th, tw, c}), 0, {});
  vs = ReshapeOp::create(b, loc, vs, ArrayRef<int64_t>{16, rows, c});

  // U = G g G^T for every (c, k), from the HWIO filter, in double, at
  // product index j * 4 + i.
  SmallVector<float> g(constantFilter(conv.getFilter()).getValues<float>());
  std::vector<float> u(static_cast<size_t>(16 * c * k));
  std::vector<double> gg(9), left(12);
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t ki = 0; ki < k; ++ki) {
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s)
          gg[r * 3 + s] = g[((r * 3 + s) * c + ci) * k + ki];
      for (int i = 0; i < 4; ++i)
        for (int s = 0; s < 3; ++s)
          left[i * 3 + s] = G[i][0] * gg[s] + G[i][1] * gg[3 + s] +
                            G[i][2] * gg[6 + s];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          u[((j * 4 + i) * c + ci) * k + ki] = static_cast<float>(
              left[i * 3] * G[j][0] + left[i * 3 + 1] * G[j][1] +
              left[i * 3 + 2] * G[j][2]);
    }
  auto uType = RankedTensorType::get({16, c, k}, f32);
  Value us = ConstantOp::create(b, loc,
                                DenseElementsAttr::get(uType, ArrayRef<float>(u)));
  Value m = MatmulOp::create(b, loc, vs, us);

  // Y = AT M AT^T, separably: over j (whole blocks of M), then over i (the
  // bias added there), each tile's outputs then at [v, u, n, t, s, k].
  m = ReshapeOp::create(b, loc, m, ArrayRef<int64_t>{16 * n, th, tw, k});
  SmallVector<Value> blocks;
  for (int64_t j = 0; j < 4; ++j)
    blocks.push_back(SliceOp::create(b, loc, m, ArrayRef<int64_t>{j * 4 * n, 0, 0, 0},
                                     ArrayRef<int64_t>{4 * n, th, tw, k},
                                     ArrayRef<int64_t>{1, 1, 1, 1}));
  Value z = combine(AT, 2, blocks, 0, {});
  z = ReshapeOp::create(b, loc, z, ArrayRef<int64_t>{2, 4, n, th, tw, k});
  SmallVector<Value> parts;
  for (int64_t i = 0; i < 4; ++i)
    parts.push_back(SliceOp::create(b, loc, z, ArrayRef<int64_t>{0, i, 0, 0, 0, 0},
                                    ArrayRef<int64_t>{2, 1, n, th, tw, k},
                                    ArrayRef<int64_t>{1, 1, 1, 1, 1, 1}));
  Value y = combine(AT, 2, parts, 1, conv.getBias());
  y = TransposeOp::create(b, loc, y,
                          b.getDenseI64ArrayAttr({2, 3, 1, 4, 0, 5}));
  y = ReshapeOp::create(b, loc, y, ArrayRef<int64_t>{n, 2 * th, 2 * tw, k});
  if (2 * th != oh || 2 * tw != ow)
    y = SliceOp::create(b, loc, y, ArrayRef<int64_t>{0, 0, 0, 0},
                        ArrayRef<int64_t>{n, oh, ow, k},
                        ArrayRef<int64_t>{1, 1, 1, 1});
  Operation *filterOp = conv.getFilter().getDefiningOp();
  conv.getResult().replaceAllUsesWith(y);
  conv->erase();
  if (filterOp->use_empty())
    filterOp->erase();
}

struct DLWinogradPass : public dl::impl::DLWinogradBase<DLWinogradPass> {
  using DLWinogradBase::DLWinogradBase;

  void runOnOperation() override {
    if (minTiles < 1 || minChannels < 1) {
      getOperation()->emitError("dl-winograd: min-tiles and min-channels must "
                                "be at least 1, but got ")
          << static_cast<int64_t>(minTiles) << " and "
          << static_cast<int64_t>(minChannels);
      return signalPassFailure();
    }
    SmallVector<Conv2dOp> convolutions;
    getOperation()->walk([&](Conv2dOp conv) {
      std::string why = refusal(conv, minTiles, minChannels);
      if (why.empty())
        convolutions.push_back(conv);
      else if (report)
        conv->emitRemark("dl-winograd: left alone: ") << why;
    });
    for (Conv2dOp conv : convolutions) {
      if (report)
        conv->emitRemark("dl-winograd: F(2x2, 3x3)");
      rewrite(conv);
    }
  }
};

} // namespace
