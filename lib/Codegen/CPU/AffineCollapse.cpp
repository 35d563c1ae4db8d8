//===- AffineCollapse.cpp - dl-affine-collapse ----------------------------===//
//
// Merges the loops of a nest that walks contiguous memory into one loop.
//
// linalg's fills, copies and elementwise ops lower to one loop per
// dimension. Where the innermost dimension is short and odd (a window's 49
// tokens in Swin-T, ViT's 197), each row is vectorized with its own scalar
// remainder, and LLVM fully unrolls the short rows and then the loops around
// them: one fill of [4, 12, 49, 49] became a block of 4,116 stores that
// LLVM's two instruction schedulers took 4 s over, a third of Swin-T's
// whole LLVM time. Merged, the same fill is one loop over 115,248 elements:
// vectorized with one remainder, and too long to unroll.
//
// The rewrite: a loop of a perfect nest and the loop around it (both from
// 0, step 1, constant bounds, no iter_args) become one loop over the
// product of their trip counts, when every access under them (affine
// loads and stores, in nested loops too) is either independent of both
// loops or indexed by exactly the outer loop and then the inner loop in two
// adjacent dimensions of its memref, the memref contiguous across them
// (strides static, the outer one the inner one times the inner size) and
// the inner loop covering the inner dimension. Those accesses read and write a
// memref.collapse_shape of their memref (made before the nest) at the new
// loop's index; the iterations run in the same order as before, so no
// dependence can change and no analysis is needed. Pairs are tried from the
// innermost outwards: where the innermost pair may not merge (x[n, h, w, c]
// * scale[n, c], EfficientNet's squeeze-excitation: the scale is read by
// the channel loop alone), h and w still do (LLVM had fully unrolled 14
// columns of 60 vectors each).
//
// Left alone: nests whose loop indices are used other than as those two
// access dimensions (linalg.index, an index stored as a value, a nested
// loop's bound), with ops with regions other than loops, vector accesses
// (the register tiles) or other ops touching memrefs, and nests accessing
// one memref both through and independently of the two loops (affine dependence analysis compares accesses to the same memref
// value: a collapsed view and its source would look independent).
//
// Where it runs: after dl-affine-register-tile (whose epilogue fusion
// and fill detection read the elementwise nests dimension by dimension) and
// before dl-affine-vectorize.
//
// Ours: upstream's affine-loop-coalescing merges loops with floordiv/mod
// indices (the accesses stay multi-dimensional, and neither vectorizer nor
// LLVM simplifies them back), and linalg's collapseOpIterationDims works on
// linalg ops, before the register tiles that must still see the
// elementwise ops' dimensions.
//
// Assumes: no type whose size overflows 64 bits, every loop's step positive,
// and no loop with constant bounds that runs no iteration --
// dl::normalizeAffineLoops (AffineUtils.h) establishes this first; nests
// with constants too large to analyze are left alone
// (dl::hasAnalyzableConstants).
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINECOLLAPSE
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// The largest merged trip count (dl's loop passes analyze constants under
/// 2^32; hasAnalyzableConstants).
constexpr int64_t kMaxTrips = int64_t(1) << 31;

/// Where an access indexes with `iv`.
constexpr int64_t kAbsent = -1; // in no dimension
constexpr int64_t kOther = -2;  // other than as one whole dimension

/// The dimension of the access (its map and operands) that is exactly the
/// dimension operand `iv`, kAbsent if `iv` is in none, kOther otherwise
/// (in an expression, in two dimensions, as a symbol).
int64_t indexedAt(AffineMap map, ValueRange operands, Value iv) {
  int64_t found = kAbsent;
  for (auto [position, operand] : llvm::enumerate(operands)) {
    if (operand != iv)
      continue;
    if (position >= map.getNumDims())
      return kOther;
    AffineExpr self = getAffineDimExpr(position, map.getContext());
    for (auto [r, result] : llvm::enumerate(map.getResults())) {
      if (result == self) {
        if (found != kAbsent)
          return kOther;
        found = static_cast<int64_t>(r);
      } else if (result.isFunctionOfDim(position)) {
        return kOther;
      }
    }
  }
  return found;
}

struct Access {
  Operation *op;
  Value memref;
  AffineMap map;
  SmallVector<Value> operands;
};

