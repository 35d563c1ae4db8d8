//===- UnshareFills.cpp - dl-unshare-fills --------------------------------===//
//
// Before one-shot bufferization: one fill or tensor.empty per destination,
// and pads as fill + insert_slice (see Passes.td). Ours for the fills and
// empties (upstream has no such rewrite: its bufferization resolves a shared
// fill with a copy, and a shared empty costs its analysis quadratic time);
// upstream's DecomposePadOpPattern for the pads.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
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

    // Fills on tensors and empty tensors with several uses.
    SmallVector<Operation *> shared;
    func.walk([&](Operation *op) {
      auto fill = dyn_cast<linalg::FillOp>(op);
      if (!(fill && fill.hasPureTensorSemantics()) && !isa<tensor::EmptyOp>(op))
        return;
      if (!op->getResult(0).hasOneUse() && !op->getResult(0).use_empty())
        shared.push_back(op);
    });
    for (Operation *fill : shared) {
      Value result = fill->getResult(0);
      // Only destinations (a fill read as an input is not written over).
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : result.getUses())
        if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
            dps && dps.isDpsInit(&use))
          uses.push_back(&use);
      // One destination keeps the original while nothing else reads it.
      bool othersRead = uses.size() < static_cast<size_t>(std::distance(
                                          result.use_begin(), result.use_end()));
      for (OpOperand *use : othersRead ? ArrayRef<OpOperand *>(uses)
                                       : ArrayRef<OpOperand *>(uses).drop_front()) {
        OpBuilder b(use->getOwner());
        Operation *clone = b.clone(*fill);  // operands dominate the use
        use->set(clone->getResult(0));
      }
    }
  }
};

} // namespace
