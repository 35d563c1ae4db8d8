//===- AffineVectorize.cpp - dl-affine-vectorize --------------------------===//
//
// Vectorizes parallel affine loops with upstream's super-vectorizer
// (affine::vectorizeAffineLoops), choosing the candidate loops ourselves.
//
// Why ours: upstream's affine-super-vectorize takes every loop that
// isLoopParallel() accepts, and that check lets through loops that store to
// the same element in every iteration (a 0-d memref, or a single-iteration
// loop around an accumulation, as convert-linalg-to-affine-loops produces for
// reductions); the vectorizer then emits an invalid broadcasting
// vector.transfer_write. It also vectorizes loops that cover only part of a
// memref dimension (intra-tile loops after tiling) with transfers that mask
// only at the memref's end, so the last vector runs past the loop and clobbers
// the next tile. Here neither kind of loop is a candidate; they stay scalar.
// Nor are loops with a static trip count the width does not divide (see
// vectorizesWithoutStaticTail): LLVM vectorizes those itself. Everything else (which loop of a nest to vectorize, contiguity,
// reductions carried in iter_args) is upstream's logic.
//
//===----------------------------------------------------------------------===//

#include "dl/Passes.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEVECTORIZE
#include "dl/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// True if some store in `loop` writes the same element in every iteration
/// (its address does not depend on the loop's induction variable; a 0-d memref
/// is the common case). Upstream's parallelism check accepts such a loop when
/// its trip count is 1 or the memref is 0-d, and the vectorizer then emits an
/// invalid broadcasting vector.transfer_write.
bool hasInvariantStore(affine::AffineForOp loop) {
  WalkResult result = loop.walk([&](Operation *op) {
    if (auto store = dyn_cast<affine::AffineStoreOp>(op)) {
      if (affine::isInvariantAccess(store, loop))
        return WalkResult::interrupt();
    } else if (isa<memref::StoreOp>(op)) {
      // Not analyzable as an affine access: be conservative.
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// True if vectorizing `loop` by `width` needs no masked tail within a static
/// extent: the loop starts at 0 with step 1, and either `width` divides its
/// constant trip count, or its upper bound is the dynamic size (memref.dim) of
/// the memref dimension that each of its varying accesses walks along, so
/// that the transfers' masking at the memref's end is exactly the loop's end.
///
/// Static trip counts that `width` does not divide are left to LLVM: a masked
/// tail is correct there too, but LLVM fully unrolls the small constant loop
/// nests around it (convolution, pooling) into blocks of hundreds of masked
/// stores that its instruction selector needs seconds for (a ResNet basic
/// block at 9x9 took 15 s to JIT, 0.3 s without them).
bool vectorizesWithoutStaticTail(affine::AffineForOp loop, int64_t width) {
  if (!loop.hasConstantLowerBound() || loop.getConstantLowerBound() != 0 ||
      loop.getStepAsInt() != 1)
    return false;
  if (std::optional<uint64_t> tripCount = affine::getConstantTripCount(loop))
    return *tripCount % width == 0;
  Value iv = loop.getInductionVar();
  AffineMap upper = loop.getUpperBoundMap();
  auto dimOp = loop.getUpperBoundOperands().size() == 1
                   ? loop.getUpperBoundOperands()[0].getDefiningOp<memref::DimOp>()
                   : memref::DimOp();
  if (!dimOp || upper.getNumResults() != 1 ||
      !isa<AffineSymbolExpr, AffineDimExpr>(upper.getResult(0)))
    return false;
  std::optional<int64_t> boundDim = dimOp.getConstantIndex();
  WalkResult result = loop.walk([&](Operation *op) {
    if (!isa<affine::AffineReadOpInterface, affine::AffineWriteOpInterface>(op))
      return WalkResult::advance();
    affine::MemRefAccess access(op);
    affine::AffineValueMap map;
    access.getAccessMap(&map);
    for (unsigned dim = 0; dim < map.getNumResults(); ++dim) {
      if (!map.isFunctionOf(dim, iv))
        continue;
      // The access walks this dimension as exactly `iv`, and the loop ends
      // where this dimension of this memref ends.
      auto expr = dyn_cast<AffineDimExpr>(map.getResult(dim));
      if (!expr || map.getOperand(expr.getPosition()) != iv ||
          dimOp.getSource() != access.memref || boundDim != dim)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

struct DLAffineVectorizePass
    : public dl::impl::DLAffineVectorizeBase<DLAffineVectorizePass> {
  using DLAffineVectorizeBase::DLAffineVectorizeBase;

  void runOnOperation() override {
    if (vectorWidth <= 0) {
      getOperation().emitError()
          << "dl-affine-vectorize: vector-width must be positive, but got "
          << static_cast<int64_t>(vectorWidth);
      return signalPassFailure();
    }
    DenseSet<Operation *> candidates;
    affine::ReductionLoopMap reductionLoops;
    getOperation().walk([&](affine::AffineForOp loop) {
      SmallVector<affine::LoopReduction, 2> reductions;
      if (!affine::isLoopParallel(loop, &reductions) ||
          hasInvariantStore(loop) ||
          !vectorizesWithoutStaticTail(loop, vectorWidth))
        return;
      candidates.insert(loop);
      if (!reductions.empty())
        reductionLoops[loop] = reductions;
    });
    affine::vectorizeAffineLoops(getOperation(), candidates,
                                 {static_cast<int64_t>(vectorWidth)},
                                 /*fastestVaryingPattern=*/{}, reductionLoops);
  }
};

} // namespace
