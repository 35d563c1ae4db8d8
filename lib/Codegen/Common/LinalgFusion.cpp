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

/// An all-parallel linalg op whose maps are projected permutations and whose
/// body computes on its block arguments only: no linalg.index, no reads of
/// tensors or memrefs.
bool plainElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !allParallel(op) || op->getNumRegions() != 1 ||
      !llvm::all_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return false;
  WalkResult result = op->getRegion(0).walk([](Operation *inner) {
    if (isa<linalg::IndexOp>(inner) || inner->getNumRegions() != 0 ||
        llvm::any_of(inner->getOperandTypes(), [](Type type) {
          return isa<ShapedType>(type);
        }))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
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
      if (!producer || !producer->hasOneUse())
        return false;
      // A static expand_shape of an elementwise result (an NHWC 1x1 or
      // im2col convolution's bias add on its [N*OH*OW, F] GEMM, expanded
      // to [N, OH, OW, F]): the elementwise op runs expanded instead, so
      // that the activation after the reshape fuses with it and both
      // become the GEMM's epilogue (which reads C through a static
      // expand_shape; a dynamic one would refuse the bias it takes now).
      // Only plain elementwise producers: one whose body asks for its
      // indices (linalg.index: a gather's or a resize's coordinate
      // arithmetic) or reads a tensor would have them rewritten over the
      // expanded dimensions, which the affine lowering later refuses.
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(fused->getOwner()))
        return plainElementwise(producer) &&
               expand.getResultType().hasStaticShape();
      return allParallel(fused->getOwner()) &&
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
