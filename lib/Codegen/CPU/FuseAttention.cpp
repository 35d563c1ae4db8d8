//===- FuseAttention.cpp - dl-fuse-attention -------------------------------===//
//
// Attention (scores = Q K^T, a softmax of each row, out = P V) as one loop
// over blocks of query rows: the second contraction is tiled by rows (and by
// 1 along its batch dimensions: batch, heads) and everything computing its
// left operand from another contraction is fused into the tile, so the
// block's scores, their softmax and its product with V are computed while
// the block is in L2. Unfused, each of those ops is a pass over the whole
// [heads, S, S] score tensor (Whisper's 30 s: 8 x 1500 x 1500 floats, 72 MB
// per layer, read and written 6 times) and a parallel region of its own.
//
// On linalg on tensors, with upstream's tile-and-fuse
// (scf::tileConsumerAndFuseProducersUsingSCF, an scf.forall over the
// tiles) and split (linalg::splitOp); ours is what to tile and by how much:
//   - the consumer is a contraction (linalg's contraction interface: batch
//     dims in A, B and C, one row dim M of A, one reduction) of static shape
//     whose right operand is not a constant and whose left operand is
//     computed, through at most `max-chain` linalg ops of which one reduces
//     (the softmax's maximum and sum), from another contraction of two
//     non-constant operands: attention's scores. Two GEMMs of weights with
//     an activation between them (an MLP) are not matched: tiling them by
//     rows would repack the first weight for every block;
//   - its batch dims are tiled by 1 and M by the block rows: a multiple of
//     the target's register-tile rows (`chooseRegisterTile`, of whole
//     cache lines), as many as keep one [rows, K] block of scores
//     within `getL2ResidentBytes()`, halved while there would be under two
//     blocks per hardware thread. Each block reads all of K^T and V: more
//     rows read them fewer times, and that outweighs the softmax's three
//     blocks (scores, exponentials, probabilities) spilling from L2
//     (Whisper's 8 x 1500 x 64 on Zen 3, 2 threads: 42 rows 38.2 ms per
//     layer against 40.7 for the 12 that kept three blocks in L2, 84 rows
//     no faster; 8 x 1024: 28.3 against 30.1 ms; 128-577 unchanged);
//   - when the block rows do not divide M, the whole blocks and the rest are
//     split into two ops first, each tiled by its own static size: every
//     nest inside a tile keeps constant bounds, which the register-tiled
//     micro-kernels need (Whisper's 1500 frames on a 1 MB L2: 62 blocks
//     of 24 rows and one of 12);
//   - a producer is fused only when its slice's offsets depend on every
//     tile loop (each tile computes its own part once): the transposed K
//     that every row block reads stays outside, computed once.
// dl-linalg-to-affine-loops turns the tile loop (an scf.forall on buffers
// after bufferization) into an affine.parallel, whose induction variables
// are valid affine dims for the nests inside; dl-affine-parallelize leaves
// the nests inside a parallel loop sequential, and the other affine passes
// treat each op's nest inside a tile as they would alone.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"
#include "dl/Target/Target.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLFUSEATTENTION
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// A contraction on tensors in the form the tiling below expects: two
/// inputs, one init, maps that are projected permutations, one reduction.
bool isTensorContraction(linalg::LinalgOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 1)
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return false;
  return linalg::isaContractionOpInterface(op);
}

/// Whether `value` is a constant (a weight): a product with one is a layer
/// (an MLP's two GEMMs), not attention.
bool isConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->hasTrait<OpTrait::ConstantLike>();
}

/// Whether `value` is computed, through at most `depth` linalg ops on
/// tensors of the same block (their inputs only) of which one reduces (the
/// softmax's maximum and sum), from a contraction of two computed operands:
/// attention's scores.
bool computedFromScores(Value value, Block *block, int depth,
                        bool reduced = false) {
  auto producer = value.getDefiningOp<linalg::LinalgOp>();
  if (!producer || producer->getBlock() != block || depth == 0)
    return false;
  if (isTensorContraction(producer))
    return reduced && !isConstant(producer.getDpsInputs()[0]) &&
           !isConstant(producer.getDpsInputs()[1]);
  reduced |= producer.getNumReductionLoops() > 0;
  for (Value input : producer.getDpsInputs())
    if (computedFromScores(input, block, depth - 1, reduced))
      return true;
  return false;
}

