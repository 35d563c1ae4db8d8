//===- PackWeights.cpp - dl-pack-weights ----------------------------------===//
//
// Matrix-vector-like products with a constant weight, packed at compile
// time. `x @ W` with W a constant [K, N] and few rows in x (a decode step
// of a language model: one token, its lm-head W is 768 x 50257) becomes a
// batched product over column panels of W laid out contiguously:
//
//   Wp = W padded to J*p columns, as [J, K, p] (panel j: columns j*p ..
//        j*p+p of every row, one block of K*p elements), p = the register
//        tile's columns on the target (vectors x lanes: 24 floats on AVX2,
//        48 on AVX-512)
//   y  = reshape(x, [1, R, K]) @ Wp          : [J, R, p]
//        transpose [1, 0, 2] (when R > 1)    : [R, J, p]
//        reshape [R, J*p], slice [R, N], reshape to x @ W's shape
//
// so that the micro-kernel walks each panel's rows one after the other
// (K*p*4 contiguous bytes) instead of reading p columns out of every row of
// W, N*4 bytes apart: a page and a TLB entry per row for a wide W. The
// register-tiled GEMM otherwise packs B at every call, as much work as the
// product when R is small. Measured on a Zen 3 (AVX2, 2 threads), medians:
// [1, 768] @ [768, 50257] 6.6 -> 3.9 ms (numpy/OpenBLAS 3.9), [4, 768] @
// [768, 50257] 15.4 -> 4.7 ms, [1, 768] @ [768, 3072] 0.29 -> 0.16 ms,
// [8, 768] @ [768, 3072] 0.42 -> 0.26 ms, [32, 768] @ [768, 3072] 1.09 ->
// 0.84 ms; the gain fades by R = 128 (3.9 -> 3.6 ms) with W in cache. In a
// model W comes from memory (every layer's weights pass through the cache
// once per call), and the panels, read in one stream, win far beyond: on
// Zen 5 (2 threads) [49, 768] @ [768, 3072] with four such layers' weights
// in turn 1.32 -> 0.56 ms per product; timm ConvNeXt-T 34.8 -> 24.0 ms,
// DeiT-S 27.9 -> 21.9, BERT-base 61.3 -> 50.3, GPT-2 prefill 93.0 -> 72.5
// (128-197 rows) with max-rows 256 instead of 32; at 1024 ResNet-50's
// 784-row 1x1 convolutions were slower (20.6 -> 25.4 ms), hence 256.
//
// (dl-linalg-fuse later has the product store its tiles as [R, J, p]
// directly, and its bias and activation run as the GEMM's epilogue: no
// transpose runs.)
//
// Convolutions too: an NHWC `dl.conv2d` with a constant HWIO filter, no
// groups and at most conv-max-rows output pixels (N * OH * OW: ResNet-50's
// 7x7 and 14x14 stages at batch 1, its 7x7 stage at batch 8) becomes
// `im2col(x) @ W` -- the padded input's KH*KW strided windows concatenated
// along the channels (dl.pad, dl.slice, dl.concat; a 1x1 convolution of
// stride 1 reads x as it lies), W the filter as [KH*KW*C, F] -- plus its
// bias, and W is packed as above. max-rows, conv-max-rows are measured
// defaults (Zen 5 and Zen 3), not derived from the target: knobs for the
// tuner (issue 35).
// The convolution's own im2col GEMM blocks K and packs B panels at every
// call: on Zen 5 (2 threads) 512x512x3x3 at 7x7 went 639 -> 525 us
// (onnxruntime 487), 256x256x3x3 at 14x14 619 -> 521 us, ResNet-50 b1
// 20.8 -> 19.2 ms; 392 pixels (7x7 at batch 8): 512x512x3x3 5.04 -> 4.06
// ms, 2048x512x1x1 2.29 -> 1.78 ms, hence conv-max-rows 512. At 784 the
// convolution's blocked GEMM wins or ties (128x128x3x3 at 28x28 529 vs 573
// us, 1024x256x1x1 at 14x14 batch 4 1.01 vs 1.16 ms; 256x256x3x3 batch 4
// 2.19 vs 2.07).
//
// Grouped NHWC convolutions whose groups have half a vector of output
// channels (4 on AVX2, 8 on AVX-512; ResNeXt-50 32x4d's first stage, 32
// groups of 4) get their groups merged in pairs: one group of twice the
// channels, its constant filter block-diagonal (zeros where a channel of one
// half would read the other half's inputs). Twice the multiply-adds, but
// whole vectors: the register tile vectorizes output channels a vector at a
// time, and groups narrower than one ran as scalar loops. 56 x 56 x 128 in
// 32 groups (Zen 3, 2 threads): 1.44 -> 0.70 ms at batch 1, 18.5 -> 6.5 ms at
// batch 8 (onnxruntime: 1.2 ms at batch 1). Narrower groups (a quarter of a
// vector or less) would waste more than they gain and are left alone, as
// depthwise convolutions (one input channel per group: their own kernel).
//
// W may also be the transpose of a constant [N, K] (a linear layer's
// weight; GPT-2's embedding tied to its output layer, 154 MB, which the
// folders leave as a transpose run at every call): packed from it directly.
// A matmul left unpacked (more rows, a dynamic batch) whose W is such a
// transpose gets W computed here instead, as a constant: the folders stop
// at 2^24 elements, where a transpose costs as much to fold as to run once.
//
// Left alone: a weight that is not a constant of rank 2 or its transpose,
// element types other than f32 in x, W or the result, a dynamic or large
// row count (more than max-rows: x's dimensions but the last multiplied), a
// W of fewer than two panels, and a matmul whose strategy is already
// recorded (forced in the IR). The packed constant is a new constant; W
// (and its transpose) stay while they have other users. Upstream MLIR's linalg.pack/mmt4d pack at run time, on tensors
// with no weight known; IREE's data tiling does this with its encodings,
// not in upstream: hence ours.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"
#include "dl/Target/Target.h"
#include "dl/Transforms/Passes.h"
#include "dl/Transforms/Strategy.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLPACKWEIGHTS
#include "dl/Transforms/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

