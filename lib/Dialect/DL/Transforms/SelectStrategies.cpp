//===- SelectStrategies.cpp - dl-select-strategies, dl-explain ------------===//
//
// The code-generation strategy of each compute-heavy dl op, chosen once on
// the graph and recorded as a `dl.strategy` string attribute that the
// lowering follows (and anyone can read in the IR, or set by hand):
//
//   dl.matmul        "register-tiled-gemm"  float operands, static inner
//                                            dimensions: the affine nest
//                                            becomes the packed, register-
//                                            tiled micro-kernel
//                    "loops"                otherwise (integers, dynamic K/N)
//   dl.conv2d        "direct"               NHWC, f32, groups = 1, static
//                                            spatial sizes, a filter of at
//                                            most half of L2: the register-
//                                            tiled micro-kernel on the
//                                            convolution's own nest (rows
//                                            along OW, vectors along F)
//                    "im2col-gemm"          otherwise for groups = 1, f32,
//                                            static spatial sizes: patches
//                                            gathered into a matrix, one GEMM
//                                            (f16 and bf16 too where
//                                            max-direct-filter-bytes = -1,
//                                            the GPU pipeline's setting)
//                    "direct"               depthwise / grouped / f16 /
//                                            bf16 / dynamic sizes: linalg's
//                                            convolution ops, as loops
//
// Direct against im2col, NHWC at batch 1, ms (this machine, 2 threads,
// L2 2 MiB/core): 64x56x56 1.20 vs 1.89, 128x28x28 1.23-1.47 vs 1.46,
// 256x14x14 2.23 vs 1.59, 512x7x7 3.4-3.8 vs 2.3; the 7x7/2 stem 1.86 vs
// 3.13; batch 8, 64x56x56 11.5 vs 35.3. A direct convolution reads its
// filter again for every output row: cheap while the filter stays in L2,
// costlier than the patch matrix once it does not.
//   reductions,      "vectorized-reduction" the reduced loops innermost,
//   softmax, norms                           vectorized where contiguous
//
// dl-explain runs the same choice and reports it: one remark per op with
// the strategy and the reason.
//
//===----------------------------------------------------------------------===//

#include "dl/Target/CacheModel.h"
#include "dl/IR/DLOps.h"
#include "dl/Transforms/Passes.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLSELECTSTRATEGIES
#define GEN_PASS_DEF_DLEXPLAIN
#include "dl/Transforms/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

constexpr llvm::StringLiteral kStrategy = "dl.strategy";

struct Choice {
  StringRef strategy;
  std::string reason;
};

bool staticDims(Type type, unsigned from) {
  auto shaped = cast<ShapedType>(type);
  for (unsigned dim = from; dim < shaped.getRank(); ++dim)
    if (shaped.isDynamicDim(dim))
      return false;
  return true;
}

std::optional<Choice> choose(Operation *op, int64_t maxDirectFilterBytes) {
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    auto lhs = cast<ShapedType>(matmul.getLhs().getType());
    auto rhs = cast<ShapedType>(matmul.getRhs().getType());
    if (!isa<FloatType>(lhs.getElementType()))
      return Choice{"loops", "integer operands: plain loops"};
    if (!staticDims(rhs, std::max<int64_t>(rhs.getRank() - 2, 0)))
      return Choice{"loops", "dynamic reduction or column sizes"};
    return Choice{"register-tiled-gemm",
                  "float operands with static K and N: cache-blocked, packed, "
                  "register-tiled micro-kernel"};
  }
  if (auto conv = dyn_cast<Conv2dOp>(op)) {
    auto input = cast<ShapedType>(conv.getInput().getType());
    if (conv.getGroups() != 1)
      return Choice{"direct", "grouped or depthwise: no GEMM to share"};
    if (!staticDims(input, 1))
      return Choice{"direct", "dynamic spatial sizes"};
    // f16/bf16: linalg's convolution accumulating in f32, unless every
    // convolution is to be a GEMM (the GPU pipeline: its GEMM kernels, on
    // tensor cores for 16-bit inputs).
    if (!input.getElementType().isF32() && maxDirectFilterBytes >= 0)
      return Choice{"direct", "not f32: linalg's convolution accumulating in f32"};
    auto filter = cast<ShapedType>(conv.getFilter().getType());
    int64_t filterBytes = filter.hasStaticShape() ? filter.getNumElements() * 4 : -1;
    int64_t limit = maxDirectFilterBytes != 0 ? maxDirectFilterBytes
                                              : dl::hostCacheSizes().l2 / 2;
    if (conv.getLayout() == "NHWC" && filterBytes >= 0 && filterBytes <= limit)
      return Choice{"direct",
                    "NHWC, f32, a filter of " + std::to_string(filterBytes / 1024) +
                        " KiB that stays in cache (at most " +
                        std::to_string(limit / 1024) +
                        (maxDirectFilterBytes != 0 ? " KiB" : " KiB, half of L2") +
                        "): register-tiled direct convolution, no patch matrix"};
    std::string type;
    llvm::raw_string_ostream(type) << input.getElementType();
    return Choice{"im2col-gemm",
                  "groups = 1, " + type + ", static spatial sizes" +
                      std::string(conv.getLayout() == "NHWC"
                                      ? ", a filter larger than the direct "
                                        "convolution's limit"
                                      : "") +
                      ": patches as a matrix, one register-tiled GEMM"};
  }
  if (isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp, ReduceMeanOp, SoftmaxOp,
          LogSoftmaxOp, LayerNormOp, ArgmaxOp, ArgminOp>(op))
    return Choice{"vectorized-reduction",
                  "reduced loops innermost, vectorized where contiguous"};
  return std::nullopt;
}

/// Records the choice on `op` unless it already carries one; returns the
/// strategy in effect and why.
std::optional<Choice> annotate(Operation *op, int64_t maxDirectFilterBytes) {
  if (auto given = op->getAttrOfType<StringAttr>(kStrategy))
    return Choice{given.getValue(), "given in the IR"};
  std::optional<Choice> choice = choose(op, maxDirectFilterBytes);
  if (choice)
    op->setAttr(kStrategy, StringAttr::get(op->getContext(), choice->strategy));
  return choice;
}

struct DLSelectStrategiesPass
    : public dl::impl::DLSelectStrategiesBase<DLSelectStrategiesPass> {
  using DLSelectStrategiesBase::DLSelectStrategiesBase;
  void runOnOperation() override {
    getOperation()->walk(
        [&](Operation *op) { (void)annotate(op, maxDirectFilterBytes); });
  }
};

struct DLExplainPass : public dl::impl::DLExplainBase<DLExplainPass> {
  using DLExplainBase::DLExplainBase;
  void runOnOperation() override {
    getOperation()->walk([&](Operation *op) {
      if (std::optional<Choice> choice = annotate(op, maxDirectFilterBytes))
        op->emitRemark() << op->getName() << ": strategy "
                         << choice->strategy << " (" << choice->reason << ")";
    });
  }
};

} // namespace
