//===- AffineTransposeSquares.cpp - dl-affine-transpose-squares -----------===//
//
// A transpose (the affine nest `convert-linalg-to-affine-loops` makes of a
// linalg.transpose: one load, one store of the loaded value, both indexed by
// a permutation of the loops, each index possibly a constant away from its
// loop: a slice of a larger buffer) whose input and output are contiguous along
// different loops cannot be vectorized along either: one side is strided,
// and dl-affine-vectorize leaves it scalar. An NCHW <-> NHWC conversion of a
// 64x32x10x10 gradient cost 8% of the digits CNN's training step that way.
//
// Here such a nest is rewritten to copy lanes x lanes squares: `lanes`
// vector loads along the input's contiguous loop `a` (one per value of the
// output's contiguous loop `b`), one vector.transpose in registers (lowered
// to shuffles chosen for the target by dl-lower-vector-transpose), `lanes`
// vector stores along `b`:
//
//   for the other loops (in the output's order):
//     for b0 in [0, Db - Db % lanes) step lanes:
//       for a0 in [0, Da - Da % lanes) step lanes:
//         square[r] = in[.., a0 : a0 + lanes, .., b0 + r]       r < lanes
//         out[.., a0 + r, .., b0 : b0 + lanes] = transpose(square)[r]
//     the edges (b past the last square; a past it) copied by scalar loops
//
// `lanes` is the target's vector register width in elements, halved while
// it exceeds either trip count; nests where it would fall under 4, or whose
// memrefs are not contiguous along their last dimension, are left alone.
// The outermost loop gets `dl.transpose_squares`, which dl-affine-interchange
// and dl-affine-tile respect (a square writes and reads whole vectors: the
// cache tiles those passes would add are what the squares already are).
//
// Ours: upstream vectorizes a transpose by tiling linalg.transpose and
// vectorizing the tiles (IREE does so) on tensors; dlc lowers linalg to
// affine loops on buffers, where upstream's super-vectorizer would gather
// or scatter.
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
#include "dl/IR/DLAttrs.h"
#include "dl/Target/Target.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/LoopUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINETRANSPOSESQUARES
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using affine::AffineForOp;

