//===- Winograd.cpp - dl-winograd -----------------------------------------===//
//
// 3x3 convolutions of stride 1 by Winograd's minimal filtering F(2x2, 3x3)
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks",
// 2016): each 2x2 block of outputs from a 4x4 tile of the input, with 16
// multiplications per input and output channel pair instead of 36. In dl
// ops, on an NHWC `dl.conv2d` with a constant HWIO filter g [3, 3, C, K]:
//
//   xp  = x padded to [N, 2T+2, 2S+2, C]   (T x S tiles: T = ceil(OH / 2))
//   d_ab = xp[:, a::2, b::2, :] (T x S)     the tiles' element (a, b), a strided
//                                         dl.slice, for a, b in 0..3
//   V_ij = sum_ab BT[i,a] BT[j,b] d_ab    each a sum of four d's, the 16 V's
//                                         concatenated: [16, N*T*S, C]
//   U    = G g G^T                       [16, C, K], a constant computed here
//   M    = V @ U                         [16, N*T*S, K], one batched product
//   Y_uv = sum_ij AT[u,i] AT[v,j] M_ij + bias    (nine M's each)
//   y    = the Y's interleaved (concat, reshape, transpose [2,3,0,4,1,5]),
//          sliced to [N, OH, OW, K]
//
// with BT = [[1,0,-1,0], [0,1,1,0], [0,-1,1,0], [0,1,0,-1]],
// G = [[1,0,0], [1/2,1/2,1/2], [1/2,-1/2,1/2], [0,0,1]] and
// AT = [[1,1,1,0], [0,1,-1,-1]]: the transforms are additions (no rounding
// beyond float32 sums of four and nine terms; U is computed in double).
// The product does 16/36 of the direct convolution's multiply-adds; the
// transforms are passes over the input (16 reads of 4 elements per tile)
// and the product (nine reads per output), cheap next to the product while
// C and K are a few dozen or more.
//
// Measured on a Zen 3 (AVX2, 2 threads), medians, 3x3 C -> C with bias and
// ReLU against what dlc ran before (im2col GEMM, or the direct convolution
// where the filter fits L2): batch 1 28x28x128 2.76 -> 1.21 ms, 14x14x256
// 1.80 -> 1.04, 56x56x128 7.1 -> 4.0, 56x56x64 1.28 -> 1.21-1.29 (direct,
// 180 GFLOP/s); batch 8 14x14x256 12.3 -> 6.5, 7x7x512 11.2 -> 7.8; timm
// ResNet-50 batch 1 57.3 -> 50.0 ms, batch 8 487 -> 394 ms. The transforms
// pass over 4x the input and the output: few channels lose (112x112x32
// 1.36 -> 1.63 ms), hence min-channels. Few tiles lose too: the product's
// weights (16 C K floats, 1.8x the filter) stream from memory for N*T*S
// rows only (ResNet-50's 7x7 stage at batch 1: 16 tiles of 512 x 512, 1.85
// -> 2.2 ms), hence min-tiles.
//
// Non-finite inputs: an infinity in a tile reaches its outputs through
// sums of opposite signs, so they read NaN where the direct sum gives
// +-inf (as in every Winograd convolution: cuDNN's, oneDNN's, NNPACK's);
// finite inputs keep float32 accuracy.
//
// Cost: each distinct transformed shape adds about 1 s of code generation
// on a Zen 3 (16 + 4 transform nests and a batched micro-kernel: ResNet-50
// at batch 1, three distinct shapes, 6.2 -> 10.7 s from dl to machine
// code); `dlc.jit(..., disable="dl-winograd")` trades it back.
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
  if (conv->hasAttr(kStrategyAttrName))
    return "its strategy is recorded";
  if (conv.getLayout() != "NHWC")
    return "not NHWC";
  if (conv.getGroups() != 1)
    return "grouped";
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  auto result = cast<RankedTensorType>(conv.getResult().getType());
  if (!input.hasStaticShape() || !filter.hasStaticShape() ||
      !result.hasStaticShape())
    return "dynamic shape";
  if (!input.getElementType().isF32() || !filter.getElementType().isF32() ||
      !result.getElementType().isF32())
    return "not f32";
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
  Value d[4][4];
  for (int a = 0; a < 4; ++a)
    for (int e = 0; e < 4; ++e)
      d[a][e] = SliceOp::create(b, loc, x, ArrayRef<int64_t>{0, a, e, 0},
                                ArrayRef<int64_t>{n, th, tw, c},
                                ArrayRef<int64_t>{1, 2, 2, 1});
  SmallVector<Value> v;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      SmallVector<int> coefficients;
      SmallVector<Value> terms;
      for (int a = 0; a < 4; ++a)
        for (int e = 0; e < 4; ++e) {
          coefficients.push_back(BT[i][a] * BT[j][e]);
          terms.push_back(d[a][e]);
        }
      v.push_back(signedSum(b, loc, coefficients, terms));
    }
  Value vs = ConcatOp::create(b, loc, v, b.getI64IntegerAttr(0));
  vs = ReshapeOp::create(b, loc, vs, ArrayRef<int64_t>{16, rows, c});

  // U = G g G^T for every (c, k), from the HWIO filter, in double.
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
          u[((i * 4 + j) * c + ci) * k + ki] = static_cast<float>(
              left[i * 3] * G[j][0] + left[i * 3 + 1] * G[j][1] +
              left[i * 3 + 2] * G[j][2]);
    }
  auto uType = RankedTensorType::get({16, c, k}, f32);
  Value us = ConstantOp::create(b, loc,
                                DenseElementsAttr::get(uType, ArrayRef<float>(u)));
  Value m = MatmulOp::create(b, loc, vs, us);
  m = ReshapeOp::create(b, loc, m, ArrayRef<int64_t>{16 * n, th, tw, k});
  Value ms[16];
  for (int q = 0; q < 16; ++q)
    ms[q] = SliceOp::create(b, loc, m, ArrayRef<int64_t>{q * n, 0, 0, 0},
                            ArrayRef<int64_t>{n, th, tw, k},
                            ArrayRef<int64_t>{1, 1, 1, 1});
  SmallVector<Value> ys;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q) {
      SmallVector<int> coefficients;
      SmallVector<Value> terms;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          coefficients.push_back(AT[p][i] * AT[q][j]);
          terms.push_back(ms[i * 4 + j]);
        }
      Value y = signedSum(b, loc, coefficients, terms);
      if (Value bias = conv.getBias())
        y = AddOp::create(b, loc, y, bias);
      ys.push_back(y);
    }
  Value y = ConcatOp::create(b, loc, ys, b.getI64IntegerAttr(0));
  y = ReshapeOp::create(b, loc, y, ArrayRef<int64_t>{2, 2, n, th, tw, k});
  y = TransposeOp::create(b, loc, y,
                          b.getDenseI64ArrayAttr({2, 3, 0, 4, 1, 5}));
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
