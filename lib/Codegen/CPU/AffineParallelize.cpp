//===- AffineParallelize.cpp - dl-affine-parallelize ----------------------===//
//
// Chooses, in each affine loop nest, the loop that runs on several threads:
// the outermost loop that affine dependence analysis proves parallel and
// whose iterations carry enough work to pay for a fork/join. It becomes an
// `affine.parallel` (upstream's affineParallelize utility); loops nested in
// it stay sequential. `dl-outline-parallel` later runs it on dlc's thread pool.
//
// Ours rather than upstream's `affine-parallelize` because upstream
//  - refuses a loop whose body frees memory or touches memory through a
//    non-affine op, which every packed (alloc/dealloc of the pack buffer
//    inside the loop) or vectorized (vector.transfer_read) nest here has.
//    Here a buffer allocated inside the loop is private to an iteration, a
//    non-affine read is fine when nothing in the loop writes that memref, and
//    only a non-affine write or an unknown effect (a call) forbids;
//  - parallelizes every parallel loop whatever its size, and a fork/join costs
//    microseconds: here only one loop per nest is chosen, and only where the
//    estimated work (operations executed, by constant trip counts) reaches
//    `min-work`.
// A loop that carries values (iter_args) is never chosen: its iterations
// depend on each other. With `explain`, a remark names each loop chosen or
// refused and why.
//
// A chosen loop whose iterations do not split evenly over the target's
// threads (#dl.target's `threads`) loses the difference: the 7 output rows
// of a CNN's last stage run as 4 + 3 on 2 threads, an eighth of both
// threads' time. Where the split loses more than a sixteenth and the loop's
// body is exactly one loop with constant bounds, the two are coalesced into
// one loop (upstream's affine::coalesceLoops: 7 x 512 iterations, 1792 +
// 1792) if that one is parallel too (tried on a copy first; the copy
// replaces the nest only then), where the loop already runs from 0 by 1
// (see coalesceWithInner). timm's ResNet-50, EfficientNet-B0 and
// MobileNetV3 at batch 1 ran 1-2% faster for it on Zen 3 (2 threads;
// noisy: MobileNetV3 0.98-1.015x in three runs; measured before tile loops
// were excluded). Evenly split loops are left as they are: coalescing
// costs a division per iteration.
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
#include "dl/Target/Target.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/Utils.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEPARALLELIZE
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using affine::AffineForOp;

