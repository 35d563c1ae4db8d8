//===- Strategy.cpp - the code-generation strategy of each dl op ----------===//
//
// One policy, from the target (#dl.target):
//
//   dl.matmul   register_tiled_gemm   a static number of columns (the
//                                     micro-kernel vectorizes them): the
//                                     packed, cache-blocked, register-tiled
//                                     micro-kernel, rows x vectors from the
//                                     target's registers (chooseRegisterTile):
//                                     any tile where the result is as wide
//                                     as that tile (B in panels of its
//                                     width: dl-pack-weights' products),
//                                     else one whose rows of B span whole
//                                     cache lines (6 x 2 on AVX2, not
//                                     4 x 3: see MicroKernel.cpp)
//               loops                 otherwise
//   dl.conv2d   direct                NHWC, f32, groups = 1, static spatial
//                                     sizes, a filter the target's L2 keeps
//                                     (getL2ResidentBytes): the micro-kernel
//                                     on the convolution's own nest (rows
//                                     along OW, vectors along F)
//               im2col_gemm           otherwise for groups = 1, f32, static
//                                     spatial sizes: patches gathered into a
//                                     matrix, one GEMM (f16 and bf16 too
//                                     where max-direct-filter-bytes = -1, the
//                                     GPU pipeline's setting)
//                                     (convolutions read their filter in its
//                                     own rows: tiles of whole cache lines)
//               direct                depthwise / grouped / f16 / bf16 /
//                                     dynamic sizes: linalg's convolution
//                                     ops (register-tiled where the nest
//                                     allows; a depthwise one in NHWC with
//                                     chooseDepthwiseTile's tile)
//   reductions, softmax, norms        vectorized_reduction
//
// Direct against im2col, NHWC at batch 1, ms (Zen 4, 2 threads, L2 1-2
// MiB/core): 64x56x56 1.20 vs 1.89, 128x28x28 1.23-1.47 vs 1.46, 256x14x14
// 2.23 vs 1.59, 512x7x7 3.4-3.8 vs 2.3; the 7x7/2 stem 1.86 vs 3.13; batch
// 8, 64x56x56 11.5 vs 35.3. A direct convolution reads its filter again for
// every output row: cheap while the filter stays in L2, costlier than the
// patch matrix once it does not.
//
//===----------------------------------------------------------------------===//

#include "dl/Transforms/Strategy.h"

#include "dl/IR/DLOps.h"

using namespace mlir;
using namespace mlir::dl;

namespace {

/// `kind` with the target's register tile (of whole cache lines where B
/// is read in rows of its own layout: `wholeLines`).
StrategyAttr tiled(MLIRContext *ctx, StrategyKind kind, const TargetInfo &target,
                   StringRef layout = "", bool wholeLines = true) {
  RegisterTileShape tile = chooseRegisterTile(target, wholeLines);
  return StrategyAttr::get(ctx, kind, tile.rows, tile.vectors,
                           /*columnBlock=*/0, /*reductionBlock=*/0, layout);
}

std::string tileText(StrategyAttr strategy, const TargetInfo &target) {
  return std::to_string(strategy.getRows()) + " x " +
         std::to_string(strategy.getVectors()) + " vectors of " +
         std::to_string(target.getVectorBits()) + " bits (" +
         std::to_string(target.getVectorRegisters()) + " vector registers)";
}

} // namespace