/// The f32 values of a dense, non-splat constant, or an empty range.
ArrayRef<float> constantValues(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return {};
  auto dense = dyn_cast<DenseIntOrFPElementsAttr>(constant.getValue());
  if (!dense || dense.isSplat() || !dense.getElementType().isF32())
    return {};
  ArrayRef<char> raw = dense.getRawData();
  if (raw.size() != static_cast<size_t>(dense.getNumElements()) * sizeof(float))
    return {};
  return ArrayRef<float>(reinterpret_cast<const float *>(raw.data()),
                         dense.getNumElements());
}

/// W [K, N] as a constant's values: W itself, or the transpose of a
/// constant [N, K] (a linear layer's weight, or an embedding tied to the
/// output layer: the folders leave a large transpose of a constant alone,
/// and it would run at every call).
struct Weight {
  ArrayRef<float> values;
  bool transposed = false;
  /// The constant's attribute: the same weight wherever it is used (MLIR
  /// uniques attributes), the key of the WeightCache.
  Attribute source;
};

Weight weightOf(Value rhs) {
  if (ArrayRef<float> values = constantValues(rhs); !values.empty())
    return {values, false, rhs.getDefiningOp<ConstantOp>().getValue()};
  auto transpose = rhs.getDefiningOp<TransposeOp>();
  if (transpose && transpose.getPermutation() == ArrayRef<int64_t>{1, 0})
    if (ArrayRef<float> values = constantValues(transpose.getInput());
        !values.empty())
      return {values, true,
              transpose.getInput().getDefiningOp<ConstantOp>().getValue()};
  return {};
}