/// The loops of a contraction by role: batch (in A, B and C), M (in A and
/// C only), N (in B and C only), K (the reduction).
struct ContractionDims {
  SmallVector<unsigned> batch;
  SmallVector<unsigned> m;
};

ContractionDims classify(linalg::LinalgOp op) {
  ContractionDims dims;
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap b = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  auto iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < op.getNumLoops(); ++d) {
    if (iterators[d] != utils::IteratorType::parallel)
      continue;
    bool inA = a.isFunctionOfDim(d), inB = b.isFunctionOfDim(d);
    if (inA && inB)
      dims.batch.push_back(d);
    else if (inA)
      dims.m.push_back(d);
  }
  return dims;
}

/// Whether some indexing map of `op` multiplies a loop by a constant of at
/// most 0 (a flip, `dl.slice` with stride -1, reads `2 - d2`): upstream's
/// tiling asserts on such maps (linalg::isTiled, "nonpositive multiplying
/// coefficient"), so such a producer is not fused into the tiles.
bool hasNonPositiveMultiplier(linalg::LinalgOp op) {
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr result : map.getResults()) {
      bool found = false;
      result.walk([&](AffineExpr expr) {
        auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
        if (!binary || binary.getKind() != AffineExprKind::Mul)
          return;
        for (AffineExpr side : {binary.getLHS(), binary.getRHS()})
          if (auto constant = dyn_cast<AffineConstantExpr>(side);
              constant && constant.getValue() <= 0)
            found = true;
      });
      if (found)
        return true;
    }
  return false;
}

/// Whether `value` depends on block argument `arg` through the affine and
/// arith ops that compute a slice's offsets.
bool dependsOn(Value value, Value arg, int depth = 8) {
  if (value == arg)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || depth == 0)
    return false;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOn(operand, arg, depth - 1);
  });
}

