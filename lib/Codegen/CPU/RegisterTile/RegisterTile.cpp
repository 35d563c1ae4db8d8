//===- RegisterTile.cpp - the register-tiled micro-kernel -----------------===//
//
// Turns a perfect affine nest that accumulates into one output into a
// register-blocked micro-kernel (see Passes.td for the contract). Ours:
// upstream has the pieces (unroll-and-jam, scalar replacement within an
// iteration, the super-vectorizer) but nothing that keeps an output tile in
// registers across the reduction loops, and that is what makes a matmul or a
// direct convolution compute-bound. For a matmul nest (i, k, j):
//
//   for i0 in 0..M-M%R step R:                 rows of the tile
//     for j0 in 0..N-N%C step C:               columns: C = vectors * lanes
//       acc[r][c] = C[i0+r, j0+16c : +16]       vector loads
//       for k in 0..K iter_args(acc):          reduction loops, order kept
//         b[c] = B[k, j0+16c : +16]            contiguous along j: vectors
//         a[r] = broadcast(A[i0+r, k])         invariant along j: broadcast
//         acc[r][c] = fma(a[r], b[c], acc[r][c])
//       C[i0+r, j0+16c : +16] = acc[r][c]
//   the original nest over columns N-N%C..N, and over rows M-M%R..M
//
// Where C was filled with a constant just before (linalg.fill's nest) and k
// is not blocked, the tiles start from that constant in registers rather
// than loading it, and the fill is deleted when nothing reads it any more
// (the tiles store every element, or an epilogue took the result and C has
// no other user), but for the columns left to the scalar nest: a GEMM of
// small K (3136 x 96 x 384) otherwise spends a third of its time writing
// and rereading the zeros.
//
// Around the tiles, columns and k are blocked for the cache (Blocking.cpp),
// and where a block of B is strided (columns blocked) and read by more than
// one row tile it is first copied into a contiguous, aligned buffer
// (Packing.cpp). A static M smaller than R shrinks the tile to M rows. The
// elementwise nest after the accumulation is computed on the tiles
// (Epilogue.cpp). R x C comes from the target's registers (the model of
// lib/Target/MicroKernel.cpp), unless the nest's #dl.strategy fixes it.
//
// Each output element receives the same updates in the same order as in the
// original nest (only the multiply-add is fused), so the result is the
// original one up to FMA rounding. Legality is structural: the only write is
// to the output, at an address that names every non-reduction loop, so those
// loops are parallel and the reductions can move inside them.
//
//===----------------------------------------------------------------------===//

#include "RegisterTileImpl.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IntegerSet.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::dl;
using namespace mlir::dl::register_tile;

namespace {

/// The columns a nest of tiles covers: [begin, end) in tiles of `vectors`
/// vectors, within the current block of columns where `inBlock` (`end` then
/// bounds the last block).
struct ColumnSpan {
  int64_t begin, end, vectors, lanes;
  bool inBlock;
};

/// `map` (one result) rounded down to a multiple of `factor`.
AffineMap roundedDown(AffineMap map, int64_t factor) {
  AffineExpr e = map.getResult(0);
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                        e.floorDiv(factor) * factor, map.getContext());
}

/// `index - base` (base null: index).
Value minus(OpBuilder &b, Location loc, Value index, Value base) {
  if (!base)
    return index;
  MLIRContext *ctx = b.getContext();
  AffineMap map = AffineMap::get(2, 0, getAffineDimExpr(0, ctx) - getAffineDimExpr(1, ctx));
  return affine::AffineApplyOp::create(b, loc, map, ValueRange{index, base});
}