/// The constants this pass made, by the weight they were made from: a
/// weight that several products share (ALBERT runs its one layer 12 times:
/// 72 products over 6 weights of 64-256 MB) is packed or laid out once, and
/// the products use one constant. Packing each use again cost ALBERT-xxlarge
/// 16 s of its 37 s compile (Zen 3): every copy is built, hashed and
/// compared whole when MLIR uniques it.
class WeightCache {
public:
  enum Kind { Packed, LaidOut };

  /// The constant for (`weight`, `kind`, `panel`): one made before for a
  /// user that `user` comes after in the same block, or a new one made by
  /// `make` before `at`.
  Value get(Operation *user, Operation *at, const Weight &weight, Kind kind,
            int64_t panel, llvm::function_ref<DenseElementsAttr()> make) {
    // A square weight may be used as it is and transposed: two constants.
    auto key = std::make_tuple(weight.source.getAsOpaquePointer(),
                               static_cast<int>(kind),
                               static_cast<int>(weight.transposed), panel);
    auto found = made.find(key);
    if (found != made.end()) {
      Operation *constant = found->second.getDefiningOp();
      if (constant->getBlock() == user->getBlock() &&
          constant->isBeforeInBlock(user))
        return found->second;
    }
    OpBuilder b(at);
    Value constant = ConstantOp::create(b, at->getLoc(), make());
    made[key] = constant;
    return constant;
  }

private:
  llvm::DenseMap<std::tuple<const void *, int, int, int64_t>, Value> made;
};

/// Why `matmul` is left alone, or "" when it is packed with panels of
/// `panel` columns and at most `maxRows` rows.
std::string refusal(MatmulOp matmul, int64_t panel, int64_t maxRows) {
  if (matmul->hasAttr(kStrategyAttrName))
    return "its strategy is recorded";
  auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
  auto result = cast<RankedTensorType>(matmul.getResult().getType());
  if (rhs.getRank() != 2 || !rhs.hasStaticShape())
    return "the weight is not a static matrix";
  if (!lhs.getElementType().isF32() || !rhs.getElementType().isF32() ||
      !result.getElementType().isF32())
    return "not f32";
  if (!lhs.hasStaticShape())
    return "dynamic rows";
  int64_t k = lhs.getShape().back();
  if (k == 0 || lhs.getNumElements() == 0)
    return "no elements";
  if (lhs.getNumElements() / k > maxRows)
    return "too many rows";
  if (rhs.getDimSize(1) / 2 < panel)
    return "fewer than two panels";
  if (weightOf(matmul.getRhs()).values.empty())
    return "the weight is not a dense constant or its transpose";
  return "";
}

