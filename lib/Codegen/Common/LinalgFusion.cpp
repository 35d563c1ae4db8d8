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
// Ours also has a reduction write its result transposed when a transpose is
// its only use (FoldTransposeIntoReduction: dl-pack-weights' [J, R, p]
// products store their rows in place), and bubbles an expand_shape up
// through a collapse_shape of other dimensions (upstream's patterns), so an
// elementwise op after `[R, J, p] -> [1, R, J*p]` runs expanded over
// [1, R, J, p] and reads the product through an expand_shape that keeps its
// columns whole: the register tile's epilogue. ViT-S's fc1 + bias + GELU:
// one kernel instead of three (GEMM, transpose, bias-GELU).
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

/// A transpose of a reduction's result computed by the reduction itself: the
/// producer writes its output through the transpose's permutation (its
/// output map's results permuted), into a fill of the transposed shape. dl-
/// pack-weights' products, [J, R, p] turned back into rows [R, J, p], so
/// store their tiles where the rows go (no pass over the result) and the
/// bias and activation after the reshape become the GEMM's epilogue. Only a
/// producer whose single result has a single use (the transpose), an output
/// map that is a permutation, and an init that is a fill of an empty tensor
/// (or the empty tensor): anything else would need its init transposed too.
/// Applied before the reshape folds, which would otherwise expand the
/// transpose and leave an expand_shape between it and the reduction.
struct FoldTransposeIntoReduction
    : public OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto producer = transpose.getInput().getDefiningOp<linalg::GenericOp>();
    if (!producer || producer.getNumDpsInits() != 1 ||
        producer->getNumResults() != 1 || !producer->hasOneUse() ||
        producer.getNumReductionLoops() == 0 || !producer.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(transpose, "not a reduction's only use");
    OpOperand *init = producer.getDpsInitOperand(0);
    AffineMap outMap = producer.getMatchingIndexingMap(init);
    if (!outMap.isProjectedPermutation())
      return rewriter.notifyMatchFailure(transpose, "output map not a projection");
    Value empty = init->get();
    linalg::FillOp fill = empty.getDefiningOp<linalg::FillOp>();
    if (fill) // may be shared (CSE merges equal fills): a new one is made
      empty = fill.getOutputs()[0];
    if (!empty.getDefiningOp<tensor::EmptyOp>())
      return rewriter.notifyMatchFailure(transpose, "init neither fill nor empty");
    auto type = cast<RankedTensorType>(transpose.getInit().getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(transpose, "dynamic shape");

    Location loc = producer.getLoc(); // the profile names the GEMM
    rewriter.setInsertionPoint(producer);
    Value newInit =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    if (fill)
      newInit = linalg::FillOp::create(rewriter, loc, fill.getInputs(), newInit)
                    .getResult(0);
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    SmallVector<AffineExpr> results;
    for (int64_t from : permutation)
      results.push_back(outMap.getResult(from));
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    maps[init->getOperandNumber()] = AffineMap::get(
        outMap.getNumDims(), outMap.getNumSymbols(), results, getContext());
    auto replacement = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, producer.getDpsInputs(),
        ValueRange{newInit}, maps, producer.getIteratorTypesArray());
    rewriter.inlineRegionBefore(producer.getRegion(), replacement.getRegion(),
                                replacement.getRegion().begin());
    replacement->setDiscardableAttrs(producer->getDiscardableAttrDictionary());
    rewriter.replaceOp(transpose, replacement->getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

struct DLLinalgFusePass
    : public dl::impl::DLLinalgFuseBase<DLLinalgFusePass> {
  using DLLinalgFuseBase::DLLinalgFuseBase;

  void runOnOperation() override {
    Operation *op = getOperation();
    MLIRContext *context = op->getContext();
    RewritePatternSet patterns(context);
    unsigned limit = maxFusedOps;
    {
      RewritePatternSet transposes(context);
      transposes.add<FoldTransposeIntoReduction>(context);
      if (failed(applyPatternsGreedily(op, std::move(transposes))))
        return signalPassFailure();
    }
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
    // expand(collapse(x)) on disjoint dimensions as collapse(expand(x)), so
    // that an elementwise consumer of the collapse runs expanded (above).
    tensor::populateBubbleUpExpandShapePatterns(patterns);
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
