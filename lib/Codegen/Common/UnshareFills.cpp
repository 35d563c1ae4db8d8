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
      // A fill: in program order, the first destination keeps the original
      // (while nothing else reads it), each later one gets a clone just
      // before it. Kept for a late one (the use list is in no particular
      // order), the original's buffer lived from the fill to it: a training
      // step's backward convolution took the forward's zero fill, and its
      // buffer stayed alive across the whole step. (Empty tensors keep the
      // use-list order, which one-shot bufferization's in-place choices
      // were tuned with.)
      Block *block = fill->getBlock();
      auto at = [&](OpOperand *use) {
        Operation *top = block->findAncestorOpInBlock(*use->getOwner());
        return top ? top : use->getOwner();
      };
      if (isa<linalg::FillOp>(fill))
        llvm::stable_sort(uses, [&](OpOperand *a, OpOperand *b) {
        Operation *x = at(a), *y = at(b);
        return x != y && x->getBlock() == block && y->getBlock() == block &&
               x->isBeforeInBlock(y);
      });
      bool othersRead = uses.size() < static_cast<size_t>(std::distance(
                                          result.use_begin(), result.use_end()));
      for (OpOperand *use : othersRead ? ArrayRef<OpOperand *>(uses)
                                       : ArrayRef<OpOperand *>(uses).drop_front()) {
        OpBuilder b(use->getOwner());
        Operation *clone = b.clone(*fill);  // operands dominate the use
        // A fill of an empty tensor: its own empty too, just before it, so
        // that its buffer is allocated there and not where the first was.
        if (auto filled = dyn_cast<linalg::FillOp>(clone))
          if (auto empty = filled.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()) {
            b.setInsertionPoint(clone);
            filled.getOutputsMutable()[0].set(b.clone(*empty)->getResult(0));
          }
        use->set(clone->getResult(0));
      }
    }
  }
};

} // namespace