/// The nest before `root` in its block that fills all of `output` with one
/// value defined outside it (linalg.fill's nest: loops 0..size over each
/// dimension, one affine.store of the value at the loops' indices), with
/// no op between it and `root` using `output`; its value in `value`.
AffineForOp findFill(AffineForOp root, Value output, Value &value) {
  for (Operation *op = root->getPrevNode(); op; op = op->getPrevNode()) {
    // Any access to a memref that may share bytes with the output (a view
    // of it, an overlapping view of the same arena) counts as a use; making
    // a view does not.
    bool uses = false;
    op->walk([&](Operation *nested) {
      if (nested->getNumRegions() == 0 && isMemoryEffectFree(nested))
        return;
      for (Value operand : nested->getOperands())
        uses |= isa<MemRefType>(operand.getType()) && mayAlias(operand, output);
    });
    if (!uses)
      continue;
    auto fill = dyn_cast<AffineForOp>(op);
    if (!fill || !(value = filledWith(fill, output)))
      return {};
    return fill;
  }
  return {};
}

/// Clones the original body into the micro-kernel for output row `row` and
/// vector column `column`, with loads turned into vector loads or broadcasts;
/// returns the new accumulator value.
Value cloneBody(OpBuilder &b, Accumulation &acc, IRMapping mapping,
                Value rowIndex, Value columnIndex, Value accumulator,
                VectorType vectorType, const Packing &packing) {
  Location loc = acc.store.getLoc();
  if (acc.rowLoop)
    mapping.map(acc.rowLoop.getInductionVar(), rowIndex);
  mapping.map(acc.columnLoop.getInductionVar(), columnIndex);
  mapping.map(acc.accumulator.getResult(), accumulator);
  for (Operation &op : acc.nest.back().getBody()->without_terminator()) {
    if (&op == acc.store.getOperation() || &op == acc.accumulator.getOperation())
      continue;
    if (auto load = dyn_cast<affine::AffineLoadOp>(op)) {
      SmallVector<Value> operands;
      for (Value operand : load.getMapOperands())
        operands.push_back(mapping.lookupOrDefault(operand));
      Value loaded;
      if (load.getOperation() == packing.load) {
        Value k = minus(b, loc, packing.reductionIv, packing.reductionBase);
        Value j = minus(b, loc, columnIndex, packing.columnBase);
        loaded = affine::AffineVectorLoadOp::create(
            b, loc, VectorType::get(vectorType.getShape(), load.getType()),
            packing.buffer, b.getMultiDimIdentityMap(2), ValueRange{k, j});
      } else if (acc.loads.lookup(load.getOperation()) == Along::Contiguous)
        loaded = affine::AffineVectorLoadOp::create(
            b, loc, VectorType::get(vectorType.getShape(),
                                    load.getType()),
            load.getMemRef(), load.getAffineMap(), operands);
      else
        loaded = affine::AffineLoadOp::create(b, loc, load.getMemRef(),
                                              load.getAffineMap(), operands);
      mapping.map(load.getResult(), loaded);
      continue;
    }
    cloneWidened(b, op, mapping, vectorType);
  }
  Value stored = mapping.lookupOrDefault(acc.store.getValueToStore());
  return broadcastTo(b, loc, stored, vectorType);
}

/// addf(x, mulf(y, z)) -> fma(y, z, x) on the micro-kernel's vectors.
void fuseMultiplyAdds(Operation *root) {
  SmallVector<arith::AddFOp> adds;
  root->walk([&](arith::AddFOp add) {
    if (isa<VectorType>(add.getType()))
      adds.push_back(add);
  });
  for (arith::AddFOp add : adds) {
    for (unsigned side = 0; side < 2; ++side) {
      auto mul = add->getOperand(side).getDefiningOp<arith::MulFOp>();
      if (!mul || !mul->hasOneUse())
        continue;
      OpBuilder b(add);
      Value fma = vector::FMAOp::create(b, add.getLoc(), mul.getLhs(),
                                        mul.getRhs(), add->getOperand(1 - side));
      add.replaceAllUsesWith(fma);
      add.erase();
      mul.erase();
      break;
    }
  }
}

} // namespace

Value mlir::dl::register_tile::broadcastTo(OpBuilder &b, Location loc,
                                           Value value, VectorType type) {
  if (isa<VectorType>(value.getType()))
    return value;
  return vector::BroadcastOp::create(b, loc, type, value);
}