void pack(MatmulOp matmul, int64_t panel, WeightCache &cache) {
  OpBuilder b(matmul);
  Location loc = matmul.getLoc();
  auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
  int64_t k = rhs.getDimSize(0), n = rhs.getDimSize(1);
  int64_t panels = (n + panel - 1) / panel;
  int64_t rows = lhs.getNumElements() / k;

  Weight weight = weightOf(matmul.getRhs());
  Value panelsValue = cache.get(
      matmul, matmul, weight, WeightCache::Packed, panel, [&] {
        std::vector<float> packed(static_cast<size_t>(panels * k * panel),
                                  0.0f);
        for (int64_t j = 0; j < panels; ++j) {
          int64_t width = std::min(panel, n - j * panel);
          for (int64_t row = 0; row < k; ++row) {
            float *to = packed.data() + (j * k + row) * panel;
            if (!weight.transposed) {
              std::copy_n(weight.values.begin() + row * n + j * panel, width,
                          to);
              continue;
            }
            // W[row][j*panel + q] = Wt[j*panel + q][row]
            for (int64_t q = 0; q < width; ++q)
              to[q] = weight.values[(j * panel + q) * k + row];
          }
        }
        auto packedType =
            RankedTensorType::get({panels, k, panel}, b.getF32Type());
        return DenseElementsAttr::get(packedType, ArrayRef<float>(packed));
      });

  Value x = ReshapeOp::create(b, loc, matmul.getLhs(),
                              ArrayRef<int64_t>{1, rows, k});
  Value y = MatmulOp::create(b, loc, x, panelsValue);
  if (rows > 1)
    y = TransposeOp::create(b, loc, y, ArrayRef<int64_t>{1, 0, 2});
  y = ReshapeOp::create(b, loc, y, ArrayRef<int64_t>{rows, panels * panel});
  if (panels * panel != n)
    y = SliceOp::create(b, loc, y, ArrayRef<int64_t>{0, 0},
                        ArrayRef<int64_t>{rows, n}, ArrayRef<int64_t>{1, 1});
  auto result = cast<RankedTensorType>(matmul.getResult().getType());
  y = ReshapeOp::create(b, loc, y, result.getShape());
  Value rhsValue = matmul.getRhs();
  matmul.getResult().replaceAllUsesWith(y);
  matmul->erase();
  // The weight's transpose (154 MB for GPT-2's tied embedding) and the
  // weight itself go where nothing else reads them.
  if (auto transpose = rhsValue.getDefiningOp<TransposeOp>();
      transpose && transpose->use_empty()) {
    Value input = transpose.getInput();
    transpose->erase();
    rhsValue = input;
  }
  if (Operation *constant = rhsValue.getDefiningOp<ConstantOp>();
      constant && constant->use_empty())
    constant->erase();
}

/// Why the NHWC convolution `conv` is left alone, or "" when it becomes an
/// im2col product with a packed filter (packConvolution).
std::string convolutionRefusal(Conv2dOp conv, int64_t panel, int64_t maxRows) {
  if (std::string why = denseConvolutionRefusal(conv); !why.empty())
    return why;
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  auto result = cast<RankedTensorType>(conv.getResult().getType());
  if (input.getNumElements() == 0 || result.getNumElements() == 0 ||
      filter.getNumElements() == 0)
    return "no elements";
  if (result.getNumElements() / result.getShape().back() > maxRows)
    return "too many rows";
  if (filter.getDimSize(3) / 2 < panel)
    return "fewer than two panels";
  if (constantValues(conv.getFilter()).empty())
    return "the filter is not a dense constant";
  return "";
}

