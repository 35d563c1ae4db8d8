//===- AffineInterchange.cpp - dl-affine-interchange ----------------------===//
//
// Reorders the loops of each perfect affine loop nest for locality. Ours:
// upstream has no interchange pass driven by a cost model (only the
// sinkSequentialLoops utility and the legality check).
//
// 1. Legality, from affine dependence analysis: the direction vector of every
//    dependence between the nest's loads and stores is computed once; a
//    permutation is legal when it keeps every permuted vector
//    lexicographically non-negative.
// 2. Cost, per loop, of placing it innermost: for every access, 0 if the loop
//    does not change the address (reuse in a register), 1 if consecutive
//    iterations stay within a cache line of the target (by the memref's static strides;
//    unit stride along the innermost dimension when they are dynamic), 8
//    otherwise (a new cache line per iteration). Permutations compare by the cost of
//    their innermost loop, then of the next one out, and so on; ties go to
//    the permutation with more parallel loops outermost, then to the
//    original order. Loops of one iteration have no say (they stay where
//    they are).
// The legal permutation of least cost is applied. When the cheapest
// permutation of all is illegal, a remark says which dependence kept it out.
// Nests with non-affine memory effects (calls, memref.store, ...) or loop
// bounds that depend on other loops of the nest are left alone.
//
// Assumes: no type whose size overflows 64 bits, every loop's step positive,
// and no loop with constant bounds that runs no iteration --
// dl::normalizeAffineLoops (AffineUtils.h) establishes this first (IR with
// an oversized type or a step of 0 or less is refused with an error); nests with constants too large to analyze are left alone
// (dl::hasAnalyzableConstants). test/Codegen/CPU/degenerate-loops*.mlir
// feed it the degenerate cases.
//
//===----------------------------------------------------------------------===//

#include "dl/Support/TypeSize.h"
#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"
#include "dl/Target/Target.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEINTERCHANGE
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using affine::AffineForOp;

