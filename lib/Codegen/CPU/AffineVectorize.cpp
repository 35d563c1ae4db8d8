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
// Nor are loops along which some access is strided (upstream would gather
// and scatter), loops whose induction variable bounds a nested loop, or loops with a static trip count the width does not divide (see
// vectorizesWithoutStaticTail): LLVM vectorizes those itself. Everything
// else (which loop of a nest to vectorize, contiguity, reductions carried in
// iter_args) is upstream's logic.
//
// Afterwards, each contiguous transfer along a vectorized loop without a
// tail (so every lane was accessed by the scalar loop, in bounds) becomes an affine.vector_load / affine.vector_store: no mask at run time,
// and dependence analysis (dl-affine-parallelize) sees the access.
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

#include "mlir/Analysis/FlatLinearValueConstraints.h"

#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <map>

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEVECTORIZE
#include "dl/Codegen/CPU/Passes.h.inc"
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

/// The vectorized loop an index walks: among the loops whose induction
/// variables `index` is computed from (directly or by one affine.apply), the
/// one stepping by `lanes`, if exactly one does.
affine::AffineForOp vectorizedLoop(Value index, int64_t lanes) {
  SmallVector<Value> sources{index};
  if (auto apply = index.getDefiningOp<affine::AffineApplyOp>())
    sources.assign(apply.getMapOperands().begin(), apply.getMapOperands().end());
  affine::AffineForOp found;
  for (Value source : sources) {
    affine::AffineForOp loop = affine::getForInductionVarOwner(source);
    if (!loop || loop.getStepAsInt() != lanes)
      continue;
    if (found)
      return {};
    found = loop;
  }
  return found;
}

/// Rewrites `transfer` as an affine vector access if it is a contiguous 1-d
/// transfer without mask along a vectorized loop with constant bounds whose
/// trip count the vector length divides. Every element of every vector was
/// then accessed by the scalar loop before vectorization, so the vectors stay
/// inside the memref wherever the original accesses did.
template <typename TransferOp>
void promoteInBounds(TransferOp transfer) {
  auto memrefType = dyn_cast<MemRefType>(transfer.getBase().getType());
  VectorType vectorType = transfer.getVectorType();
  if (!memrefType || transfer.getMask() || vectorType.getRank() != 1 ||
      !transfer.getPermutationMap().isMinorIdentity())
    return;
  ValueRange indices = transfer.getIndices();
  for (Value index : indices)
    if (!affine::isValidDim(index))
      return;
  int64_t lanes = vectorType.getDimSize(0);
  affine::AffineForOp loop = vectorizedLoop(indices.back(), lanes);
  if (!loop || !loop.hasConstantBounds() || !loop->isProperAncestor(transfer) ||
      (loop.getConstantUpperBound() - loop.getConstantLowerBound()) % lanes)
    return;
  OpBuilder b(transfer);
  AffineMap identity = b.getMultiDimIdentityMap(indices.size());
  if constexpr (std::is_same_v<TransferOp, vector::TransferReadOp>) {
    Value load = affine::AffineVectorLoadOp::create(
        b, transfer.getLoc(), vectorType, transfer.getBase(), identity,
        indices);
    transfer.replaceAllUsesWith(load);
  } else {
    affine::AffineVectorStoreOp::create(b, transfer.getLoc(),
                                        transfer.getValueToStore(),
                                        transfer.getBase(), identity, indices);
  }
  transfer.erase();
}