std::optional<Access> accessOf(Operation *op) {
  if (auto load = dyn_cast<affine::AffineLoadOp>(op))
    return Access{op, load.getMemRef(), load.getAffineMap(),
                  llvm::to_vector(load.getMapOperands())};
  if (auto store = dyn_cast<affine::AffineStoreOp>(op))
    return Access{op, store.getMemRef(), store.getAffineMap(),
                  llvm::to_vector(store.getMapOperands())};
  return std::nullopt;
}

/// The trip count of `loop` if it runs from 0 by 1 to a constant, carries
/// nothing and has no attributes of other passes.
std::optional<int64_t> simpleTrips(affine::AffineForOp loop) {
  if (!loop.hasConstantBounds() || loop.getConstantLowerBound() != 0 ||
      loop.getStepAsInt() != 1 || loop.getNumResults() != 0 ||
      !loop->getDiscardableAttrDictionary().empty())
    return std::nullopt;
  int64_t trips = loop.getConstantUpperBound();
  if (trips <= 0 || trips >= kMaxTrips)
    return std::nullopt;
  return trips;
}

/// The reassociation that merges dimensions `r` and `r + 1` of `rank`.
SmallVector<ReassociationIndices> pairGroups(int64_t rank, int64_t r) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == r + 1)
      groups.back().push_back(d);
    else
      groups.push_back({d});
  }
  return groups;
}

/// Whether dimensions `r` and `r + 1` of `type` are static where they must
/// be and contiguous: `r + 1` of size `innerTrips`, and the stride of `r`
/// that of `r + 1` times its size.
bool contiguousPair(MemRefType type, int64_t r, int64_t innerTrips) {
  if (r + 1 >= type.getRank() || type.getDimSize(r + 1) != innerTrips)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(strides[r]) || ShapedType::isDynamic(strides[r + 1]) ||
      strides[r] != strides[r + 1] * innerTrips)
    return false;
  return memref::CollapseShapeOp::isGuaranteedCollapsible(
      type, pairGroups(type.getRank(), r));
}

/// The accesses of `inner`'s body to rewrite (with the dimension the outer
/// loop indexes), if `outer` and `inner` (its only op) may be merged.
std::optional<SmallVector<std::pair<Access, int64_t>>>
mergeable(affine::AffineForOp outer, affine::AffineForOp inner, Operation *root) {
  std::optional<int64_t> innerTrips = simpleTrips(inner);
  if (!simpleTrips(outer) || !innerTrips ||
      *simpleTrips(outer) * *innerTrips >= kMaxTrips)
    return std::nullopt;
  Value outerIv = outer.getInductionVar(), innerIv = inner.getInductionVar();
  SmallVector<std::pair<Access, int64_t>> rewritten;
  // Per memref: the dimension the outer loop indexes, or kAbsent.
  DenseMap<Value, int64_t> dimensionOf;
  unsigned indexUses = 0;
  // Every op under `inner`, nested loops' bodies included.
  SmallVector<Operation *> ops;
  bool other = false;
  inner.getBody()->walk([&](Operation *op) {
    if (op->getNumRegions() != 0 && !isa<affine::AffineForOp>(op))
      other = true;
    ops.push_back(op);
  });
  if (other)
    return std::nullopt;
  for (Operation *op : ops) {
    std::optional<Access> access = accessOf(op);
    if (!access) {
      for (Value operand : op->getOperands())
        if (operand == outerIv || operand == innerIv ||
            isa<BaseMemRefType>(operand.getType()))
          return std::nullopt;
      continue;
    }
    int64_t at = indexedAt(access->map, access->operands, outerIv);
    int64_t innerAt = indexedAt(access->map, access->operands, innerIv);
    if (at == kOther || innerAt == kOther)
      return std::nullopt;
    if (at == kAbsent && innerAt != kAbsent)
      return std::nullopt;
    if (at != kAbsent) {
      if (innerAt != at + 1 ||
          !contiguousPair(cast<MemRefType>(access->memref.getType()), at,
                          *innerTrips))
        return std::nullopt;
      // The collapsed view is made before the nest.
      Operation *def = access->memref.getDefiningOp();
      if (def && root->isAncestor(def))
        return std::nullopt;
      if (auto argument = dyn_cast<BlockArgument>(access->memref))
        if (root->isAncestor(argument.getOwner()->getParentOp()))
          return std::nullopt;
      rewritten.push_back({*access, at});
    }
    auto [entry, inserted] = dimensionOf.try_emplace(access->memref, at);
    if (!inserted && entry->second != at)
      return std::nullopt;
    for (Value operand : access->operands)
      indexUses += operand == outerIv || operand == innerIv;
  }
  // No use of either index but as those access dimensions (a stored value,
  // a bound of something).
  unsigned uses = 0;
  for (Value iv : {outerIv, innerIv})
    uses += std::distance(iv.use_begin(), iv.use_end());
  if (uses != indexUses)
    return std::nullopt;
  return rewritten;
}