namespace {

constexpr int64_t kContiguousCost = 1;
constexpr int64_t kStridedCost = 8;
constexpr unsigned kMaxDepth = 6; // 720 permutations at most

/// The innermost-placement cost of each loop of `nest` (see the header).
/// `lineBytes`: the target's cache line.
SmallVector<int64_t> innermostCosts(ArrayRef<AffineForOp> nest,
                                    int64_t lineBytes) {
  SmallVector<int64_t> costs(nest.size(), 0);
  AffineForOp innermost = nest.back();
  innermost.walk([&](Operation *op) {
    if (!isa<affine::AffineReadOpInterface, affine::AffineWriteOpInterface>(op))
      return;
    affine::MemRefAccess access(op);
    affine::AffineValueMap map;
    access.getAccessMap(&map);
    unsigned lastDim = map.getNumResults() - 1;
    for (size_t position = 0; position < nest.size(); ++position) {
      AffineForOp loop = nest[position];
      Value iv = loop.getInductionVar();
      bool varies = false;
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        varies |= map.isFunctionOf(r, iv);
      if (!varies)
        continue;
      // Contiguous: consecutive iterations stay within a cache line. With
      // static memref strides, the loop's stride in elements (summed over
      // the indices it appears in) decides: a loop whose inner loops are
      // short (the kw of a 3x3 window) still walks memory contiguously.
      // Otherwise only the last index may vary, with coefficient +-1.
      std::optional<int64_t> stride = dl::elementStride(access, map, iv);
      bool contiguous;
      if (stride) {
        auto memrefType = cast<MemRefType>(access.memref.getType());
        int64_t bytes = dl::elementBytes(memrefType.getElementType());
        contiguous = std::abs(*stride) * bytes < lineBytes;
      } else {
        contiguous = true;
        for (unsigned r = 0; r < lastDim; ++r)
          contiguous &= !map.isFunctionOf(r, iv);
        if (contiguous) {
          std::optional<int64_t> coefficient = dl::coefficientOf(map, lastDim, iv);
          contiguous = coefficient && (*coefficient == 1 || *coefficient == -1);
        }
      }
      costs[position] += contiguous ? kContiguousCost : kStridedCost;
    }
  });
  return costs;
}

/// True if `perm` (loop i goes to position perm[i]) keeps every dependence
/// vector lexicographically non-negative. Sets `blocking` to the first
/// dependence it reverses.
bool isLegal(ArrayRef<unsigned> perm,
             ArrayRef<SmallVector<affine::DependenceComponent, 2>> deps,
             int64_t *blocking) {
  unsigned depth = perm.size();
  SmallVector<unsigned> loopAt(depth);
  for (unsigned i = 0; i < depth; ++i)
    loopAt[perm[i]] = i;
  for (auto [index, dep] : llvm::enumerate(deps)) {
    for (unsigned position = 0; position < depth; ++position) {
      const affine::DependenceComponent &c = dep[loopAt[position]];
      if (c.lb && *c.lb > 0)
        break; // carried by this loop, forwards
      if (c.lb && c.ub && *c.lb == 0 && *c.ub == 0)
        continue; // not carried here
      *blocking = index;
      return false;
    }
  }
  return true;
}

/// Loops of the nest that no dependence is carried by.
SmallVector<bool> parallelLoops(
    unsigned depth, ArrayRef<SmallVector<affine::DependenceComponent, 2>> deps) {
  SmallVector<bool> parallel(depth, true);
  for (const auto &dep : deps)
    for (unsigned i = 0; i < depth; ++i)
      if (!(dep[i].lb && dep[i].ub && *dep[i].lb == 0 && *dep[i].ub == 0))
        parallel[i] = false;
  return parallel;
}

/// True if the nest can be analyzed and permuted: rectangular bounds, and
/// every memory effect in the body is an affine load or store.
bool isPermutable(ArrayRef<AffineForOp> nest) {
  if (!dl::hasRectangularBounds(nest))
    return false;
  AffineForOp innermost = nest.back();
  WalkResult result = innermost.getBody()->walk([](Operation *op) {
    if (isa<affine::AffineReadOpInterface, affine::AffineWriteOpInterface,
            AffineForOp, affine::AffineYieldOp>(op))
      return WalkResult::advance();
    if (!isMemoryEffectFree(op))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

struct DLAffineInterchangePass
    : public dl::impl::DLAffineInterchangeBase<DLAffineInterchangePass> {
  using DLAffineInterchangeBase::DLAffineInterchangeBase;

  void runOnOperation() override {
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    int64_t lineBytes = dl::TargetInfo::of(getOperation()).getCacheLineBytes();
    for (AffineForOp root : dl::outermostAffineLoops(getOperation()))
      interchange(root, lineBytes);
  }

  void interchange(AffineForOp root, int64_t lineBytes) {
    if (root->hasAttr(dl::kTransposeSquaresAttr))
      return; // dl-affine-transpose-squares chose this order
    SmallVector<AffineForOp> nest;
    affine::getPerfectlyNestedLoops(nest, root);
    if (nest.size() < 2 || nest.size() > kMaxDepth || !isPermutable(nest))
      return;
    unsigned depth = nest.size();
    std::vector<SmallVector<affine::DependenceComponent, 2>> deps;
    affine::getDependenceComponents(root, depth, &deps);
    SmallVector<int64_t> costs = innermostCosts(nest, lineBytes);
    SmallVector<bool> parallel = parallelLoops(depth, deps);

    // A loop of one iteration runs the same wherever it is: it has no say
    // in the score, so that orders differing only in where such loops are
    // tie and the original order stays (a batch or head of 1 moved inwards
    // made an elementwise nest's loops differ from the accumulation's
    // before it, whose epilogue it then could not be).
    SmallVector<bool> single(depth);
    for (unsigned i = 0; i < depth; ++i)
      single[i] = affine::getConstantTripCount(nest[i]) ==
                  std::optional<uint64_t>(1);
    // Score of a permutation: costs from the innermost position outwards,
    // then minus the number of leading parallel loops (lexicographic).
    auto score = [&](ArrayRef<unsigned> loopAt) {
      SmallVector<int64_t> key;
      for (unsigned position = depth; position-- > 0;)
        if (!single[loopAt[position]])
          key.push_back(costs[loopAt[position]]);
      int64_t leadingParallel = 0;
      for (unsigned position = 0; position < depth; ++position) {
        if (single[loopAt[position]])
          continue;
        if (!parallel[loopAt[position]])
          break;
        ++leadingParallel;
      }
      key.push_back(-leadingParallel);
      return key;
    };
    SmallVector<unsigned> loopAt = llvm::to_vector(llvm::seq<unsigned>(0, depth));
    SmallVector<unsigned> bestLegal(loopAt), bestOverall(loopAt);
    SmallVector<int64_t> bestLegalScore = score(loopAt);
    SmallVector<int64_t> bestOverallScore = bestLegalScore;
    int64_t blocking = -1;
    do {
      SmallVector<int64_t> key = score(loopAt);
      SmallVector<unsigned> perm(depth);
      for (unsigned position = 0; position < depth; ++position)
        perm[loopAt[position]] = position;
      if (key < bestOverallScore) {
        bestOverallScore = key;
        bestOverall = loopAt;
      }
      int64_t reversed = -1;
      if (key < bestLegalScore && isLegal(perm, deps, &reversed)) {
        bestLegalScore = key;
        bestLegal = loopAt;
      }
    } while (std::next_permutation(loopAt.begin(), loopAt.end()));

    if (bestOverall != bestLegal) {
      SmallVector<unsigned> perm(depth);
      for (unsigned position = 0; position < depth; ++position)
        perm[bestOverall[position]] = position;
      (void)isLegal(perm, deps, &blocking);
      root.emitRemark() << "dl-affine-interchange: the cheapest loop order ("
                        << formatOrder(bestOverall)
                        << ") would reverse a dependence (direction "
                        << formatDependence(deps[blocking]) << "); using ("
                        << formatOrder(bestLegal) << ")";
    }
    if (bestLegal == llvm::to_vector(llvm::seq<unsigned>(0, depth)))
      return;
    SmallVector<unsigned> perm(depth);
    for (unsigned position = 0; position < depth; ++position)
      perm[bestLegal[position]] = position;
    // The nest's strategy (dl-linalg-to-affine-loops put it on the
    // outermost loop) stays on the outermost loop.
    Attribute strategy = root->getAttr(dl::kStrategyAttrName);
    unsigned outermost = affine::permuteLoops(nest, perm);
    if (strategy) {
      root->removeAttr(dl::kStrategyAttrName);
      nest[outermost]->setAttr(dl::kStrategyAttrName, strategy);
    }
  }

  static std::string formatOrder(ArrayRef<unsigned> loopAt) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::interleaveComma(loopAt, os, [&](unsigned loop) { os << "d" << loop; });
    return text;
  }

  static std::string
  formatDependence(ArrayRef<affine::DependenceComponent> components) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "(";
    llvm::interleaveComma(components, os, [&](const affine::DependenceComponent &c) {
      if (c.lb && c.ub && *c.lb == *c.ub) {
        os << *c.lb;
        return;
      }
      os << "[" << (c.lb ? std::to_string(*c.lb) : "-inf") << ", "
         << (c.ub ? std::to_string(*c.ub) : "inf") << "]";
    });
    os << ")";
    return text;
  }
};

} // namespace
