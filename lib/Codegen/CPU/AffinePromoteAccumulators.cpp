//===- AffinePromoteAccumulators.cpp - dl-affine-promote-accumulators -----===//
//
// A reduction lowered by `convert-linalg-to-affine-loops` keeps its
// accumulator in the output buffer: every iteration of the reduction loop
// loads it, adds, and stores it back. LLVM cannot keep it in a register (it
// cannot prove that the output does not alias the input: both are views of
// the memory plan's arena, or plain pointer arguments of an outlined parallel
// body), so a sum over 64 elements is a chain of 64 store-to-load forwards,
// and upstream's super-vectorizer does not vectorize it (it vectorizes
// reductions carried in iter_args only).
//
// Here an accumulator is carried in `iter_args` instead:
//
//   affine.for %k = 0 to 64 {                %init = affine.load %acc[%i]
//     %a = affine.load %x[%i, %k]            %r = affine.for %k = 0 to 64
//     %s = affine.load %acc[%i]      =>          iter_args(%s = %init) {
//     %t = arith.addf %s, %a                   %a = affine.load %x[%i, %k]
//     affine.store %t, %acc[%i]                %t = arith.addf %s, %a
//   }                                          affine.yield %t
//                                            }
//                                            affine.store %r, %acc[%i]
//
// for each affine.load/affine.store pair directly in a loop's body that
// accesses one element at an address defined outside the loop (the load
// first, one store), when nothing else in the loop may touch that memory.
// Loops are processed innermost first, so an accumulator hoisted out of an
// inner loop is hoisted again out of the loops around it when it can be.
// dl-affine-vectorize then vectorizes the reduction (a vector accumulator and
// one vector.reduction after the loop), and reductions it cannot vectorize
// (an argmax: a compare and two selects) still run in registers.
//
// May two memrefs alias? Distinct values are assumed to when both are
// function arguments (or anything not traced to an allocation); views of one
// allocation alias unless both are `memref.view`s with constant byte shifts
// and static shapes whose byte ranges are disjoint (the memory plan's
// buffers), or reshapes, casts or subviews of such views (which stay within
// them); different allocations and globals never do. Any op in the loop
// with unknown memory effects (a call) forbids the promotion.
//
// Ours: upstream has no such pass at the affine level (affine-scalrep
// forwards stores to loads within a block but does not carry values across
// iterations; linalg's hoistRedundantVectorTransfers works on vector
// transfers in scf.for, after the vectorizer).
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

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEPROMOTEACCUMULATORS
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// Whether no op in `loop` other than `load` and `store` may read, write or
/// free the memory of `memref`.
bool onlyAccessor(affine::AffineForOp loop, Value memref, Operation *load,
                  Operation *store) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (op == load || op == store || isa<affine::AffinePrefetchOp>(op))
      return WalkResult::advance(); // a prefetch changes no value
    if (auto read = dyn_cast<affine::AffineReadOpInterface>(op))
      return dl::mayShareMemory(read.getMemRef(), memref)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    if (auto write = dyn_cast<affine::AffineWriteOpInterface>(op))
      return dl::mayShareMemory(write.getMemRef(), memref)
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    if (auto effecting = dyn_cast<MemoryEffectOpInterface>(op)) {
      SmallVector<MemoryEffects::EffectInstance> effects;
      effecting.getEffects(effects);
      for (const MemoryEffects::EffectInstance &effect : effects) {
        if (isa<MemoryEffects::Allocate>(effect.getEffect()))
          continue;
        Value on = effect.getValue();
        if (!on || dl::mayShareMemory(on, memref))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance(); // its nested ops are visited
    return WalkResult::interrupt(); // unknown effects
  });
  return !result.wasInterrupted();
}

/// Carries one accumulator of `loop` in iter_args, replacing the loop;
/// returns the new loop, or nothing if `loop` has no accumulator to promote.
std::optional<affine::AffineForOp> promoteOne(affine::AffineForOp loop,
                                              RewriterBase &rewriter) {
  auto likeLoop = cast<LoopLikeOpInterface>(loop.getOperation());
  Block *body = loop.getBody();
  for (Operation &op : *body) {
    auto load = dyn_cast<affine::AffineLoadOp>(&op);
    if (!load || !llvm::all_of(load.getMapOperands(), [&](Value v) {
          return likeLoop.isDefinedOutsideOfLoop(v);
        }))
      continue;
    Value memref = load.getMemRef();
    affine::AffineStoreOp store;
    int stores = 0;
    for (Operation &other : *body)
      if (auto candidate = dyn_cast<affine::AffineStoreOp>(&other);
          candidate && candidate.getMemRef() == memref &&
          candidate.getAffineMap() == load.getAffineMap() &&
          candidate.getMapOperands() == load.getMapOperands()) {
        store = candidate;
        ++stores;
      }
    if (stores != 1 || !load->isBeforeInBlock(store) ||
        !onlyAccessor(loop, memref, load, store))
      continue;

    rewriter.setInsertionPoint(loop);
    Value init = affine::AffineLoadOp::create(rewriter, load.getLoc(), memref,
                                              load.getAffineMap(),
                                              load.getMapOperands());
    Value stored = store.getValueToStore();
    FailureOr<LoopLikeOpInterface> replaced = likeLoop.replaceWithAdditionalYields(
        rewriter, ValueRange{init}, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{stored};
        });
    if (failed(replaced))
      return std::nullopt;
    auto promoted = cast<affine::AffineForOp>(replaced->getOperation());
    rewriter.replaceAllUsesWith(load.getResult(),
                                promoted.getRegionIterArgs().back());
    rewriter.setInsertionPointAfter(promoted);
    affine::AffineStoreOp::create(rewriter, store.getLoc(),
                                  promoted.getResults().back(), memref,
                                  store.getAffineMap(), store.getMapOperands());
    rewriter.eraseOp(store);
    rewriter.eraseOp(load);
    return promoted;
  }
  return std::nullopt;
}

struct DLAffinePromoteAccumulatorsPass
    : public dl::impl::DLAffinePromoteAccumulatorsBase<
          DLAffinePromoteAccumulatorsPass> {
  using DLAffinePromoteAccumulatorsBase::DLAffinePromoteAccumulatorsBase;

  void runOnOperation() override {
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    // Post-order: inner loops first; promoting a loop replaces only that
    // loop, so the loops around it (later in the list) stay valid.
    SmallVector<affine::AffineForOp> loops;
    getOperation().walk([&](affine::AffineForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (affine::AffineForOp loop : loops)
      while (std::optional<affine::AffineForOp> promoted = promoteOne(loop, rewriter))
        loop = *promoted;
  }
};

} // namespace
