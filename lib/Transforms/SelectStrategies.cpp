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
//   dl.conv2d        "im2col-gemm"          groups = 1, f32, static spatial
//                                            sizes: patches gathered into a
//                                            matrix, one GEMM (above)
//                    "direct"               depthwise / grouped / f16 /
//                                            bf16 / dynamic sizes: linalg's
//                                            convolution ops, as loops
//   reductions,      "vectorized-reduction" the reduced loops innermost,
//   softmax, norms                           vectorized where contiguous
//
// dl-explain runs the same choice and reports it: one remark per op with
// the strategy and the reason.
//
//===----------------------------------------------------------------------===//

#include "dl/DLOps.h"
#include "dl/Passes.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLSELECTSTRATEGIES
#define GEN_PASS_DEF_DLEXPLAIN
#include "dl/Passes.h.inc"
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

std::optional<Choice> choose(Operation *op) {
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
    if (!input.getElementType().isF32())
      return Choice{"direct", "not f32: linalg's convolution accumulating in f32"};
    if (!staticDims(input, 1))
      return Choice{"direct", "dynamic spatial sizes"};
    return Choice{"im2col-gemm",
                  "groups = 1, f32, static spatial sizes: patches as a matrix, "
                  "one register-tiled GEMM"};
  }
  if (isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp, ReduceMeanOp, SoftmaxOp,
          LogSoftmaxOp, LayerNormOp, ArgmaxOp, ArgminOp>(op))
    return Choice{"vectorized-reduction",
                  "reduced loops innermost, vectorized where contiguous"};
  return std::nullopt;
}

/// Records the choice on `op` unless it already carries one; returns the
/// strategy in effect and why.
std::optional<Choice> annotate(Operation *op) {
  if (auto given = op->getAttrOfType<StringAttr>(kStrategy))
    return Choice{given.getValue(), "given in the IR"};
  std::optional<Choice> choice = choose(op);
  if (choice)
    op->setAttr(kStrategy, StringAttr::get(op->getContext(), choice->strategy));
  return choice;
}

struct DLSelectStrategiesPass
    : public dl::impl::DLSelectStrategiesBase<DLSelectStrategiesPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) { (void)annotate(op); });
  }
};

struct DLExplainPass : public dl::impl::DLExplainBase<DLExplainPass> {
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (std::optional<Choice> choice = annotate(op))
        op->emitRemark() << op->getName() << ": strategy "
                         << choice->strategy << " (" << choice->reason << ")";
    });
  }
};

} // namespace
