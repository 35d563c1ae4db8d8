//===- GPUTileForBlocks.cpp - dl-gpu-tile-for-blocks ----------------------===//
//
// Tiles each outermost scf.parallel into GPU blocks of at most `block-size`
// threads and maps blocks and threads (see Passes.td). Ours: upstream's
// scf-parallel-loop-tiling takes one list of sizes for loops of every rank,
// and its min/max bounds defeat convert-parallel-loops-to-gpu. A loop of
// more than three dimensions has its outer ones collapsed into one first
// (upstream's collapseParallelLoops): blocks and threads have three
// dimensions, and a dimension left unmapped loops inside every thread (the
// 6-D im2col of a convolution ran as one block of 256 threads looping over
// every output pixel: 1.9 ms for ResNet-18's first layer on an H100).
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUTILEFORBLOCKS
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

struct DLGPUTileForBlocksPass
    : public dl::impl::DLGPUTileForBlocksBase<DLGPUTileForBlocksPass> {
  using DLGPUTileForBlocksBase::DLGPUTileForBlocksBase;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError()
          << "dl-gpu-tile-for-blocks: block-size must be in 1..1024, but got "
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    // A parallel loop inside another (below a sequential reduction loop,
    // say) runs sequentially within its thread: only the outermost ones
    // are mapped to blocks and threads.
    SmallVector<scf::ParallelOp> nested;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop->getParentOfType<scf::ParallelOp>())
        nested.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : nested) {
      rewriter.setInsertionPoint(loop);
      if (failed(scf::parallelForToNestedFors(rewriter, loop))) {
        loop.emitError("dl-gpu-pipeline: cannot run this nested parallel "
                       "loop sequentially");
        return signalPassFailure();
      }
    }
    SmallVector<scf::ParallelOp> wide;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop.getNumLoops() > 3 && loop.getInitVals().empty())
        wide.push_back(loop);
    });
    for (scf::ParallelOp loop : wide) {
      // Dimensions 0 .. rank-3 become one (the outermost); the two
      // innermost stay, for the threads of a warp to walk along.
      std::vector<unsigned> outer;
      for (unsigned d = 0; d + 2 < loop.getNumLoops(); ++d)
        outer.push_back(d);
      std::vector<unsigned> middle = {loop.getNumLoops() - 2};
      std::vector<unsigned> inner = {loop.getNumLoops() - 1};
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {outer, middle, inner});
    }
    // The collapsed bounds are products of constants: folded, so that the
    // tiling below sees the extents it sizes the blocks by.
    if (!wide.empty())
      (void)applyPatternsGreedily(getOperation(),
                                  RewritePatternSet(&getContext()));
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) { loops.push_back(loop); });
    // Upstream's tiling erases a loop whose results are still used: a
    // parallel reduction (dlc's lowering makes none; hand-written IR can).
    for (scf::ParallelOp loop : loops)
      if (!loop.getInitVals().empty()) {
        loop.emitError("dl-gpu-tile-for-blocks: a parallel loop with "
                       "reductions (init values) cannot be mapped to GPU "
                       "blocks; reduce in an scf.for inside the loop instead");
        return signalPassFailure();
      }
    for (scf::ParallelOp loop : loops)
      tileAndMap(loop);
  }

  /// Tiles `loop` into blocks of at most `blockSize` threads, spread over
  /// its innermost dimensions (innermost first: a dimension of known extent
  /// takes the power of two covering it, the next ones what is left), and
  /// maps the innermost dimension to thread x, the next to y and z, so that
  /// consecutive threads of a warp touch consecutive elements. Blocks: the
  /// dimension with the most blocks (a dynamic one counts as the most; the
  /// outermost of those) goes to x, whose limit is 2^31 - 1, the others, innermost first,
  /// to y and z. Other dimensions, and y/z block counts beyond the
  /// hardware's 65535, loop inside the kernel.
  void tileAndMap(scf::ParallelOp loop) {
    unsigned rank = loop.getNumLoops();
    SmallVector<std::optional<int64_t>> extents;
    for (unsigned d = 0; d < rank; ++d) {
      auto lb = getConstantIntValue(loop.getLowerBound()[d]);
      auto ub = getConstantIntValue(loop.getUpperBound()[d]);
      auto step = getConstantIntValue(loop.getStep()[d]);
      if (lb && ub && step && *step > 0)
        extents.push_back(llvm::divideCeil(std::max<int64_t>(*ub - *lb, 0), *step));
      else
        extents.push_back(std::nullopt);
    }
    SmallVector<int64_t> sizes(rank, 1);
    int64_t left = blockSize;
    for (unsigned level = 0; level < 3 && level < rank && left > 1; ++level) {
      unsigned d = rank - 1 - level;
      int64_t size = left;
      if (extents[d])
        size = std::min<int64_t>(size, llvm::PowerOf2Ceil(std::max<int64_t>(*extents[d], 1)));
      if (level == 2)
        size = std::min<int64_t>(size, 64); // blockDim.z <= 64
      sizes[d] = size;
      left /= size;
    }
    MLIRContext *ctx = loop.getContext();
    // (tileParallelLoop erases `loop`.)
    auto [outer, inner] =
        scf::tileParallelLoop(loop, sizes, /*noMinMaxBounds=*/true);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
    // Blocks along each of the (up to three) innermost dimensions; the
    // largest takes block x.
    unsigned mapped = std::min<unsigned>(rank, 3);
    auto blocks = [&](unsigned d) -> int64_t {
      return extents[d] ? llvm::divideCeil(*extents[d], sizes[d])
                        : std::numeric_limits<int64_t>::max();
    };
    unsigned widest = rank - 1;
    for (unsigned d = rank - mapped; d < rank; ++d)
      if (blocks(d) > blocks(widest) ||
          (blocks(d) == blocks(widest) && d < widest))
        widest = d;
    auto mapping = [&](bool threads) {
      SmallVector<gpu::ParallelLoopDimMappingAttr> dims(
          rank, gpu::ParallelLoopDimMappingAttr::get(
                    ctx, gpu::Processor::Sequential, identity, identity));
      unsigned nextBlock = 1; // y, then z
      for (unsigned level = 0; level < mapped; ++level) {
        unsigned d = rank - 1 - level;
        unsigned index = level;
        if (threads && sizes[d] == 1)
          continue;
        if (!threads) {
          index = d == widest ? 0 : nextBlock++;
          // A y/z grid beyond the limit loops in the kernel (a dynamic
          // extent is assumed to fit).
          if (index > 0 && extents[d] && blocks(d) > 65535)
            continue;
        }
        auto processor = static_cast<gpu::Processor>(
            (threads ? static_cast<unsigned>(gpu::Processor::ThreadX) : 0) +
            index);
        dims[d] = gpu::ParallelLoopDimMappingAttr::get(ctx, processor,
                                                       identity, identity);
      }
      return dims;
    };
    (void)gpu::setMappingAttr(outer, mapping(/*threads=*/false));
    (void)gpu::setMappingAttr(inner, mapping(/*threads=*/true));
  }

};


} // namespace
