//===- Packing.cpp - copying blocks of B into contiguous buffers ----------===//
//
// As in GotoBLAS/BLIS: where a cache block of B is strided (its columns are
// blocked) and read by three row tiles or more, or where B is read
// transposed (x @ w.T, an OIHW filter), the block is first copied into a
// contiguous, 64-byte aligned buffer the micro-kernel reads with vector
// loads.
//
//===----------------------------------------------------------------------===//

#include "RegisterTileImpl.h"

#include "dl/Codegen/CPU/AffineUtils.h"

#include "mlir/Dialect/Affine/IR/AffineValueMap.h"

using namespace mlir;
using namespace mlir::dl::register_tile;

bool mlir::dl::register_tile::contiguousAlong(affine::AffineLoadOp load,
                                             Value iv) {
  if (!cast<MemRefType>(load.getMemRef().getType()).isLastDimUnitStride())
    return false;
  affine::MemRefAccess access(load);
  affine::AffineValueMap map;
  access.getAccessMap(&map);
  unsigned last = map.getNumResults() - 1;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    if (!map.isFunctionOf(r, iv))
      continue;
    if (r != last || dl::coefficientOf(map, r, iv) != 1)
      return false;
  }
  return map.isFunctionOf(last, iv);
}

/// The copy of the current (reduction, column) block of the packed input
/// into the buffer, vectorizable along the columns.
/// Blocks are `reductionPerBlock` x `columnsPerBlock` (the whole extent
/// along a dimension that is not blocked).
///
/// A transposed input (B^T[j, k], contiguous along k) is copied by
/// lanes x lanes squares where it can be: `lanes` vector loads along k
/// (one per column j), one vector.transpose in registers (lowered to
/// shuffles chosen for the target by dl-lower-vector-transpose), `lanes` vector stores along j. A
/// scalar copy of such an input (strided stores, nothing to vectorize)
/// cost more than transposing it beforehand: 512x4608 floats of a
/// convolution filter, 5.0 ms scalar vs 2.5 ms for a transpose + GEMM.
/// The edges that do not fill a square are copied by scalar loops.
void mlir::dl::register_tile::emitPackingCopy(
    OpBuilder &b, Accumulation &acc, IRMapping &mapping, Packing &packing,
    AffineForOp reduction, int64_t reductionCount, int64_t fullColumns,
    int64_t reductionPerBlock, int64_t columnsPerBlock, int64_t vectorBits) {
  Location loc = packing.load->getLoc();
  MLIRContext *ctx = b.getContext();
  AffineExpr d0 = getAffineDimExpr(0, ctx);
  auto load = cast<affine::AffineLoadOp>(packing.load);
  // Extent of this block along a dimension: [0, min(block, extent - base))
  // (the whole extent when not blocked: no base).
  struct Extent {
    SmallVector<Value> operands; // the base, if blocked
    AffineMap upper;             // min(block, extent - base)
    AffineMap squaresUpper;      // where whole squares end
    AffineMap edgeLower;         // where the scalar edge begins
  };
  auto extent = [&](Value base, int64_t block, int64_t total,
                    int64_t lanes) {
    Extent e;
    auto c = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
    if (base) {
      e.operands.push_back(base);
      e.upper = AffineMap::get(1, 0, {c(block), c(total) - d0}, ctx);
      // With block a multiple of lanes: floor(min(block, total - base))
      // = min(block, floor(total - base)); the edge [floor(total - base),
      // min(...)) is empty except in the last block.
      e.squaresUpper = AffineMap::get(
          1, 0, {c(block), ((c(total) - d0).floorDiv(lanes)) * lanes}, ctx);
      e.edgeLower = AffineMap::get(
          1, 0, ((c(total) - d0).floorDiv(lanes)) * lanes, ctx);
    } else {
      int64_t size = std::min(block, total);
      e.upper = b.getConstantAffineMap(size);
      e.squaresUpper = b.getConstantAffineMap(size / lanes * lanes);
      e.edgeLower = e.squaresUpper;
    }
    return e;
  };
  bool transposed = acc.loads.lookup(packing.load) == Along::Transposed;
  Type element = load.getType();
  int64_t lanes = element.isIntOrFloat()
                      ? vectorBits / element.getIntOrFloatBitWidth()
                      : 0;
  bool squares = transposed && lanes >= 2 &&
                 (!packing.reductionBase || reductionPerBlock % lanes == 0) &&
                 (!packing.columnBase || columnsPerBlock % lanes == 0) &&
                 contiguousAlong(load, reduction.getInductionVar());
  int64_t unit = squares ? lanes : 1;
  Extent rows = extent(packing.reductionBase, reductionPerBlock,
                       reductionCount, unit);
  Extent columns =
      extent(packing.columnBase, columnsPerBlock, fullColumns, unit);

  auto offset = [&](OpBuilder &builder, Value index, Value base) -> Value {
    if (!base)
      return index;
    AffineMap map = AffineMap::get(2, 0, getAffineDimExpr(0, ctx) + getAffineDimExpr(1, ctx));
    return affine::AffineApplyOp::create(builder, loc, map, ValueRange{index, base});
  };
  auto plus = [&](OpBuilder &builder, Value index, int64_t constant) -> Value {
    if (constant == 0)
      return index;
    return affine::AffineApplyOp::create(
        builder, loc, AffineMap::get(1, 0, d0 + constant), ValueRange{index});
  };
  // The input's indices with the reduction at `k` and the column at `j`
  // (both relative to the block).
  auto inputIndices = [&](OpBuilder &builder, Value k, Value j) {
    IRMapping local = mapping;
    local.map(reduction.getInductionVar(),
              offset(builder, k, packing.reductionBase));
    local.map(acc.columnLoop.getInductionVar(),
              offset(builder, j, packing.columnBase));
    SmallVector<Value> operands;
    for (Value operand : load.getMapOperands())
      operands.push_back(local.lookupOrDefault(operand));
    return operands;
  };
  auto loop = [&](OpBuilder &builder, ArrayRef<Value> lowerOperands,
                  AffineMap lower, ArrayRef<Value> upperOperands,
                  AffineMap upper, int64_t step = 1) {
    return AffineForOp::create(builder, loc, lowerOperands, lower,
                               upperOperands, upper, step);
  };
  auto zero = b.getConstantAffineMap(0);
  // A scalar copy of rows [r0, r1) x columns [c0, c1). Rows outside for a
  // B read along its rows; for a transposed B the columns go outside, so
  // that the reads walk B's rows contiguously and the strided writes stay
  // within the (cache-resident) buffer.
  auto scalarCopy = [&](ArrayRef<Value> r0Ops, AffineMap r0,
                        ArrayRef<Value> r1Ops, AffineMap r1,
                        ArrayRef<Value> c0Ops, AffineMap c0,
                        ArrayRef<Value> c1Ops, AffineMap c1) {
    auto empty = [](AffineMap lower, AffineMap upper) {
      return lower.isSingleConstant() && upper.isConstant() &&
             llvm::any_of(upper.getConstantResults(), [&](int64_t u) {
               return u <= lower.getSingleConstantResult();
             });
    };
    if (empty(r0, r1) || empty(c0, c1))
      return; // an edge the squares cover
    OpBuilder::InsertionGuard guard(b);
    AffineForOp rowLoop, columnLoop;
    if (!transposed) {
      rowLoop = loop(b, r0Ops, r0, r1Ops, r1);
      b.setInsertionPointToStart(rowLoop.getBody());
      columnLoop = loop(b, c0Ops, c0, c1Ops, c1);
      b.setInsertionPointToStart(columnLoop.getBody());
    } else {
      columnLoop = loop(b, c0Ops, c0, c1Ops, c1);
      b.setInsertionPointToStart(columnLoop.getBody());
      rowLoop = loop(b, r0Ops, r0, r1Ops, r1);
      b.setInsertionPointToStart(rowLoop.getBody());
    }
    Value k = rowLoop.getInductionVar(), j = columnLoop.getInductionVar();
    Value value = affine::AffineLoadOp::create(
        b, loc, load.getMemRef(), load.getAffineMap(), inputIndices(b, k, j));
    affine::AffineStoreOp::create(b, loc, value, packing.buffer,
                                  b.getMultiDimIdentityMap(2),
                                  ValueRange{k, j});
  };
  if (!squares) {
    scalarCopy({}, zero, rows.operands, rows.upper, {}, zero,
               columns.operands, columns.upper);
    return;
  }

  {
    OpBuilder::InsertionGuard guard(b);
    AffineForOp columnSquares =
        loop(b, {}, zero, columns.operands, columns.squaresUpper, lanes);
    b.setInsertionPointToStart(columnSquares.getBody());
    AffineForOp rowSquares =
        loop(b, {}, zero, rows.operands, rows.squaresUpper, lanes);
    b.setInsertionPointToStart(rowSquares.getBody());
    Value k = rowSquares.getInductionVar();
    Value j = columnSquares.getInductionVar();
    auto rowType = VectorType::get({lanes}, element);
    auto squareType = VectorType::get({lanes, lanes}, element);
    Value square = arith::ConstantOp::create(b, loc, squareType,
                                             b.getZeroAttr(squareType));
    for (int64_t r = 0; r < lanes; ++r) {
      // Column j + r of the square: lanes consecutive k, contiguous.
      Value row = affine::AffineVectorLoadOp::create(
          b, loc, rowType, load.getMemRef(), load.getAffineMap(),
          inputIndices(b, k, plus(b, j, r)));
      square = vector::InsertOp::create(b, loc, row, square, r);
    }
    Value flipped = vector::TransposeOp::create(b, loc, square,
                                                ArrayRef<int64_t>{1, 0});
    for (int64_t r = 0; r < lanes; ++r) {
      Value row = vector::ExtractOp::create(b, loc, flipped, r);
      affine::AffineVectorStoreOp::create(
          b, loc, row, packing.buffer, b.getMultiDimIdentityMap(2),
          ValueRange{plus(b, k, r), j});
    }
  }
  // The edges: the columns past the last square (every row), then the
  // rows past the last square of the other columns.
  scalarCopy({}, zero, rows.operands, rows.upper, columns.operands,
             columns.edgeLower, columns.operands, columns.upper);
  scalarCopy(rows.operands, rows.edgeLower, rows.operands, rows.upper, {},
             zero, columns.operands, columns.squaresUpper);
}