/// True if every access in `loop` is to a memref without layout map and
/// either does not depend on its induction variable or walks the memref's
/// last dimension with unit stride: only those vectorize into plain vector
/// loads and stores. (Upstream would also
/// vectorize along another dimension, with strided gathers and scatters.)
bool accessesAreContiguous(affine::AffineForOp loop) {
  Value iv = loop.getInductionVar();
  WalkResult result = loop.walk([&](Operation *op) {
    if (!isa<affine::AffineReadOpInterface, affine::AffineWriteOpInterface>(op))
      return WalkResult::advance();
    affine::MemRefAccess access(op);
    // Upstream's vectorizer cannot vectorize accesses to memrefs with a
    // layout (it reports "NYI: non-trivial layout map" as an error).
    auto memrefType = dyn_cast<MemRefType>(access.memref.getType());
    if (!memrefType || !memrefType.getLayout().isIdentity())
      return WalkResult::interrupt();
    affine::AffineValueMap map;
    access.getAccessMap(&map);
    unsigned rank = map.getNumResults();
    for (unsigned r = 0; r < rank; ++r) {
      if (!map.isFunctionOf(r, iv))
        continue;
      if (r + 1 != rank)
        return WalkResult::interrupt();
      AffineMap affineMap = map.getAffineMap();
      SmallVector<int64_t> flat;
      if (failed(getFlattenedAffineExpr(affineMap.getResult(r),
                                        affineMap.getNumDims(),
                                        affineMap.getNumSymbols(), &flat)))
        return WalkResult::interrupt();
      int64_t coefficient = 0;
      for (unsigned operand = 0; operand < map.getNumOperands(); ++operand)
        if (map.getOperand(operand) == iv)
          coefficient += flat[operand];
      if (coefficient != 1)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Whether a loop nested in `loop` has bounds computed from `loop`'s
/// induction variable (directly or through an affine.apply): a triangular
/// nest, or `0 to (j mod 7 + 32)` (found by tools/fuzz/dlopt_fuzz.py). The
/// vectorizer would need those bounds per lane; upstream's erased the
/// nest's ops while the bounds still used them (an assertion, or a crash
/// without assertions).
bool boundsNestedLoops(affine::AffineForOp loop) {
  Value iv = loop.getInductionVar();
  auto fromIv = [&](Value operand) {
    if (operand == iv)
      return true;
    auto apply = operand.getDefiningOp<affine::AffineApplyOp>();
    return apply && llvm::is_contained(apply.getMapOperands(), iv);
  };
  WalkResult result = loop.getBody()->walk([&](affine::AffineForOp nested) {
    return llvm::any_of(nested.getLowerBoundOperands(), fromIv) ||
                   llvm::any_of(nested.getUpperBoundOperands(), fromIv)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Whether `loop` already computes on vectors (a micro-kernel built by
/// dl-affine-register-tile): nothing left to vectorize.
bool hasVectorCode(affine::AffineForOp loop) {
  WalkResult result = loop.walk([](Operation *op) {
    bool vector = llvm::any_of(op->getResultTypes(),
                               [](Type t) { return isa<VectorType>(t); });
    return vector ? WalkResult::interrupt() : WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Lanes for `loop` on a target of `vectorBits`-bit registers: the elements
/// of the widest type the loop loads or stores in one register, halved
/// until they divide a static trip count.
int64_t fullLanesFor(affine::AffineForOp loop, int64_t vectorBits);

int64_t lanesFor(affine::AffineForOp loop, int64_t vectorBits) {
  int64_t lanes = fullLanesFor(loop, vectorBits);
  if (std::optional<uint64_t> trips = affine::getConstantTripCount(loop))
    while (lanes > 1 && *trips % lanes != 0)
      lanes /= 2;
  return lanes;
}

/// Whether `loop` (from 0, step 1, T iterations) is better vectorized by
/// `lanes` over its first T - T % lanes iterations, the rest a loop of its
/// own: when halving the lanes until they divide T would lose half of them
/// or more (T = 1500: 4 lanes instead of 16 with AVX-512, instead of 8 with
/// AVX2, where a softmax's exponentials over 1500 keys ran on 128-bit
/// vectors; ViT's 197: none, and LLVM vectorizes no float reduction) and
/// the whole vectors do most of the work.
bool worthPeeling(affine::AffineForOp loop, int64_t lanes) {
  std::optional<uint64_t> trips = affine::getConstantTripCount(loop);
  if (!trips || lanes < 2 || !loop.hasConstantLowerBound() ||
      loop.getConstantLowerBound() != 0 || loop.getStepAsInt() != 1 ||
      *trips % lanes == 0 || *trips < 4 * static_cast<uint64_t>(lanes))
    return false;
  int64_t halved = lanes;
  while (halved > 1 && *trips % halved != 0)
    halved /= 2;
  return halved * 2 <= lanes;
}

/// Splits `loop` (from 0, step 1) at the last multiple of `lanes`: the loop
/// keeps the whole vectors, a copy after it runs the rest, starting from the
/// values the first carries (iter_args).
void peel(affine::AffineForOp loop, int64_t lanes) {
  int64_t trips = static_cast<int64_t>(*affine::getConstantTripCount(loop));
  int64_t split = trips - trips % lanes;
  OpBuilder b(loop->getContext());
  b.setInsertionPointAfter(loop);
  auto rest = cast<affine::AffineForOp>(b.clone(*loop.getOperation()));
  rest.setLowerBound({}, b.getConstantAffineMap(split));
  loop.setUpperBound({}, b.getConstantAffineMap(split));
  if (loop.getNumResults() == 0)
    return;
  loop->replaceAllUsesWith(rest->getResults());
  rest.getInitsMutable().assign(loop.getResults());
}

int64_t fullLanesFor(affine::AffineForOp loop, int64_t vectorBits) {
  int64_t widest = 8;
  loop.walk([&](Operation *op) {
    if (!isa<affine::AffineReadOpInterface, affine::AffineWriteOpInterface>(op))
      return;
    Type element = affine::MemRefAccess(op).memref.getType();
    element = cast<MemRefType>(element).getElementType();
    if (element.isIntOrFloat())
      widest = std::max<int64_t>(widest, element.getIntOrFloatBitWidth());
    else
      widest = std::max<int64_t>(widest, 64); // index
  });
  return std::max<int64_t>(vectorBits / widest, 1);
}

struct DLAffineVectorizePass
    : public dl::impl::DLAffineVectorizeBase<DLAffineVectorizePass> {
  using DLAffineVectorizeBase::DLAffineVectorizeBase;

  void runOnOperation() override {
    if (vectorWidth < 0) {
      getOperation().emitError()
          << "dl-affine-vectorize: vector-width must not be negative, but got "
          << static_cast<int64_t>(vectorWidth);
      return signalPassFailure();
    }
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    dl::TargetInfo target = dl::TargetInfo::of(getOperation());
    // Candidates by their number of lanes.
    std::map<int64_t, DenseSet<Operation *>> candidates;
    affine::ReductionLoopMap reductionLoops;
    DenseSet<Operation *> all;
    SmallVector<std::pair<affine::AffineForOp, int64_t>> toPeel;
    getOperation().walk<WalkOrder::PreOrder>([&](affine::AffineForOp loop) {
      // The cheap structural checks first: dependence analysis
      // (isLoopParallel) is quadratic in the accesses, and the loops of a
      // register-tiled micro-kernel, already vectors, have hundreds.
      // hasAnalyzableConstants before accessesAreContiguous, which
      // flattens the access maps (a `floordiv 0` does not flatten).
      if (hasVectorCode(loop) || hasInvariantStore(loop) ||
          boundsNestedLoops(loop) || !dl::hasAnalyzableConstants(loop) ||
          !accessesAreContiguous(loop))
        return;
      int64_t lanes = vectorWidth > 0
                          ? static_cast<int64_t>(vectorWidth)
                          : lanesFor(loop, target.getVectorBits());
      int64_t full = vectorWidth > 0 ? lanes
                                     : fullLanesFor(loop, target.getVectorBits());
      bool peeled = worthPeeling(loop, full);
      if (peeled)
        lanes = full;
      else if (lanes < 2 || !vectorizesWithoutStaticTail(loop, lanes))
        return;
      SmallVector<affine::LoopReduction, 2> reductions;
      if (!affine::isLoopParallel(loop, &reductions))
        return;
      // A candidate inside another with other lanes would be erased with
      // it before its turn: the outer one only.
      for (Operation *outer = loop->getParentOp(); outer;
           outer = outer->getParentOp())
        if (all.contains(outer) && !candidates[lanes].contains(outer))
          return;
      if (peeled)
        toPeel.push_back({loop, lanes});
      candidates[lanes].insert(loop);
      all.insert(loop);
      if (!reductions.empty())
        reductionLoops[loop] = reductions;
    });
    // The remainder loops are not candidates: left scalar (for LLVM).
    for (auto [loop, lanes] : toPeel)
      peel(loop, lanes);
    for (auto &[lanes, loops] : candidates)
      if (!loops.empty())
        affine::vectorizeAffineLoops(getOperation(), loops, {lanes},
                                   /*fastestVaryingPattern=*/{},
                                   reductionLoops);
    SmallVector<vector::TransferReadOp> reads;
    SmallVector<vector::TransferWriteOp> writes;
    getOperation().walk([&](Operation *op) {
      if (auto read = dyn_cast<vector::TransferReadOp>(op))
        reads.push_back(read);
      else if (auto write = dyn_cast<vector::TransferWriteOp>(op))
        writes.push_back(write);
    });
    for (vector::TransferReadOp read : reads)
      promoteInBounds(read);
    for (vector::TransferWriteOp write : writes)
      promoteInBounds(write);
  }
};

} // namespace
