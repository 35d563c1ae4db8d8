//===- AffineTile.cpp - dl-affine-tile ------------------------------------===//
//
// Two-level (L2, then L1) tiling of perfect affine loop bands, with tile
// sizes from a cache model of the machine: the largest power-of-two tile
// whose data footprint fits half of each cache level. The register level of
// the hierarchy is dl-affine-register-tile's (accumulation nests); this pass
// serves the other nests, whose loops cannot all walk memory contiguously:
// transposes and permuting copies, where one of the accesses is strided
// whatever the loop order.
//
// Legality: a band is tiled only if it is fully permutable (no dependence
// has a negative component on any loop of the band; see isFullyPermutable
// for why not upstream's isTilingValid). The footprint of a tile is, per memref, the product over its
// dimensions of the range the tile's loops span there (coefficients times
// tile extents), in bytes. Ours: upstream's affine-loop-tile sizes tiles for
// one cache level only and ignores strides; here the band gets an L2 and an
// L1 level from the cache sizes of the target (#dl.target), and with
// `only-strided` only bands that need it are touched. The outermost loop cut
// into several tiles (the one dl-affine-parallelize runs on the threads) has
// its tile shrunk, by at most half, to the size that splits it most evenly
// over the target's threads (balancedTileSize): RegNetY-1.6GF's grouped
// convolutions of 37 groups ran as 32 + 5 groups on 2 threads; balanced,
// timm's RegNetY-1.6GF at batch 8 ran 5% faster on Zen 3 (in-process A/B,
// 229.8 -> 217.6 ms, bit-identical).
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
#include "dl/Target/Target.h"
#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"

#include "mlir/Analysis/FlatLinearValueConstraints.h"
#include "mlir/Dialect/Affine/Analysis/AffineAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/LoopAnalysis.h"
#include "mlir/Dialect/Affine/Analysis/Utils.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/IR/AffineValueMap.h"
#include "mlir/Dialect/Affine/LoopUtils.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINETILE
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using affine::AffineForOp;

