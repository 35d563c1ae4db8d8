//===- LinalgToAffineLoops.cpp - dl-linalg-to-affine-loops ----------------===//
//
// Every linalg op on buffers becomes an affine loop nest through upstream's
// linalgOpToAffineLoops (what convert-linalg-to-affine-loops applies), with
// one difference: the `dl.strategy` of the op moves to the outermost loop
// of its nest, so that the loop transformations can obey the strategy
// chosen on the graph. Ours for that reason only; the lowering is
// upstream's.
//
// Afterwards, scalar affine loads and stores through a memref.subview with
// static strides (of the same rank as its source, whose layout is the
// identity) access the source instead, at offset + stride * index, where
// each offset is a constant (or, for a subview only read, a valid affine
// dim at the access: a tile loop's induction variable). The copies that
// dl.concat, dl.slice and dl.pad lower to then vectorize (dl-affine-vectorize,
// like upstream's vectorizer, takes identity layouts only; an im2col of 9
// windows into a [49, 4608] matrix ran as scalar copies, 150 us of a 620 us
// convolution), and so do the packing copies of dl-fuse-attention's blocks,
// whose K^T and V are subviews at the tile's head (Whisper-base's attention
// on a Zen 3: the V block copied by scalar moves was 13% of its time).
// Upstream's fold-memref-alias-ops does this and more: it also folds
// collapse_shape into the micro-kernels' accesses, as floordiv/mod indices.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"
#include "dl/IR/DLAttrs.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLLINALGTOAFFINELOOPS
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// An scf.forall on buffers (a tile loop of dl-fuse-attention, no shared
/// outputs) with constant bounds as an affine.parallel: its induction
/// variables are then valid affine dims for the nests inside (the sizes of
/// the partial last tile, an affine.min of them, bound their loops).
LogicalResult forallToAffineParallel(IRRewriter &rewriter,
                                     scf::ForallOp forall) {
  if (!forall.getOutputs().empty())
    return forall.emitError("dl-linalg-to-affine-loops: an scf.forall with "
                            "shared outputs (not bufferized)");
  std::optional<SmallVector<int64_t>> lbs =
      getConstantIntValues(forall.getMixedLowerBound());
  std::optional<SmallVector<int64_t>> ubs =
      getConstantIntValues(forall.getMixedUpperBound());
  std::optional<SmallVector<int64_t>> steps =
      getConstantIntValues(forall.getMixedStep());
  if (!lbs || !ubs || !steps) // bounds known at run time: an scf.parallel
    return scf::forallToParallelLoop(rewriter, forall);
  MLIRContext *context = rewriter.getContext();
  SmallVector<AffineMap> lbMaps, ubMaps;
  for (auto [lb, ub] : llvm::zip(*lbs, *ubs)) {
    lbMaps.push_back(AffineMap::getConstantMap(lb, context));
    ubMaps.push_back(AffineMap::getConstantMap(ub, context));
  }
  rewriter.setInsertionPoint(forall);
  auto parallel = affine::AffineParallelOp::create(
      rewriter, forall.getLoc(), TypeRange{}, ArrayRef<arith::AtomicRMWKind>{},
      lbMaps, ValueRange{}, ubMaps, ValueRange{}, *steps);
  Block *body = parallel.getBody();
  rewriter.eraseOp(body->getTerminator());
  Block *old = forall.getBody();
  rewriter.eraseOp(old->getTerminator()); // the empty scf.forall.in_parallel
  rewriter.inlineBlockBefore(old, body, body->end(), body->getArguments());
  rewriter.setInsertionPointToEnd(body);
  affine::AffineYieldOp::create(rewriter, forall.getLoc());
  rewriter.eraseOp(forall);
  return success();
}

/// A loop whose upper bound is the result of an affine.min (the rows of a
/// partial tile, which is not a valid affine dim) bounded by the min's map
/// itself: `for i = 0 to min(1500 - t, 24)`.
LogicalResult composeMinBound(affine::AffineForOp loop) {
  AffineMap map = loop.getUpperBoundMap();
  if (map.getNumResults() != 1 || loop.getUpperBoundOperands().size() != 1)
    return success();
  auto min = loop.getUpperBoundOperands()[0].getDefiningOp<affine::AffineMinOp>();
  if (!min)
    return success();
  bool isOperand = map.getNumDims() == 1 && map.getResult(0) == getAffineDimExpr(0, map.getContext());
  bool isSymbol = map.getNumSymbols() == 1 && map.getResult(0) == getAffineSymbolExpr(0, map.getContext());
  if (!isOperand && !isSymbol)
    return success(); // a valid bound as it is: left alone
  loop.setUpperBound(min.getMapOperands(), min.getAffineMap());
  return success();
}