namespace {

/// Trip count assumed for a loop whose bounds are not constant (a dynamic
/// batch): large enough that such loops are worth running in parallel.
constexpr double kUnknownTripCount = 64;

/// The fraction of the threads' time an uneven split of `trips` iterations
/// over `threads` loses: the busiest thread's share over the mean, less 1.
double splitLoss(uint64_t trips, int64_t threads) {
  double t = static_cast<double>(threads);
  double busiest = std::ceil(static_cast<double>(trips) / t);
  return busiest * t / static_cast<double>(trips) - 1;
}

/// A split that loses more than this is worth a division per iteration.
constexpr double kTolerableLoss = 1.0 / 16;

/// Whether `value` is a buffer allocated inside `scope` (or a view of one):
/// each iteration of `scope` then has its own.
bool isLocal(Value value, Operation *scope) {
  Operation *def = value.getDefiningOp();
  if (!def || !scope->isProperAncestor(def))
    return false;
  if (hasSingleEffect<MemoryEffects::Allocate>(def, value))
    return true;
  auto view = dyn_cast<ViewLikeOpInterface>(def);
  return view && isLocal(view.getViewSource(), scope);
}

/// The trip count of `loop`, or a bound on it: a constant count; else, for
/// bounds over the same operands whose difference is `x mod c` (the
/// remainder loop after a tile loop over a dynamic size), at most c - 1
/// iterations; else `kUnknownTripCount`.
double estimateTrips(AffineForOp loop) {
  if (std::optional<uint64_t> trips = affine::getConstantTripCount(loop))
    return static_cast<double>(*trips);
  AffineMap lower = loop.getLowerBoundMap(), upper = loop.getUpperBoundMap();
  if (lower.getNumResults() == 1 && upper.getNumResults() == 1 &&
      lower.getNumDims() == upper.getNumDims() &&
      lower.getNumSymbols() == upper.getNumSymbols() &&
      llvm::equal(loop.getLowerBoundOperands(), loop.getUpperBoundOperands())) {
    AffineExpr span = simplifyAffineExpr(upper.getResult(0) - lower.getResult(0),
                                         upper.getNumDims(), upper.getNumSymbols());
    int64_t step = loop.getStepAsInt();
    if (auto constant = dyn_cast<AffineConstantExpr>(span))
      return std::max<int64_t>(0, (constant.getValue() + step - 1) / step);
    if (auto binary = dyn_cast<AffineBinaryOpExpr>(span))
      if (binary.getKind() == AffineExprKind::Mod)
        if (auto modulus = dyn_cast<AffineConstantExpr>(binary.getRHS()))
          return static_cast<double>((modulus.getValue() - 1 + step - 1) / step);
  }
  return kUnknownTripCount;
}

/// Estimated operations run by `loop`: trip count x (operations of its body,
/// each nested loop counted by its own estimate).
double estimateWork(AffineForOp loop) {
  double count = estimateTrips(loop);
  double body = 0;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto inner = dyn_cast<AffineForOp>(op))
      body += estimateWork(inner);
    else if (op.getNumRegions() == 0)
      body += 1;
    else
      op.walk([&](Operation *nested) {
        if (auto inner = dyn_cast<AffineForOp>(nested))
          body += estimateWork(inner);
        else
          body += 1;
        return isa<AffineForOp>(nested) ? WalkResult::skip()
                                        : WalkResult::advance();
      });
  }
  return count * std::max(body, 1.0);
}

