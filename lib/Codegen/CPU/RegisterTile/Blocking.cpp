//===- Blocking.cpp - the micro-kernel's tile and cache blocks ------------===//
//
// The policy of dl-affine-register-tile, apart from the IR it builds: the
// tile's geometry for one nest (the register tile, shrunk to the nest) and
// its cache blocks, from the target's caches and threads (#dl.target):
//
//  - a square block of B of L2/8 bytes, so that it stays in L2 beside the
//    streams of A and C, with at most 3/4 of L1 for the micro-panel of B
//    (reduction block x tile columns) a row tile reads again for each of
//    its k steps, rounded to the tile;
//  - at least one block of columns per thread where the columns allow: the
//    column blocks are what dl-affine-parallelize runs on threads with one
//    fork/join per GEMM (inside them, every reduction block would pay one);
//  - the reduction blocked only where the panel of B the row tiles share
//    (K x block columns) would take more than a quarter of L2.
//
//===----------------------------------------------------------------------===//

#include "RegisterTileImpl.h"

#include "dl/Codegen/CPU/AffineUtils.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"

#include <cmath>

using namespace mlir;
using namespace mlir::dl;
using namespace mlir::dl::register_tile;

TilePlan mlir::dl::register_tile::planTile(Accumulation &acc,
                                           const TargetInfo &target,
                                           int64_t rows, int64_t vectors,
                                           int64_t columnBlock,
                                           int64_t reductionBlock) {
  TilePlan plan;
  Type element = acc.store.getValueToStore().getType();
  plan.lanes = target.getLanes(element);
  plan.columnCount = *affine::getConstantTripCount(acc.columnLoop);
  plan.vectorCount = std::min<int64_t>(vectors, plan.columnCount / plan.lanes);
  plan.tileColumns = plan.vectorCount * plan.lanes;
  plan.fullColumns = plan.columnCount - plan.columnCount % plan.tileColumns;
  // Fewer rows than a tile: the tile shrinks to them rather than leaving
  // the whole nest to the remainder loops.
  std::optional<uint64_t> rowCount =
      acc.rowLoop ? affine::getConstantTripCount(acc.rowLoop) : std::nullopt;
  plan.tileRows = acc.rowLoop ? rows : 1;
  if (rowCount && *rowCount >= 1 && static_cast<int64_t>(*rowCount) < plan.tileRows)
    plan.tileRows = static_cast<int64_t>(*rowCount);

  int64_t elementBytes = std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1);
  int64_t l1 = target.getL1DataBytes(), l2 = target.getL2Bytes();
  int64_t square = static_cast<int64_t>(
      std::sqrt(static_cast<double>(l2) / 8 / elementBytes));
  int64_t tileColumns = plan.tileColumns;
  AffineForOp blockedReduction = acc.reductions.front();
  std::optional<uint64_t> reductionCount =
      affine::getConstantTripCount(blockedReduction);
  // The widest block of columns, in tiles (at least two), whose panel of
  // B over the whole reduction fits in half of L2, where a wider block
  // would need the reduction blocked and the partial sums of its rows
  // (every row of the tiles x the block's columns) would pass half of L2:
  // each reduction block would reload them from beyond L2. 0: no limit.
  // [1024, 768] @ [768, 3072] (BERT-base's first FFN GEMM at batch 8):
  // 128 columns in 6 reduction blocks of 128, 126 GFLOP/s; 64 columns and
  // the whole reduction, 152-157 (no reload of C, and the tiles start from
  // the fill: C is only written). At 128 rows the partial sums stay in L2
  // and the blocked reduction is as fast or faster ([128, 3072] @ [3072,
  // 768]: 172 against 145-151 GFLOP/s with blocks of 512 or 1024); Zen 3,
  // 2 threads, old and new alternated in one process.
  int64_t wholeReductionTiles = 0;
  if (columnBlock <= 0 && reductionBlock <= 0 && reductionCount &&
      blockedReduction.getStepAsInt() == 1 && rowCount) {
    int64_t k = static_cast<int64_t>(*reductionCount);
    int64_t fit = l2 / 2 / (k * elementBytes) / tileColumns;
    int64_t wider = (fit + 1) * tileColumns;
    if (fit >= 2 && wider <= plan.fullColumns &&
        static_cast<int64_t>(*rowCount) * wider * elementBytes > l2 / 2)
      wholeReductionTiles = fit;
  }
  plan.columnBlock =
      columnBlock > 0 ? columnBlock
                      : std::max(tileColumns, square / tileColumns * tileColumns);
  if (columnBlock <= 0) {
    // The column blocks are what the threads share (the outermost parallel
    // loop), in min(threads, blocks) contiguous chunks of whole blocks
    // (lib/Runtime/ParallelRuntime.cpp): the width is the one whose busiest
    // thread has the fewest tiles, from half to twice the cache's square
    // (narrower blocks reread A more often, wider ones keep less of B in
    // cache), the widest within the square among equals. 21 tiles of 16
    // (336 columns, RegNetY's 1x1 convolutions) in blocks of 8 made three
    // blocks, two on one thread: 16 tiles against 11 in two blocks of 11
    // (8 x 14 x 14 x 336 -> 336: 3.4 -> 2.4 ms on Zen 3, 2 threads).
    // A nest inside a parallel loop (dl-fuse-attention's blocks of query
    // rows) already runs on one thread: its columns are not split further
    // (Whisper's P V in 12-row blocks had V repacked in two 32-column blocks
    // for every block). Nor are they where an output loop that stays
    // outside the blocks has an iteration per thread: dl-affine-parallelize
    // takes the outermost parallel loop, that one (a convolution's batch or
    // output rows). Split for threads that never ran them, the channels of
    // a depthwise convolution were two passes over every input row, each
    // reading half of every pixel's lines.
    int64_t threads = target.getThreads();
    auto takesThreads = [&](AffineForOp loop) {
      std::optional<uint64_t> trips = affine::getConstantTripCount(loop);
      return !trips || static_cast<int64_t>(*trips) >= threads;
    };
    bool threadsOutside =
        llvm::any_of(ArrayRef(acc.nest).take_front(acc.firstMoved),
                     takesThreads) ||
        llvm::any_of(acc.outerParallel, takesThreads);
    int64_t cores =
        acc.nest.front()->getParentOfType<affine::AffineParallelOp>() ||
                threadsOutside
            ? 1
            : threads;
    int64_t tiles = plan.fullColumns / tileColumns;
    int64_t squareTiles = std::max<int64_t>(1, plan.columnBlock / tileColumns);
    if (wholeReductionTiles > 0 && wholeReductionTiles < squareTiles) {
      squareTiles = wholeReductionTiles;
      plan.columnBlock = squareTiles * tileColumns;
    }
    if (tiles >= 2 && cores >= 2) {
      int64_t fewest = std::max<int64_t>(
          1, std::min(squareTiles / 2, (tiles + cores - 1) / cores));
      int64_t most = std::min(tiles, 2 * squareTiles);
      if (wholeReductionTiles > 0)
        most = std::min(most, wholeReductionTiles);
      int64_t bestPerBlock = 0, bestBusiest = 0;
      for (int64_t perBlock = fewest; perBlock <= most; ++perBlock) {
        int64_t busiest = dl::busiestThreadIterations(tiles, perBlock, cores);
        bool better = bestPerBlock == 0 || busiest < bestBusiest ||
                      (busiest == bestBusiest && perBlock <= squareTiles);
        if (better) {
          bestPerBlock = perBlock;
          bestBusiest = busiest;
        }
      }
      plan.columnBlock = bestPerBlock * tileColumns;
    }
  }
  plan.reductionBlock =
      reductionBlock > 0
          ? reductionBlock
          : std::max<int64_t>(
                16, std::min(square, l1 * 3 / 4 / (tileColumns * elementBytes)) /
                        16 * 16);

  // Cache blocks: columns in blocks of `columnBlock`, the outermost
  // reduction loop in blocks of `reductionBlock`, both outside the row
  // tiles, so that the block of the input indexed by (reduction, column)
  // stays in cache while every row tile of the output uses it.
  plan.blockColumns = plan.fullColumns > plan.columnBlock &&
                      plan.columnBlock % tileColumns == 0;
  // The reduction is blocked once the (reduction x column-block) panel of
  // B passes half of L2: below that it stays there whole, and the tiles
  // neither reload nor restore their partial sums (a quarter of L2 blocked
  // 336 x 176 and 512 x 128 panels: 8 x 14 x 14 x 336 -> 336 2.35 -> 2.12
  // ms, [1500, 512] @ [512, 2048] 19.5 -> 17.2 ms, [197, 1536] @ [1536,
  // 384] 1.56 -> 1.36 ms on Zen 3, 2 threads; nothing measured slower).
  int64_t sharedPanel =
      reductionCount ? static_cast<int64_t>(*reductionCount) *
                           std::min(plan.fullColumns, plan.columnBlock) *
                           elementBytes
                     : 0;
  plan.blockReduction =
      reductionCount && blockedReduction.getStepAsInt() == 1 &&
      static_cast<int64_t>(*reductionCount) > plan.reductionBlock &&
      (reductionBlock > 0 || sharedPanel > l2 / 2);
  plan.columnsPerBlock = plan.blockColumns ? plan.columnBlock : plan.fullColumns;
  plan.reductionPerBlock =
      plan.blockReduction
          ? plan.reductionBlock
          : (reductionCount ? static_cast<int64_t>(*reductionCount) : 0);
  return plan;
}
