//===- AffineUnrollReductions.cpp - dl-affine-unroll-reductions ----------===//
//
// A short reduction loop left scalar by the vectorizer (an argmax over a
// pooling window: 4 elements) reads and writes its accumulators in memory at
// every iteration: `convert-linalg-to-affine-loops` keeps them in the output
// buffer, and LLVM cannot keep them in registers because it cannot prove the
// output does not alias the input (in an outlined parallel body both are plain
// pointer arguments). Fully unrolled, the iterations sit in one block, where
// upstream's scalar replacement (affine-scalrep's, which this pass runs on
// a function where it unrolled something) forwards each store to the next
// iteration's load: one load and one store per accumulator, the rest in
// registers. Run over every function, as the pipeline did before, it took
// 8.3 of the 15 s of BERT-base's lowering (its checks grow with the square
// of a function's accesses) for nothing where no reduction was unrolled.
//
// Unrolled: innermost affine.for loops with constant bounds and at most
// `max-trip-count` iterations that load and store one element whose address
// does not depend on the loop (the accumulator pattern). Other loops are left
// alone (upstream's affine-loop-unroll would unroll every short loop).
//
// Also unrolled: a register tile's short reduction, an innermost loop of at
// most `max-trip-count` iterations that carries vector accumulators in
// iter_args (dl-affine-register-tile's window loop: the kw of a depthwise
// 5x5 convolution), up to `max-unrolled-ops` operations in all. Unrolled,
// the iterations' loads of one input column are one load (the tile's
// column c at kw + 1 is column c + 1 at kw): a 5x5 depthwise tile of 4
// columns reads 8 columns rather than 20. LLVM's full unrolling did this
// before, with every short loop of the module: dlc's parts now compile with
// it capped (lib/CAPI/ObjectCode.cpp, ScopedOption), which saved a third of
// LLVM's time (ResNet-50), and the loops where it mattered unroll here.
//
// Assumes: no type whose size overflows 64 bits, every loop's step positive,
// and no loop with constant bounds that runs no iteration --
// dl::normalizeAffineLoops (AffineUtils.h) establishes this first (IR with
// an oversized type or a step of 0 or less is refused with an error); nests with constants too large to analyze are left alone
// (dl::hasAnalyzableConstants). test/Codegen/CPU/degenerate-loops*.mlir
// feed it the degenerate cases.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/LoopUtils.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEUNROLLREDUCTIONS
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// Whether `indices` (of an access inside `loop`) never use its induction
/// variable.
bool invariantIn(affine::AffineForOp loop, ValueRange indices) {
  Value iv = loop.getInductionVar();
  for (Value index : indices) {
    if (index == iv)
      return false;
    Operation *def = index.getDefiningOp();
    if (def && loop->isAncestor(def))
      return false; // computed in the loop: assume it may vary
  }
  return true;
}

/// Whether `loop` loads and stores one element at a loop-invariant address.
bool accumulates(affine::AffineForOp loop) {
  bool found = false;
  loop.getBody()->walk([&](affine::AffineWriteOpInterface store) {
    if (!invariantIn(loop, store.getMapOperands()))
      return;
    for (Operation &op : *loop.getBody()) {
      auto load = dyn_cast<affine::AffineReadOpInterface>(&op);
      if (load && load.getMemRef() == store.getMemRef() &&
          load.getAffineMap() == store.getAffineMap() &&
          load.getMapOperands() == store.getMapOperands())
        found = true;
    }
  });
  return found;
}

/// Whether `loop` is a register tile's short reduction: it carries only
/// vectors (at least one) in iter_args.
bool carriesVectorAccumulators(affine::AffineForOp loop) {
  if (loop.getNumIterOperands() == 0)
    return false;
  return llvm::all_of(loop.getResultTypes(),
                      [](Type type) { return isa<VectorType>(type); });
}

struct DLAffineUnrollReductionsPass
    : public dl::impl::DLAffineUnrollReductionsBase<
          DLAffineUnrollReductionsPass> {
  using DLAffineUnrollReductionsBase::DLAffineUnrollReductionsBase;

  void runOnOperation() override {
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    SmallVector<affine::AffineForOp> loops, tiles;
    getOperation().walk([&](affine::AffineForOp loop) {
      bool innermost = true;
      loop.getBody()->walk([&](affine::AffineForOp) { innermost = false; });
      if (!innermost || !loop.hasConstantBounds())
        return;
      std::optional<uint64_t> trips = affine::getConstantTripCount(loop);
      if (!trips || *trips < 2 || *trips > static_cast<uint64_t>(maxTripCount))
        return;
      if (accumulates(loop)) {
        loops.push_back(loop);
        return;
      }
      if (!carriesVectorAccumulators(loop))
        return;
      int64_t ops = 0;
      loop.getBody()->walk([&](Operation *) { ++ops; });
      if (ops * static_cast<int64_t>(*trips) <= maxUnrolledOps)
        tiles.push_back(loop);
    });
    for (affine::AffineForOp loop : loops)
      (void)affine::loopUnrollFull(loop);
    for (affine::AffineForOp loop : tiles)
      (void)affine::loopUnrollFull(loop);
    // The unrolled iterations' accumulators forwarded in registers by
    // upstream's scalar replacement, run here and only where something was
    // unrolled: over a whole function its dependence checks grow with the
    // square of the accesses (8.3 of the 15 s BERT-base's pipeline took).
    if (!loops.empty())
      affine::affineScalarReplace(getOperation(), getAnalysis<DominanceInfo>(),
                                  getAnalysis<PostDominanceInfo>(),
                                  getAnalysis<AliasAnalysis>());
  }
};

} // namespace