/// An NHWC convolution with a constant HWIO filter and few output pixels as
/// the product it is, `im2col(x) @ W` with W = the filter as [KH*KW*C, F],
/// so that W is packed like a linear layer's weight: the convolutions' own
/// im2col GEMM packs its B panels at every call (as much work as the
/// product at ResNet-50's 7x7 and 14x14 stages). im2col is the padded
/// input's KH*KW strided windows concatenated along the channels, in the
/// filter's (kh, kw, c) order; a 1x1 convolution of stride 1 reads x as it
/// lies; windows that tile the image (stride = kernel) are its blocks,
/// transposed.
void packConvolution(Conv2dOp conv, int64_t panel, WeightCache &cache) {
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  auto result = cast<RankedTensorType>(conv.getResult().getType());
  int64_t n = input.getDimSize(0), c = input.getDimSize(3);
  int64_t kh = filter.getDimSize(0), kw = filter.getDimSize(1);
  int64_t f = filter.getDimSize(3);
  int64_t oh = result.getDimSize(1), ow = result.getDimSize(2);
  ArrayRef<int64_t> pad = conv.getPadding(), stride = conv.getStrides(),
                    dilation = conv.getDilations();

  Value x = conv.getInput();
  if (llvm::any_of(pad, [](int64_t p) { return p != 0; }))
    x = PadOp::create(b, loc, x, b.getDenseI64ArrayAttr({0, pad[0], pad[2], 0}),
                      b.getDenseI64ArrayAttr({0, pad[1], pad[3], 0}),
                      b.getF64FloatAttr(0.0));
  auto padded = cast<RankedTensorType>(x.getType());
  int64_t rows = n * oh * ow, k = kh * kw * c;
  Value lhs;
  // Windows that tile the image (a patch embedding: ViT's 16x16 of stride
  // 16) are its blocks: [N, OH, KH, OW, KW, C] -> [N, OH, OW, KH, KW, C], one
  // transpose instead of KH*KW slices and a concatenation of as many
  // operands (256 for ViT, which cost one-shot bufferization 5 s).
  bool tiles = kh * kw > 1 && stride[0] == kh && stride[1] == kw &&
               (dilation[0] == 1 && dilation[1] == 1);
  if (tiles) {
    SmallVector<int64_t> covered{n, oh * kh, ow * kw, c};
    if (ArrayRef<int64_t>(covered) != padded.getShape())
      x = SliceOp::create(b, loc, x, SmallVector<int64_t>{0, 0, 0, 0}, covered,
                          SmallVector<int64_t>{1, 1, 1, 1});
    Value blocks =
        ReshapeOp::create(b, loc, x, ArrayRef<int64_t>{n, oh, kh, ow, kw, c});
    Value patches = TransposeOp::create(
        b, loc, blocks, b.getDenseI64ArrayAttr({0, 1, 3, 2, 4, 5}));
    lhs = ReshapeOp::create(b, loc, patches, ArrayRef<int64_t>{rows, k});
  }
  SmallVector<Value> windows;
  for (int64_t i = 0; i < kh && !tiles; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      SmallVector<int64_t> starts{0, i * dilation[0], j * dilation[1], 0};
      SmallVector<int64_t> sizes{n, oh, ow, c};
      SmallVector<int64_t> steps{1, stride[0], stride[1], 1};
      if (llvm::all_of(starts, [](int64_t v) { return v == 0; }) &&
          llvm::all_of(steps, [](int64_t v) { return v == 1; }) &&
          ArrayRef<int64_t>(sizes) == padded.getShape()) {
        windows.push_back(x);
        continue;
      }
      windows.push_back(SliceOp::create(b, loc, x, starts, sizes, steps));
    }
  if (!tiles) {
    Value columns =
        windows.size() == 1
            ? windows.front()
            : ConcatOp::create(b, loc, windows, b.getI64IntegerAttr(3))
                  .getResult();
    lhs = ReshapeOp::create(b, loc, columns, ArrayRef<int64_t>{rows, k});
  }
  auto filterConstant = conv.getFilter().getDefiningOp<ConstantOp>();
  auto matrixType = RankedTensorType::get({k, f}, b.getF32Type());
  Value weight = ConstantOp::create(
      b, loc, cast<DenseElementsAttr>(filterConstant.getValue()).reshape(matrixType));
  auto matmul = MatmulOp::create(b, loc, lhs, weight);
  Value y = ReshapeOp::create(b, loc, matmul.getResult(), result.getShape());
  if (Value bias = conv.getBias())
    y = AddOp::create(b, loc, y, bias);
  conv.getResult().replaceAllUsesWith(y);
  conv->erase();
  if (filterConstant->use_empty())
    filterConstant->erase();
  pack(matmul, panel, cache);
}

/// Why the grouped convolution `conv` keeps its groups, or "" when pairs of
/// them become one group (mergeGroupPairs): NHWC, f32, a constant filter,
/// an even number of groups of at least two input channels (one is a
/// depthwise convolution) and half a vector (`lanes`) of output channels.
std::string groupMergeRefusal(Conv2dOp conv, int64_t lanes) {
  if (conv->hasAttr(kStrategyAttrName))
    return "its strategy is recorded";
  int64_t groups = static_cast<int64_t>(conv.getGroups());
  if (groups <= 1)
    return "not grouped";
  if (conv.getLayout() != "NHWC")
    return "not NHWC";
  auto filter = cast<RankedTensorType>(conv.getFilter().getType());
  auto result = cast<RankedTensorType>(conv.getResult().getType());
  if (!filter.hasStaticShape() || !result.hasStaticShape() ||
      !cast<RankedTensorType>(conv.getInput().getType()).hasStaticShape())
    return "dynamic shape";
  if (!filter.getElementType().isF32() || !result.getElementType().isF32())
    return "not f32";
  int64_t inputs = filter.getDimSize(2), outputs = filter.getDimSize(3) / groups;
  if (inputs < 2)
    return "depthwise";
  if (2 * outputs != lanes)
    return "groups not of half a vector of output channels";
  if (groups % 2 != 0)
    return "an odd number of groups";
  auto constant = conv.getFilter().getDefiningOp<ConstantOp>();
  if (!constant || !isa<DenseElementsAttr>(constant.getValue()))
    return "the filter is not a dense constant";
  return "";
}