/// Merges `outer` and `inner` into one loop (see the file comment); the
/// collapsed views go before `root` (the nest's outermost loop), cached in
/// `views`. Returns the new loop.
affine::AffineForOp merge(affine::AffineForOp outer, affine::AffineForOp inner,
                          ArrayRef<std::pair<Access, int64_t>> accesses,
                          Operation *root,
                          DenseMap<std::pair<Value, int64_t>, Value> &views) {
  // The views first: `root` may be `outer`, before which the loop goes.
  for (auto [access, r] : accesses) {
    Value &view = views[{access.memref, r}];
    if (view)
      continue;
    OpBuilder before(root);
    view = memref::CollapseShapeOp::create(
        before, access.memref.getLoc(), access.memref,
        pairGroups(cast<MemRefType>(access.memref.getType()).getRank(), r));
  }
  int64_t trips = *simpleTrips(outer) * *simpleTrips(inner);
  OpBuilder b(outer);
  auto merged = affine::AffineForOp::create(b, outer.getLoc(), 0, trips, 1);
  Block *body = merged.getBody();
  body->getOperations().splice(Block::iterator(body->getTerminator()),
                               inner.getBody()->getOperations(),
                               inner.getBody()->begin(),
                               std::prev(inner.getBody()->end()));
  Value index = merged.getInductionVar();
  for (auto [access, r] : accesses) {
    Value view = views.lookup({access.memref, r});
    SmallVector<AffineExpr> results(access.map.getResults());
    results.erase(results.begin() + r + 1);
    AffineMap map = AffineMap::get(access.map.getNumDims(),
                                   access.map.getNumSymbols(), results,
                                   access.map.getContext());
    SmallVector<Value> operands = access.operands;
    for (Value &operand : operands)
      if (operand == outer.getInductionVar() ||
          operand == inner.getInductionVar())
        operand = index;
    affine::canonicalizeMapAndOperands(&map, &operands);
    OpBuilder at(access.op);
    if (auto load = dyn_cast<affine::AffineLoadOp>(access.op)) {
      auto replacement =
          affine::AffineLoadOp::create(at, load.getLoc(), view, map, operands);
      load.replaceAllUsesWith(replacement.getResult());
    } else {
      auto store = cast<affine::AffineStoreOp>(access.op);
      affine::AffineStoreOp::create(at, store.getLoc(), store.getValueToStore(),
                                    view, map, operands);
    }
    access.op->erase();
  }
  outer.erase();
  return merged;
}

struct DLAffineCollapsePass
    : public dl::impl::DLAffineCollapseBase<DLAffineCollapsePass> {
  using DLAffineCollapseBase::DLAffineCollapseBase;

  void runOnOperation() override {
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    for (affine::AffineForOp root : dl::outermostAffineLoops(getOperation())) {
      // Each nest's views, made before it.
      DenseMap<std::pair<Value, int64_t>, Value> views;
      SmallVector<affine::AffineForOp> band;
      affine::getPerfectlyNestedLoops(band, root);
      Operation *outermost = root;
      // Pairs from the innermost outwards; a pair that may not merge (a
      // per-channel scale read by the channel loop only) leaves the pairs
      // around it to try (the rows and columns of the image).
      for (size_t i = band.size() - 1; i >= 1; --i) {
        affine::AffineForOp inner = band[i], outer = band[i - 1];
        auto accesses = mergeable(outer, inner, outermost);
        if (!accesses)
          continue;
        bool wasRoot = outer.getOperation() == outermost;
        affine::AffineForOp merged =
            merge(outer, inner, *accesses, outermost, views);
        if (wasRoot)
          outermost = merged;
        band[i - 1] = merged;
        band.erase(band.begin() + i);
      }
    }
  }
};

} // namespace
