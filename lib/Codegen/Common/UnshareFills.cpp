//===- UnshareFills.cpp - dl-unshare-fills --------------------------------===//
//
// Before one-shot bufferization: one fill per destination, and pads as
// fill + insert_slice (see Passes.td). Ours for the fills (upstream has no
// such rewrite: its bufferization resolves the shared fill with a copy);
// upstream's DecomposePadOpPattern for the pads.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLUNSHAREFILLS
#include "dl/Codegen/Common/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

struct DLUnshareFillsPass
    : public dl::impl::DLUnshareFillsBase<DLUnshareFillsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    RewritePatternSet patterns(&getContext());
    linalg::populateDecomposePadPatterns(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();

    SmallVector<linalg::FillOp> shared;
    func.walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse() &&
          !fill->getResult(0).use_empty())
        shared.push_back(fill);
    });
    for (linalg::FillOp fill : shared) {
      Value result = fill->getResult(0);
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : result.getUses())
        uses.push_back(&use);
      // The first use (in walk order of users) keeps the original.
      for (OpOperand *use : llvm::drop_begin(uses)) {
        OpBuilder b(use->getOwner());
        Operation *clone = b.clone(*fill);
        use->set(clone->getResult(0));
      }
    }
  }
};

} // namespace
