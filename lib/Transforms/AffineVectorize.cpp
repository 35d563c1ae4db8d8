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
// vector.transfer_write. Here such loops are not candidates and stay scalar. Everything else (which loop of a nest to vectorize, contiguity,
// reductions carried in iter_args) is upstream's logic.
//
//===----------------------------------------------------------------------===//

#include "dl/Passes.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
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
          hasInvariantStore(loop))
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