namespace {

struct Access {
  Operation *op;
  affine::AffineValueMap map;
  MemRefType type;
};

/// The band's affine accesses; fails on anything else touching memory.
LogicalResult collectAccesses(AffineForOp root, SmallVectorImpl<Access> &out) {
  WalkResult result = root.walk([&](Operation *op) {
    if (isa<affine::AffineReadOpInterface, affine::AffineWriteOpInterface>(op)) {
      affine::MemRefAccess access(op);
      auto type = dyn_cast<MemRefType>(access.memref.getType());
      if (!type || !type.hasStaticShape())
        return WalkResult::interrupt();
      Access entry{op, {}, type};
      access.getAccessMap(&entry.map);
      out.push_back(std::move(entry));
      return WalkResult::advance();
    }
    // A prefetch (dl-affine-register-tile's) changes no value: no access.
    if (isa<AffineForOp, affine::AffineYieldOp, affine::AffineIfOp,
            affine::AffinePrefetchOp>(op) ||
        isMemoryEffectFree(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Bytes touched by one tile of `sizes` (one per band loop).
int64_t footprint(ArrayRef<AffineForOp> band, ArrayRef<int64_t> sizes,
                  ArrayRef<Access> accesses) {
  // Per memref: the widest span of any access, per dimension.
  llvm::MapVector<Value, SmallVector<int64_t>> spans;
  for (const Access &access : accesses) {
    Value memref = affine::MemRefAccess(access.op).memref;
    auto &span = spans[memref];
    span.resize(access.type.getRank(), 1);
    for (unsigned r = 0; r < access.map.getNumResults(); ++r) {
      int64_t extent = 1;
      for (auto [index, size] : llvm::enumerate(sizes)) {
        AffineForOp loop = band[index];
        auto &map = const_cast<affine::AffineValueMap &>(access.map);
        std::optional<int64_t> c = dl::coefficientOf(map, r, loop.getInductionVar());
        extent += std::abs(c.value_or(1)) * (size - 1);
      }
      span[r] = std::max(span[r], std::min(extent, access.type.getDimSize(r)));
    }
  }
  int64_t bytes = 0;
  for (auto &[memref, span] : spans) {
    int64_t elements = 1;
    for (int64_t extent : span)
      elements *= extent;
    bytes += elements *
             dl::elementBytes(cast<MemRefType>(memref.getType()).getElementType());
  }
  return bytes;
}

/// Whether some access moves a cache line (`lineBytes`) or more per
/// iteration of the innermost loop (so that no order walks all memory
/// contiguously).
bool hasStridedInnermostAccess(AffineForOp innermost, ArrayRef<Access> accesses,
                               int64_t lineBytes) {
  Value iv = innermost.getInductionVar();
  for (const Access &access : accesses) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!dl::staticByteSize(access.type) ||
        failed(access.type.getStridesAndOffset(strides, offset)))
      continue;
    int64_t stride = 0;
    auto &map = const_cast<affine::AffineValueMap &>(access.map);
    for (unsigned r = 0; r < map.getNumResults(); ++r)
      stride += dl::coefficientOf(map, r, iv).value_or(0) * strides[r];
    int64_t bytes = dl::elementBytes(access.type.getElementType());
    if (std::abs(stride) * bytes >= lineBytes)
      return true;
  }
  return false;
}

/// Whether tiling `band` is legal: it is fully permutable, i.e. every
/// dependence between its accesses has a non-negative component on every
/// loop of the band (a rectangular tile then never runs an iteration before
/// one it depends on). Upstream's isTilingValid only rejects components
/// whose whole range is negative with lb < ub, so it lets a constant
/// distance of -1 through; this check does not. `why` names the dependence.
bool isFullyPermutable(ArrayRef<AffineForOp> band, std::string &why) {
  SmallVector<Operation *> accesses;
  band.front()->walk([&](Operation *op) {
    if (isa<affine::AffineReadOpInterface, affine::AffineWriteOpInterface>(op))
      accesses.push_back(op);
  });
  unsigned depth = affine::getNestingDepth(band.front());
  for (unsigned d = depth + 1; d <= depth + band.size() + 1; ++d) {
    bool permutable = dl::forEachDependence(
        accesses, d,
        [&](Operation *source, Operation *destination,
            const affine::DependenceResult &result,
            ArrayRef<affine::DependenceComponent> components) {
          if (result.value == affine::DependenceResult::NoDependence)
            return true;
          if (result.value == affine::DependenceResult::Failure) {
            why = "a dependence the analysis cannot describe";
            return false;
          }
          for (unsigned k = depth;
               k < depth + band.size() && k < components.size(); ++k) {
            const affine::DependenceComponent &c = components[k];
            if (c.lb && *c.lb >= 0)
              continue;
            llvm::raw_string_ostream os(why);
            os << "a dependence from '" << source->getName() << "' to '"
               << destination->getName() << "' on "
               << affine::MemRefAccess(source).memref.getType()
               << " goes backwards along loop " << (k - depth) << " of the band";
            if (c.lb && c.ub && *c.lb == *c.ub)
              os << " (distance " << *c.lb << ")";
            return false;
          }
          return true;
        });
    if (!permutable)
      return false;
  }
  return true;
}

/// The tile size, from half of `size` to `size`, whose tiles of a loop of
/// `trip` iterations leave the busiest of `threads` the fewest iterations
/// (dl::busiestThreadIterations), the largest among equals.
int64_t balancedTileSize(int64_t trip, int64_t size, int64_t threads) {
  int64_t best = size, fewest = trip;
  for (int64_t candidate = size; candidate >= std::max<int64_t>(1, (size + 1) / 2);
       --candidate) {
    int64_t busiest = dl::busiestThreadIterations(trip, candidate, threads);
    if (busiest < fewest) {
      best = candidate;
      fewest = busiest;
    }
  }
  return best;
}

struct DLAffineTilePass : public dl::impl::DLAffineTileBase<DLAffineTilePass> {
  using DLAffineTileBase::DLAffineTileBase;

  void runOnOperation() override {
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    dl::TargetInfo target = dl::TargetInfo::of(getOperation());
    for (AffineForOp root : dl::outermostAffineLoops(getOperation()))
      tile(root, target);
  }

  void remark(AffineForOp root, const Twine &message) {
    if (explain)
      root.emitRemark() << "dl-affine-tile: " << message;
  }

  /// The largest power-of-two tile (capped by each trip count) whose
  /// footprint fits `budget`; all-trip-counts when the whole band fits.
  SmallVector<int64_t> sizesFor(ArrayRef<AffineForOp> band,
                                ArrayRef<int64_t> trips,
                                ArrayRef<Access> accesses, int64_t budget) {
    SmallVector<int64_t> sizes(trips);
    if (footprint(band, sizes, accesses) <= budget)
      return sizes;
    int64_t size = 2;
    auto capped = [&](int64_t s) {
      SmallVector<int64_t> result;
      for (int64_t trip : trips)
        result.push_back(std::min(s, trip));
      return result;
    };
    while (size * 2 <= *llvm::max_element(trips) &&
           footprint(band, capped(size * 2), accesses) <= budget)
      size *= 2;
    return capped(size);
  }

  /// Rebalances the size of the outermost loop of `sizes` with more than
  /// one tile for `threads` (balancedTileSize), unless `root` is inside a
  /// parallel loop.
  static void balanceOutermostTiles(AffineForOp root, ArrayRef<int64_t> trips,
                                    SmallVectorImpl<int64_t> &sizes,
                                    int64_t threads) {
    if (threads < 2 || root->getParentOfType<affine::AffineParallelOp>())
      return;
    for (auto [index, trip] : llvm::enumerate(trips)) {
      if (sizes[index] >= trip)
        continue;
      sizes[index] = balancedTileSize(trip, sizes[index], threads);
      return;
    }
  }

  void tile(AffineForOp root, const dl::TargetInfo &target) {
    if (root->hasAttr(dl::kTransposeSquaresAttr))
      return remark(root, "band left alone: a transpose copied by squares "
                          "(each square reads and writes whole vectors)");
    SmallVector<AffineForOp> band;
    affine::getPerfectlyNestedLoops(band, root);
    if (band.size() < 2)
      return;
    SmallVector<int64_t> trips;
    for (AffineForOp loop : band) {
      std::optional<uint64_t> trip = affine::getConstantTripCount(loop);
      if (!trip || loop.getNumIterOperands() != 0 || !loop.hasConstantBounds())
        return remark(root, "band left alone: loops with non-constant bounds "
                            "or carried values");
      if (*trip == 0)
        return remark(root, "band left alone: a loop runs no iteration");
      trips.push_back(static_cast<int64_t>(*trip));
    }
    SmallVector<Access> accesses;
    if (failed(collectAccesses(root, accesses)))
      return remark(root, "band left alone: a memory access that is not "
                          "affine, or a memref without static shape");
    if (onlyStrided && !hasStridedInnermostAccess(band.back(), accesses,
                                                  target.getCacheLineBytes()))
      return; // every access walks memory contiguously already
    SmallVector<int64_t> l2Sizes, l1Sizes;
    if (tileSize > 0) {
      for (int64_t trip : trips)
        l2Sizes.push_back(std::min<int64_t>(tileSize, trip));
      l1Sizes = l2Sizes;
    } else {
      l2Sizes = sizesFor(band, trips, accesses, target.getL2Bytes() / 2);
      // The outermost loop cut into several tiles is the one
      // dl-affine-parallelize runs on the threads (the loops outside it
      // have one tile), and a power of two rarely splits its trip count
      // evenly: 37 groups of a grouped convolution (RegNetY's last stage)
      // in tiles of 32 ran as 32 + 5 on 2 threads, in tiles of 16 as
      // 32 + 5 too (two tiles on one thread); 19 + 18 and 20 + 17 with
      // the tiles balanced. Smaller tiles keep the footprint within the
      // budget; a nest inside a parallel loop already runs on one thread.
      balanceOutermostTiles(root, trips, l2Sizes, target.getThreads());
      l1Sizes = sizesFor(band, l2Sizes, accesses, target.getL1DataBytes() / 2);
      if (l2Sizes == SmallVector<int64_t>(trips))
        balanceOutermostTiles(root, trips, l1Sizes, target.getThreads());
    }
    if (l2Sizes == SmallVector<int64_t>(trips) && l1Sizes == l2Sizes)
      return remark(root, "band left alone: its data fits in L1");
    std::string why;
    if (!isFullyPermutable(band, why))
      return remark(root, "band left alone: not fully permutable: " + why);

    auto unsignedSizes = [](ArrayRef<int64_t> sizes) {
      return SmallVector<unsigned>(sizes.begin(), sizes.end());
    };
    SmallVector<AffineForOp> tiled;
    bool tiledL2 = l2Sizes != SmallVector<int64_t>(trips);
    if (tiledL2 && failed(affine::tilePerfectlyNested(
                       band, unsignedSizes(l2Sizes), &tiled)))
      return remark(root, "band left alone: upstream tiling failed");
    std::string sizes;
    llvm::raw_string_ostream os(sizes);
    if (tiledL2) {
      os << "L2 tiles ";
      llvm::interleave(l2Sizes, os, "x");
    }
    AffineForOp outermost = tiledL2 ? tiled.front() : AffineForOp();
    if (l1Sizes != l2Sizes) {
      // The L1 level inside each L2 tile: the intra-tile loops, tiled again.
      SmallVector<AffineForOp> intra =
          tiledL2 ? SmallVector<AffineForOp>(
                        ArrayRef<AffineForOp>(tiled).drop_front(band.size()))
                  : band;
      SmallVector<AffineForOp> inner;
      if (succeeded(affine::tilePerfectlyNested(intra, unsignedSizes(l1Sizes),
                                                &inner))) {
        os << (tiledL2 ? ", " : "") << "L1 tiles ";
        llvm::interleave(l1Sizes, os, "x");
        if (!outermost)
          outermost = inner.front();
      }
    }
    if (outermost)
      remark(outermost, "tiled (" + sizes + ")");
  }
};

} // namespace