struct DLFuseAttentionPass
    : public dl::impl::DLFuseAttentionBase<DLFuseAttentionPass> {
  using DLFuseAttentionBase::DLFuseAttentionBase;

  /// The block rows of `consumer` (see the header).
  int64_t blockRows(linalg::LinalgOp consumer, const ContractionDims &dims) {
    if (rows > 0)
      return rows;
    dl::TargetInfo target = dl::TargetInfo::of(consumer);
    // The products read K^T and V in rows of their own: the tile of whole
    // cache lines (dl-select-strategies' choice for them).
    int64_t tileRows = std::max<int64_t>(
        1, dl::chooseRegisterTile(target, /*wholeLines=*/true).rows);
    SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
    unsigned k = 0;
    auto iterators = consumer.getIteratorTypesArray();
    for (unsigned d = 0; d < iterators.size(); ++d)
      if (iterators[d] == utils::IteratorType::reduction)
        k = d;
    int64_t kSize = ShapedType::isDynamic(ranges[k]) ? 1024 : ranges[k];
    Type element = getElementTypeOrSelf(consumer.getDpsInputs()[0].getType());
    int64_t rowBytes = std::max<int64_t>(
        1, kSize * std::max<int64_t>(4, dl::elementBytes(element)));
    int64_t blocks = target.getL2ResidentBytes() / rowBytes;
    int64_t result = std::max<int64_t>(tileRows, blocks / tileRows * tileRows);
    int64_t m = ranges[dims.m.back()];
    if (!ShapedType::isDynamic(m)) {
      result = std::min<int64_t>(result, llvm::divideCeil(m, tileRows) * tileRows);
      int64_t batch = 1;
      for (unsigned d : dims.batch)
        batch *= ShapedType::isDynamic(ranges[d]) ? 1 : ranges[d];
      int64_t wanted = 2 * std::max<int64_t>(1, target.getThreads());
      while (result > tileRows && batch * llvm::divideCeil(m, result) < wanted)
        result = std::max(tileRows, (result / 2) / tileRows * tileRows);
    }
    return result;
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::LinalgOp> consumers;
    func.walk([&](linalg::LinalgOp op) {
      if (!isTensorContraction(op))
        return;
      // Static sizes: every tile, and the remainder, of constant shape.
      if (isConstant(op.getDpsInputs()[1]) ||
          llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
        return;
      Value lhs = op.getDpsInputs()[0];
      if (!computedFromScores(lhs, op->getBlock(), maxChain))
        return;
      ContractionDims dims = classify(op);
      // One row dim, and it must index the output (a product over heads
      // summed into one output is not attention's).
      if (dims.m.size() != 1)
        return;
      consumers.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp consumer : consumers) {
      ContractionDims dims = classify(consumer);
      int64_t block = blockRows(consumer, dims);
      unsigned mDim = dims.m.back();
      int64_t m = consumer.getStaticLoopRanges()[mDim];
      // Whole blocks and the remainder as two ops, each tiled by its own
      // static block: every nest inside a tile has constant bounds, as the
      // register-tiled micro-kernels need.
      SmallVector<std::pair<TilingInterface, int64_t>> parts;
      auto tileable = cast<TilingInterface>(consumer.getOperation());
      if (m % block == 0 || m < block) {
        parts.push_back({tileable, std::min(block, m)});
      } else {
        rewriter.setInsertionPoint(consumer);
        auto [whole, rest] = linalg::splitOp(rewriter, tileable, mDim,
                                             rewriter.getIndexAttr(m - m % block));
        if (!whole || !rest) {
          consumer->emitRemark("dl-fuse-attention: cannot split the rows; "
                               "left unfused");
          continue;
        }
        parts.push_back({whole, block});
        parts.push_back({rest, m % block});
      }
      for (auto [part, rows] : parts)
        if (failed(tileAndFuse(rewriter, part, dims, rows)))
          return signalPassFailure();
      if (explain)
        consumer->emitRemark() << "dl-fuse-attention: " << block
                               << " rows per block";
    }
  }

  /// Tiles `op` by `rows` along M and 1 along the batch dims, fusing its
  /// producers (see the header); replaces its results.
  LogicalResult tileAndFuse(IRRewriter &rewriter, TilingInterface op,
                            const ContractionDims &dims, int64_t rows) {
    auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
    SmallVector<OpFoldResult> sizes(linalgOp.getNumLoops(),
                                    rewriter.getIndexAttr(0));
    for (unsigned d : dims.batch)
      sizes[d] = rewriter.getIndexAttr(1);
    sizes[dims.m.back()] = rewriter.getIndexAttr(rows);

    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(sizes);
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // split's slices of slices merged, so the producers' slices are found.
    RewritePatternSet cleanups(rewriter.getContext());
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(cleanups);
    options.cleanupPatterns = FrozenRewritePatternSet(std::move(cleanups));
    options.setFusionControlFn(
        [](tensor::ExtractSliceOp slice, OpResult producer,
           bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          auto linalgProducer = dyn_cast<linalg::LinalgOp>(producer.getOwner());
          if (!linalgProducer || hasNonPositiveMultiplier(linalgProducer))
            return std::nullopt;
          auto forall = slice->getParentOfType<scf::ForallOp>();
          if (!forall)
            return std::nullopt;
          // Every tile its own part: each induction variable moves an
          // offset, or the producer would be computed once per tile.
          SmallVector<Value> offsets;
          for (OpFoldResult offset : slice.getMixedOffsets())
            if (auto value = dyn_cast<Value>(offset))
              offsets.push_back(value);
          for (Value iv : forall.getInductionVars())
            if (!llvm::any_of(offsets,
                              [&](Value o) { return dependsOn(o, iv); }))
              return std::nullopt;
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        });

    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTileAndFuseResult> result =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, op, options);
    if (failed(result))
      return op->emitError("dl-fuse-attention: tiling failed");
    for (OpResult value : op->getResults()) {
      Value replacement = result->replacements.lookup(value);
      if (!replacement)
        return op->emitError("dl-fuse-attention: the tile loop does not "
                             "yield this op's result");
      rewriter.replaceAllUsesWith(value, replacement);
    }
    // The op and the producers all of whose uses were fused are dead now:
    // the cleanups after this pass delete them.
    return success();
  }
};

} // namespace
