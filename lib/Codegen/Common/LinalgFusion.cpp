//===- LinalgFusion.cpp - dl-linalg-fuse ----------------------------------===//
//
// Fuses elementwise linalg producers into their consumers on tensors, and
// folds reshapes into elementwise ops by expanding them, like upstream's
// linalg-fuse-elementwise-ops, but only where fusion does not make the
// consumer recompute the producer: the consumer must read the producer's
// result through a permutation of its loops (each element once). Upstream
// fuses any single-use producer, which turns an im2col gather feeding a GEMM
// back into a direct convolution, and a `relu(x) @ w` into a matmul that
// applies relu K*N times; reshapes are folded by expansion only into
// consumers without reductions for the same reason (expanding a GEMM's rows
// into (n, oh, ow) would hide it from the register-tiled micro-kernel).
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLLINALGFUSE
#include "dl/Codegen/Common/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// Whether `consumer` reads operand `fused` once per element: its indexing
/// map is a permutation of the consumer's loops.
bool readsEachElementOnce(OpOperand *fused) {
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!consumer)
    return true;
  return consumer.getMatchingIndexingMap(fused).isPermutation();
}

/// Operations in the body of a linalg op (0 for anything else).
unsigned bodySize(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || op->getNumRegions() != 1 || op->getRegion(0).empty())
    return 0;
  return op->getRegion(0).front().getOperations().size();
}

bool allParallel(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp &&
         linalgOp.getNumParallelLoops() == linalgOp.getNumLoops();
}

struct DLLinalgFusePass
    : public dl::impl::DLLinalgFuseBase<DLLinalgFusePass> {
  using DLLinalgFuseBase::DLLinalgFuseBase;

  void runOnOperation() override {
    Operation *op = getOperation();
    MLIRContext *context = op->getContext();
    RewritePatternSet patterns(context);
    unsigned limit = maxFusedOps;
    linalg::ControlFusionFn fuseProducer = [limit](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse() || !readsEachElementOnce(fused))
        return false;
      return limit == 0 ||
             bodySize(producer) + bodySize(fused->getOwner()) <= limit;
    };
    linalg::ControlFusionFn foldReshape = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             allParallel(fused->getOwner()) &&
             (!isa<linalg::LinalgOp>(producer) || allParallel(producer));
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, fuseProducer);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, foldReshape);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, fuseProducer);
    if (failed(applyPatternsGreedily(
            op, std::move(patterns),
            GreedyRewriteConfig().setUseTopDownTraversal())))
      return signalPassFailure();
  }
};

} // namespace