/// Whether the iterations of `loop` are independent; if not, `why` says what
/// ties them. (Analyzes `loop` as it is; see isParallel.)
bool isParallelAsIs(AffineForOp loop, std::string &why) {
  if (loop.getNumIterOperands() != 0) {
    why = "it carries values from one iteration to the next (iter_args)";
    return false;
  }
  SmallVector<Operation *> accesses;
  DenseSet<Value> written;
  SmallVector<std::pair<Operation *, Value>> otherReads;
  WalkResult result = loop.walk([&](Operation *op) -> WalkResult {
    if (auto read = dyn_cast<affine::AffineReadOpInterface>(op)) {
      if (!isLocal(read.getMemRef(), loop))
        accesses.push_back(op);
      return WalkResult::advance();
    }
    if (auto write = dyn_cast<affine::AffineWriteOpInterface>(op)) {
      if (!isLocal(write.getMemRef(), loop)) {
        accesses.push_back(op);
        written.insert(write.getMemRef());
      }
      return WalkResult::advance();
    }
    // A prefetch (dl-affine-register-tile's) changes no value.
    if (isa<AffineForOp, affine::AffineYieldOp, affine::AffineIfOp,
            affine::AffinePrefetchOp>(op) ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    auto effecting = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effecting) {
      why = "'" + op->getName().getStringRef().str() +
            "' has unknown memory effects";
      return WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    effecting.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects) {
      Value value = effect.getValue();
      if (isa<MemoryEffects::Allocate>(effect.getEffect()))
        continue;
      if (value && isLocal(value, loop))
        continue;
      if (value && isa<MemoryEffects::Read>(effect.getEffect())) {
        otherReads.push_back({op, value});
        continue;
      }
      why = "'" + op->getName().getStringRef().str() +
            "' writes or frees memory shared by the iterations";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return false;
  for (auto [op, value] : otherReads)
    if (written.contains(value)) {
      why = "'" + op->getName().getStringRef().str() +
            "' reads a buffer the loop writes, through a non-affine access";
      return false;
    }
  unsigned depth = affine::getNestingDepth(loop) + 1;
  return dl::forEachDependence(
      accesses, depth,
      [&](Operation *source, Operation *destination,
          const affine::DependenceResult &dependence,
          ArrayRef<affine::DependenceComponent>) {
        if (dependence.value == affine::DependenceResult::NoDependence)
          return true;
        llvm::raw_string_ostream os(why);
        if (dependence.value == affine::DependenceResult::HasDependence)
          os << "a dependence between iterations, from '";
        else
          os << "a dependence it cannot rule out, from '";
        os << source->getName() << "' to '" << destination->getName()
           << "' on " << affine::MemRefAccess(source).memref.getType();
        return false;
      });
}

/// isParallelAsIs on a copy of `loop` whose loops are normalized (lower
/// bound 0, step 1, the old induction variable an affine.apply): affine
/// dependence analysis models a step only over a constant lower bound, so
/// the column tiles `affine.for %j = %block to %block + 256 step 32` of a
/// register-tiled GEMM would otherwise seem to reach into the next block
/// (%j + 16 up to %block + 271), and the column blocks never run in parallel.
bool isParallel(AffineForOp loop, std::string &why) {
  OpBuilder builder(loop);
  auto copy = cast<AffineForOp>(builder.clone(*loop));
  copy.walk([](AffineForOp inner) { (void)affine::normalizeAffineFor(inner); });
  bool parallel = isParallelAsIs(copy, why);
  copy.erase();
  return parallel;
}

/// `loop` and the one loop its body holds coalesced into one, if `loop`'s
/// iterations split over `threads` with a loss over kTolerableLoss, the
/// coalesced loop's less, both have constant bounds and the coalesced loop
/// is parallel; else null (and the IR unchanged).
AffineForOp coalesceWithInner(AffineForOp loop, int64_t threads) {
  std::optional<uint64_t> trips = affine::getConstantTripCount(loop);
  if (threads < 2 || !trips || *trips == 0 ||
      splitLoss(*trips, threads) <= kTolerableLoss)
    return nullptr;
  Block *body = loop.getBody();
  if (!llvm::hasSingleElement(body->without_terminator()))
    return nullptr;
  auto inner = dyn_cast<AffineForOp>(body->front());
  if (!inner || inner.getNumIterOperands() != 0 ||
      !inner.hasConstantBounds() || !loop.hasConstantBounds())
    return nullptr;
  std::optional<uint64_t> innerTrips = affine::getConstantTripCount(inner);
  int64_t product;
  if (!innerTrips || *innerTrips < 2 ||
      llvm::MulOverflow(static_cast<int64_t>(*trips),
                        static_cast<int64_t>(*innerTrips), product) ||
      product < 0 ||
      splitLoss(static_cast<uint64_t>(product), threads) >=
          splitLoss(*trips, threads))
    return nullptr;
  // coalesceLoops wants normalized loops (from 0 by 1) in a perfect nest,
  // and remaps the induction variables only inside the inner loop: the
  // affine.apply that normalizing `loop` would put in its body, between the
  // two loops, would keep the coalesced variable unmapped (a tile loop
  // `0 to 19 step 8` read p * 8 for (p floordiv 3) * 8). So `loop` must be
  // normalized already; the inner loop's apply lands in its own body.
  if (loop.getConstantLowerBound() != 0 || loop.getStepAsInt() != 1)
    return nullptr;
  OpBuilder builder(loop);
  auto copy = cast<AffineForOp>(builder.clone(*loop));
  auto copyInner = cast<AffineForOp>(copy.getBody()->front());
  std::string why;
  SmallVector<AffineForOp> band = {copy, copyInner};
  if (failed(affine::normalizeAffineFor(copyInner)) ||
      !llvm::hasSingleElement(copy.getBody()->without_terminator()) ||
      failed(affine::coalesceLoops(band)) || !isParallel(copy, why)) {
    copy.erase();
    return nullptr;
  }
  loop.erase();
  // coalesceLoops writes the trip counts as affine.apply of constant maps,
  // used as symbols of the bound and of the floordiv/mod: folded to
  // constants here.
  SetVector<Operation *> applies;
  auto addDefinitions = [&](ValueRange operands) {
    for (Value operand : operands)
      if (auto apply = operand.getDefiningOp<affine::AffineApplyOp>())
        if (apply->getBlock() == copy->getBlock())
          applies.insert(apply);
  };
  addDefinitions(copy.getUpperBoundOperands());
  copy.walk([&](affine::AffineApplyOp apply) {
    applies.insert(apply);
    addDefinitions(apply.getMapOperands());
  });
  applies.insert(copy);
  RewritePatternSet patterns(copy.getContext());
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns,
                                                     copy.getContext());
  affine::AffineForOp::getCanonicalizationPatterns(patterns,
                                                   copy.getContext());
  (void)applyOpPatternsGreedily(applies.takeVector(), std::move(patterns));
  return copy;
}

struct DLAffineParallelizePass
    : public dl::impl::DLAffineParallelizeBase<DLAffineParallelizePass> {
  using DLAffineParallelizeBase::DLAffineParallelizeBase;

  void runOnOperation() override {
    if (minWork < 0) {
      getOperation().emitError()
          << "dl-affine-parallelize: min-work must be non-negative, but got "
          << static_cast<int64_t>(minWork);
      return signalPassFailure();
    }
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    threads = dl::TargetInfo::of(getOperation()).getThreads();
    for (AffineForOp root : dl::outermostAffineLoops(getOperation()))
      // A nest inside a parallel loop (dl-fuse-attention's tiles) already
      // runs on a thread of its own.
      if (!root->getParentOfType<affine::AffineParallelOp>())
        choose(root);
  }

  /// The target's threads (#dl.target), what a split is balanced for.
  int64_t threads = 1;

  /// Parallelizes `loop` if it qualifies, else looks inside it.
  void choose(AffineForOp loop) {
    double work = estimateWork(loop);
    if (work < static_cast<double>(minWork)) {
      if (explain && loop->getParentOfType<AffineForOp>() == nullptr)
        loop.emitRemark() << "dl-affine-parallelize: nest left sequential: "
                             "about "
                          << static_cast<int64_t>(work)
                          << " operations, under min-work = "
                          << static_cast<int64_t>(minWork);
      return;
    }
    std::string why;
    if (estimateTrips(loop) < 2) {
      why = "it runs once";
    } else if (isParallel(loop, why)) {
      if (AffineForOp coalesced = coalesceWithInner(loop, threads)) {
        loop = coalesced;
        if (explain)
          loop.emitRemark() << "dl-affine-parallelize: coalesced with the "
                               "loop it holds, for an even split over the "
                               "threads ("
                            << *affine::getConstantTripCount(loop)
                            << " iterations)";
      }
      affine::AffineParallelOp parallel;
      if (succeeded(affine::affineParallelize(loop, {}, &parallel))) {
        if (explain)
          parallel.emitRemark() << "dl-affine-parallelize: loop runs on "
                                   "several threads (about "
                                << static_cast<int64_t>(work) << " operations)";
        return;
      }
      why = "its bounds cannot be expressed by affine.parallel";
    }
    if (explain)
      loop.emitRemark() << "dl-affine-parallelize: loop stays sequential: "
                        << why;
    SmallVector<AffineForOp> inner;
    for (Operation &op : loop.getBody()->without_terminator())
      if (auto nested = dyn_cast<AffineForOp>(op))
        inner.push_back(nested);
    for (AffineForOp nested : inner)
      choose(nested);
  }
};

} // namespace