void mlir::dl::register_tile::cloneWidened(OpBuilder &b, Operation &op,
                                           IRMapping &mapping,
                                           VectorType shape) {
  bool vectorOperands = llvm::any_of(op.getOperands(), [&](Value v) {
    return isa<VectorType>(mapping.lookupOrDefault(v).getType());
  });
  if (!vectorOperands) {
    b.clone(op, mapping);
    return;
  }
  IRMapping local = mapping;
  for (Value operand : op.getOperands()) {
    Value value = mapping.lookupOrDefault(operand);
    local.map(operand,
              broadcastTo(b, op.getLoc(), value,
                          VectorType::get(shape.getShape(),
                                          getElementTypeOrSelf(value))));
  }
  Operation *clone = b.clone(op, local);
  for (OpResult result : clone->getResults())
    result.setType(VectorType::get(shape.getShape(), result.getType()));
  for (auto [old, fresh] : llvm::zip(op.getResults(), clone->getResults()))
    mapping.map(old, fresh);
}

FailureOr<RegisterTileResult>
mlir::dl::registerTile(affine::AffineForOp root, const TargetInfo &target,
                       StrategyAttr strategy,
                       const RegisterTileOptions &options) {
  if (strategy && strategy.getKind() == StrategyKind::Loops)
    return failure();
  std::optional<Accumulation> match =
      matchAccumulation(root, target.getVectorBits() / 32);
  if (!match)
    return failure();
  Accumulation &acc = *match;
  // A transposed input is read only through its packed copy: without one
  // (its indices do not allow it) the nest stays as it is.
  Operation *transposedLoad = nullptr;
  for (auto &entry : acc.loads)
    if (entry.second == Along::Transposed)
      transposedLoad = entry.first;
  if (transposedLoad) {
    AffineForOp reduction = acc.reductions.front();
    if (!affine::getConstantTripCount(reduction) ||
        reduction.getStepAsInt() != 1 ||
        packCandidate(acc, reduction) != transposedLoad)
      return failure();
  }
  std::optional<Epilogue> epi;
  if (options.epilogue) {
    std::string why;
    epi = matchEpilogue(acc, why);
    if (!epi && options.epilogueRefused && !why.empty())
      options.epilogueRefused(acc.nest.front(), why);
  }
  if (epi)
    for (Operation *op : epi->between)
      op->moveBefore(acc.nest.front());
  AffineForOp subnest = acc.nest[acc.firstMoved];
  Location loc = subnest.getLoc();
  MLIRContext *ctx = subnest.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx);
  Type element = acc.store.getValueToStore().getType();
  auto pick = [](int64_t option, int64_t fromStrategy, int64_t fromTarget) {
    return option > 0 ? option : fromStrategy > 0 ? fromStrategy : fromTarget;
  };
  RegisterTileShape shape = chooseRegisterTile(target);
  int64_t rows = pick(options.rows, strategy ? strategy.getRows() : 0, shape.rows);
  int64_t vectors =
      pick(options.vectors, strategy ? strategy.getVectors() : 0, shape.vectors);
  TilePlan plan = planTile(
      acc, target, rows, vectors,
      options.columnBlock > 0 ? options.columnBlock
                              : (strategy ? strategy.getColumnBlock() : 0),
      options.reductionBlock > 0 ? options.reductionBlock
                                 : (strategy ? strategy.getReductionBlock() : 0));
  int64_t lanes = plan.lanes;
  int64_t columnCount = plan.columnCount;
  int64_t vectorCount = plan.vectorCount;
  int64_t tileColumns = plan.tileColumns;
  int64_t fullColumns = plan.fullColumns;
  int64_t tileRows = plan.tileRows;
  int64_t colBlock = plan.columnBlock, redBlock = plan.reductionBlock;
  bool blockColumns = plan.blockColumns, blockReduction = plan.blockReduction;
  int64_t columnsPerBlock = plan.columnsPerBlock;
  int64_t reductionPerBlock = plan.reductionPerBlock;
  std::optional<uint64_t> rowCount =
      acc.rowLoop ? affine::getConstantTripCount(acc.rowLoop) : std::nullopt;
  AffineForOp blockedReduction = acc.reductions.front();
  std::optional<uint64_t> reductionCount =
      affine::getConstantTripCount(blockedReduction);

  // What is applied, recorded on the outermost new loop.
  RegisterTileResult result;
  result.applied = StrategyAttr::get(
      ctx, strategy ? strategy.getKind() : StrategyKind::RegisterTiledGemm,
      tileRows, vectorCount, blockColumns ? colBlock : 0,
      blockReduction ? redBlock : 0, strategy ? strategy.getLayout() : "");
  Operation *before = subnest->getPrevNode();
  Block *block = subnest->getBlock();
  // The output's fill, where its value can start the tiles instead of a
  // pass over memory and a load per tile (a GEMM of small K: 3136 x 96 x
  // 384 spent a third of its time writing and rereading the zeros).
  Value fillValue;
  AffineForOp fill = findFill(acc.nest.front(), acc.store.getMemRef(), fillValue);
  if (!fill || !fillValue.getType().isIntOrFloat() ||
      fillValue.getType() != element)
    fillValue = Value();

  OpBuilder b(subnest);
  IRMapping mapping;
  Packing packing;
  // Packing pays only where a block of the input is not already contiguous
  // (its columns are blocked) and at least three row tiles read it: with
  // two, the copy costs about what the contiguous reads save (Whisper's
  // attention, 12-row blocks of scores: 41.2 -> 39.2 ms per layer without
  // repacking K^T for every block; Zen 3).
  bool reused = acc.rowLoop && (!rowCount || static_cast<int64_t>(*rowCount) >=
                                                 3 * tileRows);
  if (transposedLoad)
    packing.load = transposedLoad;
  else if (options.pack && blockColumns && reused && reductionCount &&
           blockedReduction.getStepAsInt() == 1)
    packing.load = packCandidate(acc, blockedReduction);
  auto allocatePackBuffer = [&]() {
    packing.buffer = memref::AllocOp::create(
        b, loc,
        MemRefType::get({reductionPerBlock, columnsPerBlock},
                        cast<affine::AffineLoadOp>(packing.load).getType()),
        b.getI64IntegerAttr(64));
  };
  // The buffer is private to a block of columns when columns are blocked
  // (so the column blocks are independent: dl-affine-parallelize can run
  // them on threads), else one for the whole nest.
  if (packing.load && !blockColumns)
    allocatePackBuffer();
  // Other output loops move outside the tile loops, bounds unchanged.
  for (AffineForOp loop : acc.outerParallel) {
    auto moved = AffineForOp::create(b, loc, loop.getLowerBoundOperands(),
                                     loop.getLowerBoundMap(),
                                     loop.getUpperBoundOperands(),
                                     loop.getUpperBoundMap());
    mapping.map(loop.getInductionVar(), moved.getInductionVar());
    b.setInsertionPointToStart(moved.getBody());
  }
  // Where the nest of tiles goes; the tiles over the columns left over
  // follow it at the same place (below).
  OpBuilder::InsertPoint tilesPoint = b.saveInsertionPoint();
  AffineForOp columnBlocks;
  if (blockColumns) {
    columnBlocks = AffineForOp::create(b, loc, 0, fullColumns, colBlock);
    b.setInsertionPointToStart(columnBlocks.getBody());
    packing.columnBase = columnBlocks.getInductionVar();
    if (packing.load)
      allocatePackBuffer(); // freed at the end of the block, below
  }
  if (blockReduction) {
    auto blocks = AffineForOp::create(b, loc, 0, *reductionCount, redBlock);
    b.setInsertionPointToStart(blocks.getBody());
    packing.reductionBase = blocks.getInductionVar();
  }
  if (packing.load)
    emitPackingCopy(b, acc, mapping, packing, blockedReduction,
                    *reductionCount, fullColumns, reductionPerBlock,
                    columnsPerBlock, target.getVectorBits());

  // Inputs read in short, gapped runs: their next rows fetched ahead.
  SmallVector<Prefetch> prefetches;
  if (options.prefetch)
    prefetches = planPrefetches(acc, target.getCacheLineBytes());

  // One row of tiles (tileRows rows from rowBase) across the columns
  // [span.begin, span.end) (of the current column block where span.inBlock):
  // the column tile loop, the output tile of span.vectors vectors per row
  // loaded into registers, the reduction loops carrying it, and its store.
  IRMapping blockMapping = mapping;
  auto emitTiles = [&](int64_t tileRows, Value rowBase, const ColumnSpan &span,
                       Packing &packing) {
    IRMapping mapping = blockMapping;
    int64_t vectorCount = span.vectors, lanes = span.lanes;
    int64_t tileColumns = vectorCount * lanes;
    auto vectorType = VectorType::get({lanes}, element);
    AffineForOp columnTiles;
    if (span.inBlock)
      columnTiles = AffineForOp::create(
          b, loc, packing.columnBase, AffineMap::get(1, 0, d0), packing.columnBase,
          AffineMap::get(1, 0, {d0 + colBlock, getAffineConstantExpr(span.end, ctx)},
                         ctx),
          tileColumns);
    else
      columnTiles =
          AffineForOp::create(b, loc, span.begin, span.end, tileColumns);
    b.setInsertionPointToStart(columnTiles.getBody());

    // Row and column indices of the tile's elements.
    auto plus = [&](Value base, int64_t offset) -> Value {
      AffineMap map = AffineMap::get(1, 0, d0 + offset);
      return affine::AffineApplyOp::create(b, loc, map, ValueRange{base});
    };
    SmallVector<Value> rowIndex, columnIndex;
    for (int64_t r = 0; r < tileRows; ++r)
      rowIndex.push_back(acc.rowLoop ? plus(rowBase, r) : Value());
    for (int64_t c = 0; c < vectorCount; ++c)
      columnIndex.push_back(plus(columnTiles.getInductionVar(), c * lanes));

    // Load the output tile into registers.
    auto outputOperands = [&](int64_t r, int64_t c) {
      IRMapping local = mapping;
      if (acc.rowLoop)
        local.map(acc.rowLoop.getInductionVar(), rowIndex[r]);
      local.map(acc.columnLoop.getInductionVar(), columnIndex[c]);
      SmallVector<Value> operands;
      for (Value operand : acc.store.getMapOperands())
        operands.push_back(local.lookupOrDefault(operand));
      return operands;
    };
    // Filled with a constant just before (and not resumed from a previous
    // reduction block): the tile starts as that constant in registers.
    Value start;
    if (fillValue && !blockReduction)
      start = vector::BroadcastOp::create(b, loc, vectorType, fillValue);
    SmallVector<Value> accumulators;
    for (int64_t r = 0; r < tileRows; ++r)
      for (int64_t c = 0; c < vectorCount; ++c)
        accumulators.push_back(
            start ? start
                  : affine::AffineVectorLoadOp::create(
                        b, loc, vectorType, acc.store.getMemRef(),
                        acc.store.getAffineMap(), outputOperands(r, c))
                        .getResult());

    // The reduction loops, carrying the tile.
    SmallVector<AffineForOp> reductionLoops;
    ValueRange carried = accumulators;
    for (AffineForOp loop : acc.reductions) {
      AffineForOp moved;
      if (loop == blockedReduction && blockReduction)
        moved = AffineForOp::create(
            b, loc, packing.reductionBase, AffineMap::get(1, 0, d0),
            packing.reductionBase,
            AffineMap::get(1, 0,
                           {d0 + redBlock,
                            getAffineConstantExpr(*reductionCount, ctx)},
                           ctx),
            1, carried);
      else
        moved = AffineForOp::create(
            b, loc, loop.getLowerBoundOperands(), loop.getLowerBoundMap(),
            loop.getUpperBoundOperands(), loop.getUpperBoundMap(),
            loop.getStepAsInt(), carried);
      mapping.map(loop.getInductionVar(), moved.getInductionVar());
      if (loop == blockedReduction)
        packing.reductionIv = moved.getInductionVar();
      if (!reductionLoops.empty())
        affine::AffineYieldOp::create(b, loc, moved.getResults());
      reductionLoops.push_back(moved);
      b.setInsertionPointToStart(moved.getBody());
      carried = moved.getRegionIterArgs();
    }
    SmallVector<Value> updated;
    for (int64_t r = 0; r < tileRows; ++r)
      for (int64_t c = 0; c < vectorCount; ++c)
        updated.push_back(cloneBody(b, acc, mapping, rowIndex[r],
                                    columnIndex[c],
                                    carried[r * vectorCount + c], vectorType,
                                    packing));
    affine::AffineYieldOp::create(b, loc, updated);
    if (!prefetches.empty()) {
      b.setInsertionPoint(reductionLoops.back());
      emitPrefetches(b, loc, prefetches, acc, mapping, rowIndex);
    }
    b.setInsertionPointAfter(reductionLoops.front());
    ValueRange results = reductionLoops.front().getResults();
    auto storeOutput = [&]() {
      for (int64_t r = 0; r < tileRows; ++r)
        for (int64_t c = 0; c < vectorCount; ++c)
          affine::AffineVectorStoreOp::create(
              b, loc, results[r * vectorCount + c], acc.store.getMemRef(),
              acc.store.getAffineMap(), outputOperands(r, c));
    };
    auto storeEpilogue = [&]() {
      for (int64_t r = 0; r < tileRows; ++r)
        for (int64_t c = 0; c < vectorCount; ++c) {
          IRMapping local = mapping;
          if (acc.rowLoop)
            local.map(acc.rowLoop.getInductionVar(), rowIndex[r]);
          local.map(acc.columnLoop.getInductionVar(), columnIndex[c]);
          SmallVector<Value> outputIndices;
          for (AffineForOp loop : acc.outputLoops)
            outputIndices.push_back(
                local.lookupOrDefault(loop.getInductionVar()));
          IRMapping indices;
          for (auto [k, loop] : llvm::enumerate(epi->loops))
            indices.map(loop.getInductionVar(),
                        epi->toView
                            ? affine::AffineApplyOp::create(
                                  b, loc, epi->toView.getSubMap({unsigned(k)}),
                                  outputIndices)
                                  .getResult()
                            : outputIndices[k]);
          emitEpilogueVector(b, *epi, indices, results[r * vectorCount + c],
                             vectorType);
        }
    };
    if (!epi) {
      storeOutput();
    } else if (!blockReduction) {
      storeEpilogue();
    } else {
      // Only the last reduction block holds the final sums: the others
      // store their partial sums to C for the next block to resume from.
      int64_t last = (*reductionCount - 1) / redBlock * redBlock;
      auto isLast = affine::AffineIfOp::create(
          b, loc, IntegerSet::get(1, 0, {d0 - last}, {false}),
          ValueRange{packing.reductionBase}, /*withElseRegion=*/true);
      b.setInsertionPointToStart(isLast.getThenBlock());
      storeEpilogue();
      b.setInsertionPointToStart(isLast.getElseBlock());
      storeOutput();
      b.setInsertionPointAfter(isLast);
    }
    if (epi)
      columnTiles->setAttr(kFusedEpilogue, epilogueNames(*epi));
    fuseMultiplyAdds(columnTiles);
  };

  // The rows of tiles over `span`: full row tiles, then (a static count of
  // rows left over) one narrower tile in the same block, reading the same
  // packed buffer, rather than the scalar nest.
  AffineMap fullRowsMap;
  bool rowRemainderInBlock = false;
  auto emitRows = [&](const ColumnSpan &span, Packing &packing) {
    if (!acc.rowLoop) {
      emitTiles(tileRows, Value(), span, packing);
      return;
    }
    fullRowsMap = roundedDown(acc.rowLoop.getUpperBoundMap(), tileRows);
    auto rowTiles = AffineForOp::create(
        b, loc, ValueRange{}, b.getConstantAffineMap(0),
        acc.rowLoop.getUpperBoundOperands(), fullRowsMap, tileRows);
    b.setInsertionPointToStart(rowTiles.getBody());
    emitTiles(tileRows, rowTiles.getInductionVar(), span, packing);
    if (rowCount && *rowCount % tileRows != 0) {
      b.setInsertionPointAfter(rowTiles);
      Value base = arith::ConstantIndexOp::create(
          b, loc, static_cast<int64_t>(*rowCount - *rowCount % tileRows));
      emitTiles(static_cast<int64_t>(*rowCount % tileRows), base, span,
                packing);
      rowRemainderInBlock = true;
    }
  };
  emitRows(ColumnSpan{0, fullColumns, vectorCount, lanes, blockColumns},
           packing);

  // Columns left over: tiles of fewer vectors after the main ones (96 = 64 +
  // 32 with a 4-vector tile of 16 lanes), then of one narrower vector, half
  // as wide each time down to 4 lanes (24 = 16 + 8 in zmm: the 8 in a ymm
  // register), each reading the input as it lies (the packed buffer holds
  // only the main tiles' columns) in its own nest with its own reduction
  // blocks. Only columns left over from those (fewer than 4) go to the
  // scalar nest.
  int64_t coveredColumns = fullColumns;
  auto emitTail = [&](int64_t tailVectors, int64_t tailLanes) {
    b.restoreInsertionPoint(tilesPoint);
    Packing tail;
    if (blockReduction) {
      auto blocks = AffineForOp::create(b, loc, 0, *reductionCount, redBlock);
      b.setInsertionPointToStart(blocks.getBody());
      tail.reductionBase = blocks.getInductionVar();
    }
    int64_t end = coveredColumns + tailVectors * tailLanes;
    emitRows(ColumnSpan{coveredColumns, end, tailVectors, tailLanes, false},
             tail);
    coveredColumns = end;
  };
  if (!transposedLoad) {
    if (int64_t tailVectors = (columnCount - coveredColumns) / lanes)
      emitTail(tailVectors, lanes);
    for (int64_t narrower = lanes / 2; narrower >= 4; narrower /= 2)
      if (columnCount - coveredColumns >= narrower)
        emitTail(1, narrower);
  }

  // Remainders: the original nest over the columns left over, and over the
  // rows left over (tile columns only).
  b.setInsertionPoint(subnest);
  unsigned columnDepth =
      llvm::find(acc.nest, acc.columnLoop) - acc.nest.begin() - acc.firstMoved;
  if (coveredColumns < columnCount) {
    auto rest = cast<AffineForOp>(b.clone(*subnest));
    nestedLoop(rest, columnDepth)
        .setLowerBound({}, b.getConstantAffineMap(coveredColumns));
  }
  if (acc.rowLoop && !rowRemainderInBlock) {
    std::optional<uint64_t> rowCount = affine::getConstantTripCount(acc.rowLoop);
    if (!rowCount || *rowCount % tileRows != 0) {
      unsigned rowDepth = llvm::find(acc.nest, acc.rowLoop) - acc.nest.begin() -
                          acc.firstMoved;
      auto rest = cast<AffineForOp>(b.clone(*subnest));
      nestedLoop(rest, rowDepth)
          .setLowerBound(acc.rowLoop.getUpperBoundOperands(), fullRowsMap);
      nestedLoop(rest, columnDepth)
          .setUpperBound({}, b.getConstantAffineMap(coveredColumns));
    }
  }
  // The epilogue over the same remainders, after the accumulation nest.
  if (epi) {
    OpBuilder after(epi->root);
    unsigned epiColumn = epi->loops.size() - 1;
    if (coveredColumns < columnCount) {
      auto rest = cast<AffineForOp>(after.clone(*epi->root));
      nestedLoop(rest, epiColumn)
          .setLowerBound({}, after.getConstantAffineMap(coveredColumns));
    }
    if (acc.rowLoop && !rowRemainderInBlock &&
        (!rowCount || *rowCount % tileRows != 0)) {
      unsigned epiRow = llvm::find(acc.outputLoops, acc.rowLoop) -
                        acc.outputLoops.begin();
      auto rest = cast<AffineForOp>(after.clone(*epi->root));
      nestedLoop(rest, epi->depths[epiRow])
          .setLowerBound(acc.rowLoop.getUpperBoundOperands(), fullRowsMap);
      nestedLoop(rest, epiColumn)
          .setUpperBound({}, after.getConstantAffineMap(coveredColumns));
    }
    result.fusedEpilogue = epi->root.getOperation();
    epi->root.erase();
  }
  if (packing.buffer && !blockColumns)
    memref::DeallocOp::create(b, loc, packing.buffer);
  if (packing.buffer && blockColumns) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(columnBlocks.getBody()->getTerminator());
    memref::DeallocOp::create(b, loc, packing.buffer);
  }
  // The fill goes when nothing reads what it wrote any more: the tiles
  // store every element they cover (starting from the fill's value), the
  // scalar nest over the columns left over reads only its own elements,
  // which keep a fill of just those (GPT-2's output layer, 1024 x 50257
  // with one column left to the scalar nest, filled 206 MB that the tiles
  // then overwrote but for 1024 elements), and either the tiles stored
  // every element themselves or, with an epilogue, the output has no
  // other user.
  bool scalarColumns = coveredColumns < columnCount;
  bool scalarRows = acc.rowLoop && !rowRemainderInBlock &&
                    (!rowCount || *rowCount % tileRows != 0);
  // ... and the nest's output loops span the whole output.
  Value output = acc.store.getMemRef();
  auto outputType = cast<MemRefType>(output.getType());
  bool spansOutput = outputType.hasStaticShape();
  for (auto [dim, loop] : llvm::enumerate(acc.outputLoops)) {
    std::optional<uint64_t> trips = affine::getConstantTripCount(loop);
    if (!trips || !outputType.hasStaticShape() ||
        static_cast<int64_t>(*trips) != outputType.getDimSize(dim))
      spansOutput = false;
  }
  // (Rows left to the scalar nest come only from a dynamic row count, whose
  // output has no fill found.)
  if (fillValue && !blockReduction && spansOutput && !scalarRows) {
    // The epilogue's view of C (an expand_shape: an im2col GEMM's
    // [N*OH*OW, F] read as [N, OH, OW, F]) is C: its users are C's.
    Operation *view = epi && epi->view != output
                          ? epi->view.getDefiningOp()
                          : nullptr;
    auto other = [&](Operation *user) {
      return !fill->isAncestor(user) && !subnest->isAncestor(user) &&
             !isa<memref::DeallocOp>(user);
    };
    bool otherUsers = llvm::any_of(output.getUsers(), [&](Operation *user) {
      if (user == view)
        return llvm::any_of(view->getUsers(), other);
      return other(user);
    });
    if (!epi || !otherUsers) {
      // The fill's loop d walks the output's dimension d (findFill).
      auto dimOf = [&](AffineForOp loop) -> unsigned {
        return llvm::find(acc.outputLoops, loop) - acc.outputLoops.begin();
      };
      OpBuilder fb(fill);
      if (scalarColumns) {
        auto part = cast<AffineForOp>(fb.clone(*fill));
        nestedLoop(part, dimOf(acc.columnLoop))
            .setLowerBound({}, fb.getConstantAffineMap(coveredColumns));
      }
      if (before == fill.getOperation())
        before = fill->getPrevNode();
      fill.erase();
    }
  }
  subnest.erase();
  // The first loop built in the nest's place carries the decisions.
  for (Operation *op = before ? before->getNextNode() : &block->front(); op;
       op = op->getNextNode())
    if (isa<AffineForOp>(op)) {
      op->setAttr(kStrategyAttrName, result.applied);
      break;
    }
  return result;

}
