//===- LinalgToAffineLoops.cpp - dl-linalg-to-affine-loops ----------------===//
//
// Every linalg op on buffers becomes an affine loop nest through upstream's
// linalgOpToAffineLoops (what convert-linalg-to-affine-loops applies), with
// one difference: the `dl.strategy` of the op moves to the outermost loop
// of its nest, so that the loop transformations can obey the strategy
// chosen on the graph. Ours for that reason only; the lowering is
// upstream's.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"
#include "dl/IR/DLAttrs.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLLINALGTOAFFINELOOPS
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

struct DLLinalgToAffineLoopsPass
    : public dl::impl::DLLinalgToAffineLoopsBase<DLLinalgToAffineLoopsPass> {
  using DLLinalgToAffineLoopsBase::DLLinalgToAffineLoopsBase;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      Attribute strategy = op->getAttr(dl::kStrategyAttrName);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToAffineLoops(rewriter, op);
      if (failed(loops)) {
        op->emitError("dl-linalg-to-affine-loops: cannot lower this op to "
                      "affine loops");
        return signalPassFailure();
      }
      if (strategy && !loops->empty())
        loops->front()->setAttr(dl::kStrategyAttrName, strategy);
      rewriter.eraseOp(op);
    }
    // The entry of the affine level: the loop passes' contract holds from
    // here (loops over a size-0 dimension deleted; see AffineUtils.h).
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
  }
};

} // namespace
