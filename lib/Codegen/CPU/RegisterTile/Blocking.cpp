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
  plan.columnBlock =
      columnBlock > 0 ? columnBlock
                      : std::max(tileColumns, square / tileColumns * tileColumns);
  if (columnBlock <= 0) {
    int64_t cores = target.getThreads();
    int64_t tiles = plan.fullColumns / tileColumns;
    if (tiles >= 2 && cores >= 2) {
      int64_t blocks = std::min(cores, tiles);
      int64_t perBlock = (tiles + blocks - 1) / blocks * tileColumns;
      plan.columnBlock = std::min(plan.columnBlock, perBlock);
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
  AffineForOp blockedReduction = acc.reductions.front();
  std::optional<uint64_t> reductionCount =
      affine::getConstantTripCount(blockedReduction);
  plan.blockColumns = plan.fullColumns > plan.columnBlock &&
                      plan.columnBlock % tileColumns == 0;
  int64_t sharedPanel =
      reductionCount ? static_cast<int64_t>(*reductionCount) *
                           std::min(plan.fullColumns, plan.columnBlock) *
                           elementBytes
                     : 0;
  plan.blockReduction =
      reductionCount && blockedReduction.getStepAsInt() == 1 &&
      static_cast<int64_t>(*reductionCount) > plan.reductionBlock &&
      (reductionBlock > 0 || sharedPanel > l2 / 4);
  plan.columnsPerBlock = plan.blockColumns ? plan.columnBlock : plan.fullColumns;
  plan.reductionPerBlock =
      plan.blockReduction
          ? plan.reductionBlock
          : (reductionCount ? static_cast<int64_t>(*reductionCount) : 0);
  return plan;
}