/// `conv` with pairs of its groups as one: groups / 2, and the filter
/// [KH, KW, 2 * CI, F] block-diagonal in each merged group (output channel
/// f of the pair's half h reads its own CI inputs, h * CI .. h * CI + CI,
/// and zeros at the other half's).
void mergeGroupPairs(Conv2dOp conv) {
  auto filterType = cast<RankedTensorType>(conv.getFilter().getType());
  int64_t kh = filterType.getDimSize(0), kw = filterType.getDimSize(1);
  int64_t inputs = filterType.getDimSize(2), f = filterType.getDimSize(3);
  int64_t groups = static_cast<int64_t>(conv.getGroups());
  int64_t outputs = f / groups;
  // A splat too: every value, as the filter's attribute lists them.
  SmallVector<float> w = llvm::to_vector(
      cast<DenseElementsAttr>(
          conv.getFilter().getDefiningOp<ConstantOp>().getValue())
          .getValues<float>());
  std::vector<float> merged(static_cast<size_t>(kh * kw * 2 * inputs * f), 0.0f);
  for (int64_t window = 0; window < kh * kw; ++window)
    for (int64_t c = 0; c < inputs; ++c)
      for (int64_t o = 0; o < f; ++o) {
        int64_t half = (o / outputs) % 2;
        merged[(window * 2 * inputs + half * inputs + c) * f + o] =
            w[(window * inputs + c) * f + o];
      }
  OpBuilder b(conv);
  auto mergedType =
      RankedTensorType::get({kh, kw, 2 * inputs, f}, filterType.getElementType());
  Value filter = ConstantOp::create(
      b, conv.getLoc(), DenseElementsAttr::get(mergedType, ArrayRef<float>(merged)));
  Operation *old = conv.getFilter().getDefiningOp();
  conv.getFilterMutable().assign(filter);
  conv.setGroups(static_cast<uint64_t>(groups / 2));
  if (old->use_empty())
    old->erase();
}