std::optional<StrategyChoice>
mlir::dl::chooseStrategy(Operation *op, const TargetInfo &target,
                         const StrategyOptions &options) {
  MLIRContext *ctx = op->getContext();
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    auto result = cast<ShapedType>(matmul.getResult().getType());
    if (result.getRank() == 0 || result.isDynamicDim(result.getRank() - 1))
      return StrategyChoice{
          StrategyAttr::get(ctx, StrategyKind::Loops, 0, 0, 0, 0, ""),
          "no static column count to vectorize: plain loops"};
    // B in panels as wide as the tile (dl-pack-weights' [J, K, p]): each
    // reduction step reads one contiguous segment, any tile will do; B in
    // rows of its own: a tile of whole cache lines.
    RegisterTileShape free = chooseRegisterTile(target);
    Type element = result.getElementType();
    bool panels = element.isIntOrFloat() &&
                  result.getDimSize(result.getRank() - 1) ==
                      free.vectors * target.getLanes(element);
    StrategyAttr strategy = tiled(ctx, StrategyKind::RegisterTiledGemm, target,
                                  "", /*wholeLines=*/!panels);
    RegisterTileShape lined = chooseRegisterTile(target, /*wholeLines=*/true);
    std::string rows =
        panels ? " (B in panels of the tile's width)"
        : (lined.rows != free.rows || lined.vectors != free.vectors)
            ? " (rows of B in whole " +
                  std::to_string(target.getCacheLineBytes()) + "-byte lines)"
            : "";
    return StrategyChoice{strategy, "cache-blocked, packed micro-kernel of " +
                                        tileText(strategy, target) + rows};
  }
  if (auto conv = dyn_cast<Conv2dOp>(op)) {
    auto input = cast<ShapedType>(conv.getInput().getType());
    StringRef layout = conv.getLayout();
    // Grouped, depthwise and 16-bit convolutions keep the tile of the
    // plain model (not measured with tiles of whole lines).
    auto direct = [&](const std::string &why) {
      StrategyAttr strategy = tiled(ctx, StrategyKind::Direct, target, layout,
                                    /*wholeLines=*/false);
      return StrategyChoice{strategy, why};
    };
    // Depthwise in NHWC (one filter per channel, multiplier 1): the input
    // is a vector along the output channels like the filter, no operand
    // is broadcast; the tile of chooseDepthwiseTile.
    auto result = cast<ShapedType>(conv.getResult().getType());
    int64_t groups = conv.getGroups();
    if (groups != 1 && layout == "NHWC" && input.getRank() == 4 &&
        result.getRank() == 4 && input.getDimSize(3) == groups &&
        result.getDimSize(3) == groups) {
      RegisterTileShape tile = chooseDepthwiseTile(target);
      StrategyAttr strategy =
          StrategyAttr::get(ctx, StrategyKind::Direct, tile.rows,
                            tile.vectors, 0, 0, layout);
      return StrategyChoice{
          strategy, "depthwise: " + tileText(strategy, target) +
                        ", both operands vectors along the channels (the "
                        "fewest accumulators that hide the FMA latency)"};
    }
    if (groups != 1)
      return direct("grouped, or depthwise in NCHW: no GEMM to share");
    // f16/bf16: linalg's convolution accumulating in f32, unless every
    // convolution is to be a GEMM (the GPU pipeline: its GEMM kernels, on
    // tensor cores for 16-bit inputs).
    if (!input.getElementType().isF32() && options.maxDirectFilterBytes >= 0)
      return direct("not f32: linalg's convolution accumulating in f32");
    auto filter = cast<ShapedType>(conv.getFilter().getType());
    int64_t filterBytes =
        filter.hasStaticShape() ? filter.getNumElements() * 4 : -1;
    int64_t limit = options.maxDirectFilterBytes != 0
                        ? options.maxDirectFilterBytes
                        : target.getL2ResidentBytes();
    if (layout == "NHWC" && filterBytes >= 0 && filterBytes <= limit) {
      StrategyAttr strategy = tiled(ctx, StrategyKind::Direct, target, layout);
      return StrategyChoice{
          strategy,
          "NHWC, f32, a filter of " + std::to_string(filterBytes / 1024) +
              " KiB that stays in cache (at most " +
              std::to_string(limit / 1024) +
              (options.maxDirectFilterBytes != 0 ? " KiB"
                                                 : " KiB, half of L2") +
              "): micro-kernel of " + tileText(strategy, target) +
              " on the convolution's nest, no patch matrix"};
    }
    std::string type;
    llvm::raw_string_ostream(type) << input.getElementType();
    StrategyAttr strategy = tiled(ctx, StrategyKind::Im2colGemm, target, layout);
    return StrategyChoice{
        strategy, "groups = 1, " + type +
                      std::string(layout == "NHWC"
                                      ? ", a filter larger than the direct "
                                        "convolution's limit"
                                      : "") +
                      ": patches as a matrix, one GEMM with a micro-kernel of " +
                      tileText(strategy, target)};
  }
  if (isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp, ReduceMeanOp, SoftmaxOp,
          LogSoftmaxOp, LayerNormOp, ArgmaxOp, ArgminOp>(op))
    return StrategyChoice{
        StrategyAttr::get(ctx, StrategyKind::VectorizedReduction, 0, 0, 0, 0,
                          ""),
        "reduced loops innermost, vectorized where contiguous"};
  return std::nullopt;
}

std::optional<StrategyChoice>
mlir::dl::strategyOf(Operation *op, const TargetInfo &target,
                     const StrategyOptions &options) {
  if (auto given = op->getAttrOfType<StrategyAttr>(kStrategyAttrName)) {
    // dlc.tune's records say what they measured (python/dlc/tune/records.py).
    if (auto tuned = op->getAttrOfType<StringAttr>(kTunedAttrName))
      return StrategyChoice{given, "tuned record: " + tuned.getValue().str()};
    return StrategyChoice{given, "given in the IR"};
  }
  std::optional<StrategyChoice> choice = chooseStrategy(op, target, options);
  if (choice)
    choice->reason = "heuristic: " + choice->reason;
  return choice;
}

std::string mlir::dl::denseConvolutionRefusal(Conv2dOp conv) {
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
  return "";
}