namespace {

/// The dimension `index` is (`d`), or is a constant away from (`d + c`: a
/// slice of a larger buffer, Swin-T's K read from its fused QKV).
std::optional<unsigned> dimensionOf(AffineExpr index) {
  if (auto dim = dyn_cast<AffineDimExpr>(index))
    return dim.getPosition();
  auto sum = dyn_cast<AffineBinaryOpExpr>(index);
  if (!sum || sum.getKind() != AffineExprKind::Add ||
      !isa<AffineConstantExpr>(sum.getRHS()))
    return std::nullopt;
  if (auto dim = dyn_cast<AffineDimExpr>(sum.getLHS()))
    return dim.getPosition();
  return std::nullopt;
}

/// The loop (of `nest`) whose induction variable is the last index of an
/// access through `map` and `operands`, when every index of it is one of
/// the nest's induction variables (each once), or one plus a constant;
/// null otherwise.
AffineForOp lastIndexLoop(AffineMap map, ValueRange operands,
                          ArrayRef<AffineForOp> nest) {
  if (map.getNumSymbols() != 0 || map.getNumResults() != nest.size())
    return AffineForOp();
  llvm::SmallDenseSet<Value> seen;
  AffineForOp last;
  for (AffineExpr result : map.getResults()) {
    std::optional<unsigned> dim = dimensionOf(result);
    if (!dim)
      return AffineForOp();
    Value iv = operands[*dim];
    auto it = llvm::find_if(nest, [&](AffineForOp l) { return l.getInductionVar() == iv; });
    if (it == nest.end() || !seen.insert(iv).second)
      return AffineForOp();
    last = *it;
  }
  return last;
}

/// Whether `type` is laid out with unit stride along its last dimension.
bool contiguousLast(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() || failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return !strides.empty() && strides.back() == 1;
}

struct DLAffineTransposeSquaresPass
    : public dl::impl::DLAffineTransposeSquaresBase<DLAffineTransposeSquaresPass> {
  using DLAffineTransposeSquaresBase::DLAffineTransposeSquaresBase;

  void runOnOperation() override {
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    dl::TargetInfo target = dl::TargetInfo::of(getOperation());
    SmallVector<AffineForOp> roots;
    getOperation().walk([&](AffineForOp loop) {
      if (!loop->getParentOfType<AffineForOp>())
        roots.push_back(loop);
    });
    for (AffineForOp root : roots)
      rewrite(root, target);
  }

  void rewrite(AffineForOp root, const dl::TargetInfo &target) {
    SmallVector<AffineForOp> nest;
    affine::getPerfectlyNestedLoops(nest, root);
    AffineForOp innermost = nest.back();
    // The body: a load, a store of it, the yield.
    Block *body = innermost.getBody();
    if (body->getOperations().size() != 3)
      return;
    auto load = dyn_cast<affine::AffineLoadOp>(&body->front());
    auto store = dyn_cast<affine::AffineStoreOp>(*std::next(body->begin()));
    if (!load || !store || store.getValueToStore() != load.getResult())
      return;
    for (AffineForOp loop : nest)
      if (!loop.hasConstantBounds() || loop.getConstantLowerBound() != 0 ||
          loop.getStepAsInt() != 1 || loop.getNumIterOperands() != 0)
        return;
    auto inType = cast<MemRefType>(load.getMemRef().getType());
    auto outType = cast<MemRefType>(store.getMemRef().getType());
    Type element = inType.getElementType();
    if (!element.isIntOrFloat() || !contiguousLast(inType) ||
        !contiguousLast(outType))
      return;
    AffineForOp a = lastIndexLoop(load.getAffineMap(),
                                  load.getMapOperands(), nest);
    AffineForOp b = lastIndexLoop(store.getAffineMap(),
                                  store.getMapOperands(), nest);
    if (!a || !b || a == b)
      return;
    int64_t da = a.getConstantUpperBound(), db = b.getConstantUpperBound();
    int64_t lanes = target.getLanes(element);
    while (lanes > da || lanes > db)
      lanes /= 2;
    if (lanes < 4)
      return;

    MLIRContext *ctx = root.getContext();
    Location loc = root.getLoc();
    IRMapping mapping;
    AffineExpr d0 = getAffineDimExpr(0, ctx);
    auto plus = [&](OpBuilder &at, Value index, int64_t constant) -> Value {
      if (constant == 0)
        return index;
      return affine::AffineApplyOp::create(at, loc, AffineMap::get(1, 0, d0 + constant),
                                           ValueRange{index});
    };
    auto mapped = [&](ValueRange operands, const IRMapping &m) {
      SmallVector<Value> result;
      for (Value v : operands)
        result.push_back(m.lookupOrDefault(v));
      return result;
    };
    // The other loops, in the output's order.
    AffineForOp outermost;
    OpBuilder inner(root);
    for (AffineExpr result : store.getAffineMap().getResults()) {
      Value iv = store.getMapOperands()[*dimensionOf(result)];
      if (iv == a.getInductionVar() || iv == b.getInductionVar())
        continue;
      auto original = *llvm::find_if(nest, [&](AffineForOp l) {
        return l.getInductionVar() == iv;
      });
      auto loop = AffineForOp::create(inner, loc, 0, original.getConstantUpperBound());
      if (!outermost)
        outermost = loop;
      mapping.map(iv, loop.getInductionVar());
      inner.setInsertionPointToStart(loop.getBody());
    }
    int64_t fullA = da - da % lanes, fullB = db - db % lanes;
    Value av = a.getInductionVar(), bv = b.getInductionVar();
    // The squares.
    {
      OpBuilder s = inner;
      auto bLoop = AffineForOp::create(s, loc, 0, fullB, lanes);
      if (!outermost)
        outermost = bLoop;
      s.setInsertionPointToStart(bLoop.getBody());
      auto aLoop = AffineForOp::create(s, loc, 0, fullA, lanes);
      s.setInsertionPointToStart(aLoop.getBody());
      auto rowType = VectorType::get({lanes}, element);
      SmallVector<Value> rows;
      for (int64_t r = 0; r < lanes; ++r) {
        IRMapping m = mapping;
        m.map(av, aLoop.getInductionVar());
        m.map(bv, plus(s, bLoop.getInductionVar(), r));
        rows.push_back(affine::AffineVectorLoadOp::create(
            s, loc, rowType, load.getMemRef(), load.getAffineMap(),
            mapped(load.getMapOperands(), m)));
      }
      // The rows side by side in one vector (shuffles concatenating pairs),
      // viewed as a square: built from vector.insert ops, the canonicalizer
      // would turn the square and its transpose into per-element
      // from_elements (scalar code).
      while (rows.size() > 1) {
        SmallVector<Value> pairs;
        for (size_t i = 0; i < rows.size(); i += 2) {
          int64_t width = cast<VectorType>(rows[i].getType()).getNumElements();
          pairs.push_back(vector::ShuffleOp::create(
              s, loc, rows[i], rows[i + 1],
              llvm::to_vector(llvm::seq<int64_t>(0, 2 * width))));
        }
        rows = std::move(pairs);
      }
      auto squareType = VectorType::get({lanes, lanes}, element);
      auto flatType = VectorType::get({lanes * lanes}, element);
      Value square = vector::ShapeCastOp::create(s, loc, squareType, rows.front());
      Value flipped = vector::TransposeOp::create(s, loc, square,
                                                  ArrayRef<int64_t>{1, 0});
      Value flat = vector::ShapeCastOp::create(s, loc, flatType, flipped);
      for (int64_t r = 0; r < lanes; ++r) {
        IRMapping m = mapping;
        m.map(av, plus(s, aLoop.getInductionVar(), r));
        m.map(bv, bLoop.getInductionVar());
        Value row = vector::ExtractStridedSliceOp::create(
            s, loc, flat, ArrayRef<int64_t>{r * lanes}, ArrayRef<int64_t>{lanes},
            ArrayRef<int64_t>{1});
        affine::AffineVectorStoreOp::create(s, loc, row, store.getMemRef(),
                                            store.getAffineMap(),
                                            mapped(store.getMapOperands(), m));
      }
    }
    // The edges: b past the last square (every a), then a past it.
    auto scalarCopy = [&](int64_t b0, int64_t b1, int64_t a0, int64_t a1) {
      if (b0 >= b1 || a0 >= a1)
        return;
      OpBuilder s = inner;
      auto bLoop = AffineForOp::create(s, loc, b0, b1);
      s.setInsertionPointToStart(bLoop.getBody());
      auto aLoop = AffineForOp::create(s, loc, a0, a1);
      s.setInsertionPointToStart(aLoop.getBody());
      IRMapping m = mapping;
      m.map(av, aLoop.getInductionVar());
      m.map(bv, bLoop.getInductionVar());
      Value value = affine::AffineLoadOp::create(s, loc, load.getMemRef(),
                                                 load.getAffineMap(),
                                                 mapped(load.getMapOperands(), m));
      affine::AffineStoreOp::create(s, loc, value, store.getMemRef(),
                                    store.getAffineMap(),
                                    mapped(store.getMapOperands(), m));
    };
    scalarCopy(fullB, db, 0, da);
    scalarCopy(0, fullB, fullA, da);
    outermost->setAttr(dl::kTransposeSquaresAttr, UnitAttr::get(ctx));
    // Keep the strategy the nest carried (dl-linalg-to-affine-loops puts it
    // on the outermost loop).
    if (Attribute strategy = root->getAttr(dl::kStrategyAttrName))
      outermost->setAttr(dl::kStrategyAttrName, strategy);
    root.erase();
  }
};

} // namespace