/// For a matmul left unpacked whose weight is the transpose of a constant:
/// the transposed constant, computed here (the folders stop at 2^24
/// elements, and the transpose would run at every call). False if there is
/// none.
bool layOutTransposedWeight(MatmulOp matmul, WeightCache &cache) {
  if (matmul->hasAttr(kStrategyAttrName))
    return false;
  Weight weight = weightOf(matmul.getRhs());
  if (!weight.transposed)
    return false;
  auto transpose = matmul.getRhs().getDefiningOp<TransposeOp>();
  auto type = cast<RankedTensorType>(transpose.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  Value constant = cache.get(
      matmul, transpose, weight, WeightCache::LaidOut, 0, [&] {
        std::vector<float> values(static_cast<size_t>(k * n));
        // In 64 x 64 blocks: both sides stay in cache (element by element,
        // the reads strode k floats apart: dl-pack-weights on GPT-2, whose
        // 768 x 50257 head this lays out, 0.33 -> 0.17 s on a Zen 5).
        constexpr int64_t kBlock = 64;
        for (int64_t rowBlock = 0; rowBlock < k; rowBlock += kBlock)
          for (int64_t columnBlock = 0; columnBlock < n; columnBlock += kBlock)
            for (int64_t row = rowBlock; row < std::min(k, rowBlock + kBlock);
                 ++row)
              for (int64_t column = columnBlock;
                   column < std::min(n, columnBlock + kBlock); ++column)
                values[row * n + column] = weight.values[column * k + row];
        return DenseElementsAttr::get(type, ArrayRef<float>(values));
      });
  matmul.getRhsMutable().set(constant);
  if (transpose->use_empty()) {
    Operation *input = transpose.getInput().getDefiningOp();
    transpose->erase();
    if (input->use_empty())
      input->erase();
  }
  return true;
}

struct DLPackWeightsPass
    : public dl::impl::DLPackWeightsBase<DLPackWeightsPass> {
  using DLPackWeightsBase::DLPackWeightsBase;

  void runOnOperation() override {
    if (maxRows < 1) {
      getOperation()->emitError("dl-pack-weights: max-rows must be at least "
                                "1, but got ")
          << static_cast<int64_t>(maxRows);
      return signalPassFailure();
    }
    if (convMaxRows < 1) {
      getOperation()->emitError("dl-pack-weights: conv-max-rows must be at "
                                "least 1, but got ")
          << static_cast<int64_t>(convMaxRows);
      return signalPassFailure();
    }
    if (panel < 0) {
      getOperation()->emitError("dl-pack-weights: panel must be 0 (the "
                                "target's) or positive, but got ")
          << static_cast<int64_t>(panel);
      return signalPassFailure();
    }
    TargetInfo target = TargetInfo::of(getOperation());
    Type f32 = Float32Type::get(&getContext());
    int64_t columns = panel > 0 ? static_cast<int64_t>(panel)
                                : chooseRegisterTile(target).vectors *
                                      target.getLanes(f32);
    SmallVector<MatmulOp> matmuls, unpacked;
    getOperation()->walk([&](MatmulOp matmul) {
      std::string why = refusal(matmul, columns, maxRows);
      if (why.empty())
        matmuls.push_back(matmul);
      else {
        unpacked.push_back(matmul);
        if (report)
          matmul->emitRemark("dl-pack-weights: left alone: ") << why;
      }
    });
    SmallVector<Conv2dOp> grouped;
    if (this->convolutions)
      getOperation()->walk([&](Conv2dOp conv) {
        std::string why = groupMergeRefusal(conv, target.getLanes(f32));
        if (why.empty())
          grouped.push_back(conv);
        else if (report && conv.getGroups() > 1)
          conv->emitRemark("dl-pack-weights: groups left as they are: ") << why;
      });
    for (Conv2dOp conv : grouped) {
      if (report)
        conv->emitRemark("dl-pack-weights: groups merged in pairs (")
            << conv.getGroups() << " -> " << conv.getGroups() / 2
            << "), the filter block-diagonal";
      mergeGroupPairs(conv);
    }
    SmallVector<Conv2dOp> convolutions;
    if (this->convolutions)
      getOperation()->walk([&](Conv2dOp conv) {
        std::string why = convolutionRefusal(conv, columns, convMaxRows);
        if (why.empty())
          convolutions.push_back(conv);
        else if (report)
          conv->emitRemark("dl-pack-weights: convolution left alone: ") << why;
      });
    WeightCache cache;
    for (MatmulOp matmul : unpacked)
      if (layOutTransposedWeight(matmul, cache) && report)
        matmul->emitRemark("dl-pack-weights: the transpose of its constant "
                           "weight computed at compile time");
    for (MatmulOp matmul : matmuls) {
      if (report)
        matmul->emitRemark("dl-pack-weights: weight packed in panels of ")
            << columns << " columns";
      pack(matmul, columns, cache);
    }
    for (Conv2dOp conv : convolutions) {
      if (report)
        conv->emitRemark("dl-pack-weights: convolution as im2col @ its filter "
                         "packed in panels of ")
            << columns << " columns";
      packConvolution(conv, columns, cache);
    }
  }
};

} // namespace