/// The subview `memref` is, when an access through it from `access` can go
/// to its source: static strides, the same rank, a source of identity
/// layout, and static offsets -- or, for a subview only read (by affine
/// loads), offsets that are valid affine dims where `access` is (a tile
/// loop's induction variable: dl-fuse-attention's K^T and V are subviews at
/// the tile's head). A subview also written keeps its accesses: an
/// accumulation's output, read and written at the same address indexed by
/// its loops alone, is what dl-affine-register-tile matches.
memref::SubViewOp foldableSubview(Value memref, Operation *access) {
  auto subview = memref.getDefiningOp<memref::SubViewOp>();
  if (!subview)
    return {};
  MemRefType source = subview.getSourceType();
  if (!source.getLayout().isIdentity() ||
      source.getRank() != subview.getType().getRank() ||
      ShapedType::isDynamicShape(subview.getStaticStrides()))
    return {};
  if (!subview.getOffsets().empty() &&
      !llvm::all_of(subview->getUsers(), [](Operation *user) {
        return isa<affine::AffineLoadOp>(user);
      }))
    return {};
  Region *scope = affine::getAffineScope(access);
  for (Value offset : subview.getOffsets())
    if (!scope || !affine::isValidDim(offset, scope))
      return {};
  return subview;
}

/// `map` (over `operands`) through `subview`: results r_i as offset_i +
/// stride_i * r_i, each dynamic offset a new dim after the map's own (its
/// symbols keep their positions, after every dim). `operands` is updated.
AffineMap throughSubview(AffineMap map, memref::SubViewOp subview,
                         SmallVectorImpl<Value> &operands) {
  unsigned dims = map.getNumDims();
  MLIRContext *context = map.getContext();
  SmallVector<Value> newOperands(operands.begin(), operands.begin() + dims);
  ValueRange dynamicOffsets = subview.getOffsets();
  SmallVector<AffineExpr> results;
  for (auto [result, offset, stride] :
       llvm::zip(map.getResults(), subview.getStaticOffsets(),
                 subview.getStaticStrides())) {
    AffineExpr at = getAffineConstantExpr(offset, context);
    if (ShapedType::isDynamic(offset)) {
      at = getAffineDimExpr(newOperands.size(), context);
      newOperands.push_back(dynamicOffsets[newOperands.size() - dims]);
    }
    results.push_back(result * stride + at);
  }
  unsigned newDims = newOperands.size();
  newOperands.append(operands.begin() + dims, operands.end());
  operands.assign(newOperands.begin(), newOperands.end());
  return AffineMap::get(newDims, map.getNumSymbols(), results, context);
}

/// Scalar affine loads and stores through foldable subviews moved to the
/// subviews' sources; subviews left without users erased.
void foldSubviewAccesses(func::FuncOp func) {
  SmallVector<Operation *> accesses;
  func.walk([&](Operation *op) {
    if (auto load = dyn_cast<affine::AffineLoadOp>(op);
        load && foldableSubview(load.getMemRef(), op))
      accesses.push_back(op);
    if (auto store = dyn_cast<affine::AffineStoreOp>(op);
        store && foldableSubview(store.getMemRef(), op))
      accesses.push_back(op);
  });
  SetVector<Operation *> subviews;
  for (Operation *op : accesses) {
    auto load = dyn_cast<affine::AffineLoadOp>(op);
    auto store = dyn_cast<affine::AffineStoreOp>(op);
    memref::SubViewOp subview = foldableSubview(
        load ? load.getMemRef() : store.getMemRef(), op);
    SmallVector<Value> operands(load ? load.getMapOperands()
                                     : store.getMapOperands());
    AffineMap map = throughSubview(
        load ? load.getAffineMap() : store.getAffineMap(), subview, operands);
    affine::canonicalizeMapAndOperands(&map, &operands);
    OpBuilder b(op);
    if (load) {
      auto moved = affine::AffineLoadOp::create(b, load.getLoc(),
                                                subview.getSource(), map, operands);
      load.replaceAllUsesWith(moved.getResult());
    } else {
      affine::AffineStoreOp::create(b, store.getLoc(), store.getValueToStore(),
                                    subview.getSource(), map, operands);
    }
    subviews.insert(subview);
    op->erase();
  }
  for (Operation *subview : subviews)
    if (subview->use_empty())
      subview->erase();
}

struct DLLinalgToAffineLoopsPass
    : public dl::impl::DLLinalgToAffineLoopsBase<DLLinalgToAffineLoopsPass> {
  using DLLinalgToAffineLoopsBase::DLLinalgToAffineLoopsBase;

  void runOnOperation() override {
    {
      SmallVector<scf::ForallOp> foralls;
      getOperation().walk([&](scf::ForallOp forall) { foralls.push_back(forall); });
      IRRewriter rewriter(&getContext());
      for (scf::ForallOp forall : foralls)
        if (failed(forallToAffineParallel(rewriter, forall)))
          return signalPassFailure();
    }
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
    WalkResult bounds = getOperation().walk([](affine::AffineForOp loop) {
      return failed(composeMinBound(loop)) ? WalkResult::interrupt()
                                           : WalkResult::advance();
    });
    if (bounds.wasInterrupted())
      return signalPassFailure();
    if (foldSubviews)
      foldSubviewAccesses(getOperation());
    // The entry of the affine level: the loop passes' contract holds from
    // here (loops over a size-0 dimension deleted; see AffineUtils.h).
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
  }
};

} // namespace
