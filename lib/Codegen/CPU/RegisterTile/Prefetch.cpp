//===- Prefetch.cpp - the next row of a gapped input, fetched ahead -------===//
//
// Ours (upstream's affine passes emit no prefetches). A grouped convolution
// in NHWC reads, for every pixel of its window, the channels of one group:
// a run of 24 floats (96 bytes) every 1344 bytes (RegNetY-1.6GF, 336
// channels in 14 groups). The hardware prefetchers follow streams of whole
// lines, not such runs, and a strided convolution reads each input row
// once or twice only: its micro-kernel waited on the loads (28x28 -> 14x14,
// stride 2, batch 8: 0.55 ms per image against 0.24 at batch 1, whose
// input was still in L2). So where the input the micro-kernel broadcasts
// (A) is read along the innermost reduction loop in a run of at most two
// cache lines that the next reduction loop out does not continue (a gap),
// each tile fetches, at every iteration of the reduction loops around the
// run, the lines of that run one iteration ahead of the innermost outer
// loop A depends on (the next output row of a convolution), for each of
// its rows: `affine.prefetch` (read, locality 3), in an `affine.if` that
// leaves out the last iteration (no address outside the buffer). An NHWC convolution
// with all channels in one group reads kw x channels contiguously (the
// run continues: the hardware follows it); a matmul's rows are long runs.
//
//===----------------------------------------------------------------------===//

#include "RegisterTileImpl.h"

#include "dl/Codegen/CPU/AffineUtils.h"

#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IntegerSet.h"

using namespace mlir;
using namespace mlir::dl::register_tile;

namespace {

/// How many elements apart `load`'s addresses are for consecutive
/// iterations of `loop` (static strides only).
std::optional<int64_t> iterationStride(affine::AffineLoadOp load,
                                       AffineForOp loop) {
  affine::MemRefAccess access(load);
  affine::AffineValueMap map;
  access.getAccessMap(&map);
  std::optional<int64_t> stride =
      dl::elementStride(access, map, loop.getInductionVar());
  if (!stride)
    return std::nullopt;
  return *stride * loop.getStepAsInt();
}

bool dependsOn(affine::AffineLoadOp load, AffineForOp loop) {
  return llvm::is_contained(load.getMapOperands(), loop.getInductionVar());
}

} // namespace

SmallVector<Prefetch>
mlir::dl::register_tile::planPrefetches(Accumulation &acc,
                                        int64_t lineBytes) {
  SmallVector<Prefetch> plans;
  if (!acc.rowLoop || acc.reductions.size() < 2 || acc.outerParallel.empty())
    return plans;
  AffineForOp run = acc.reductions.back();
  AffineForOp around = acc.reductions[acc.reductions.size() - 2];
  std::optional<uint64_t> count = affine::getConstantTripCount(run);
  if (!count || !run.hasConstantBounds() || run.getStepAsInt() != 1)
    return plans;
  for (Operation &op : acc.nest.back().getBody()->without_terminator()) {
    auto load = dyn_cast<affine::AffineLoadOp>(op);
    if (!load || acc.loads.lookup(load) != Along::Invariant ||
        !dependsOn(load, acc.rowLoop) ||
        !contiguousAlong(load, run.getInductionVar()))
      continue;
    unsigned bits = load.getMemRefType().getElementTypeBitWidth();
    if (bits % 8 != 0)
      continue;
    int64_t elementBytes = bits / 8;
    // Long runs are streams the hardware follows.
    if (static_cast<int64_t>(*count) * elementBytes > 2 * lineBytes)
      continue;
    // The loop around the run continues it: one longer run.
    std::optional<int64_t> gap = iterationStride(load, around);
    if (!gap || *gap == static_cast<int64_t>(*count))
      continue;
    AffineForOp next;
    for (AffineForOp loop : acc.outerParallel)
      if (dependsOn(load, loop))
        next = loop;
    std::optional<uint64_t> nextCount =
        next ? affine::getConstantTripCount(next) : std::nullopt;
    if (!nextCount || *nextCount < 2 || !next.hasConstantBounds())
      continue;
    Prefetch plan{load, next, run, {}};
    int64_t lineElements = std::max<int64_t>(1, lineBytes / elementBytes);
    for (int64_t offset = 0; offset < static_cast<int64_t>(*count);
         offset += lineElements)
      plan.offsets.push_back(offset);
    if (plan.offsets.back() != static_cast<int64_t>(*count) - 1)
      plan.offsets.push_back(*count - 1);
    plans.push_back(std::move(plan));
  }
  return plans;
}

void mlir::dl::register_tile::emitPrefetches(OpBuilder &b, Location loc,
                                             ArrayRef<Prefetch> prefetches,
                                             Accumulation &acc,
                                             const IRMapping &mapping,
                                             ArrayRef<Value> rowIndex) {
  MLIRContext *ctx = b.getContext();
  for (Prefetch plan : prefetches) {
    // The next iteration of `next`; none after its last.
    int64_t step = plan.next.getStepAsInt();
    int64_t last = plan.next.getConstantLowerBound() +
                   (*affine::getConstantTripCount(plan.next) - 1) * step;
    AffineExpr d0 = getAffineDimExpr(0, ctx);
    Value current = mapping.lookupOrDefault(plan.next.getInductionVar());
    auto notLast = affine::AffineIfOp::create(
        b, loc, IntegerSet::get(1, 0, {last - step - d0}, {false}),
        ValueRange{current}, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(notLast.getThenBlock());
    Value ahead = affine::AffineApplyOp::create(
        b, loc, AffineMap::get(1, 0, d0 + step), ValueRange{current});
    int64_t start = plan.run.getConstantLowerBound();
    SmallVector<Value> along;
    for (int64_t offset : plan.offsets)
      along.push_back(arith::ConstantIndexOp::create(b, loc, start + offset));
    for (Value row : rowIndex) {
      for (Value at : along) {
        SmallVector<Value> operands;
        for (Value operand : plan.load.getMapOperands()) {
          if (operand == acc.rowLoop.getInductionVar())
            operands.push_back(row);
          else if (operand == plan.run.getInductionVar())
            operands.push_back(at);
          else if (operand == plan.next.getInductionVar())
            operands.push_back(ahead);
          else
            operands.push_back(mapping.lookupOrDefault(operand));
        }
        affine::AffinePrefetchOp::create(
            b, loc, plan.load.getMemRef(), plan.load.getAffineMap(), operands,
            /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
      }
    }
  }
}
