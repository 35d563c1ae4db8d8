//===- RegisterTile.h - register-tiled micro-kernels ------------*- C++ -*-===//
//
// The transformation behind dl-affine-register-tile, as a public function:
// an affine nest that accumulates into one output (a matmul, a batched
// matmul, a direct or im2col convolution) becomes a packed, cache-blocked,
// register-tiled micro-kernel, with the elementwise nest after it (bias,
// activation, residual add) computed on its tiles. Its policy comes in from
// the target (#dl.target) and the nest's strategy (#dl.strategy); options
// override both (tests pin them).
//
//===----------------------------------------------------------------------===//
#ifndef DL_CODEGEN_CPU_REGISTERTILE_H
#define DL_CODEGEN_CPU_REGISTERTILE_H

#include "dl/IR/DLAttrs.h"
#include "dl/Target/Target.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"

#include <functional>
#include <string>

namespace mlir::dl {

struct RegisterTileOptions {
  /// The micro-kernel's tile (rows x vector registers per row); 0: the
  /// strategy's, else the target's (chooseRegisterTile).
  int64_t rows = 0;
  int64_t vectors = 0;
  /// Cache blocks: output columns per block (a multiple of the tile's
  /// width) and iterations of the outermost reduction loop per block; 0:
  /// the strategy's, else the cache model's (chooseCacheBlocks).
  int64_t columnBlock = 0;
  int64_t reductionBlock = 0;
  /// Copy each cache block of B into a contiguous buffer where that pays.
  bool pack = true;
  /// Compute the elementwise nest that follows on the tiles.
  bool epilogue = true;
  /// Fetch the next rows of an input read in short, gapped runs ahead of
  /// the tiles (affine.prefetch; a grouped NHWC convolution's input).
  bool prefetch = true;
  /// Called with the reason an elementwise nest after the accumulation is
  /// not fused (null: not asked).
  std::function<void(Operation *, const std::string &)> epilogueRefused;
};

struct RegisterTileResult {
  /// What was applied (kind, tile, cache blocks), also recorded on the
  /// outermost new loop as `dl.strategy`.
  StrategyAttr applied;
  /// The elementwise nest computed in the tiles, now erased (compare
  /// only, never dereference); null if none was fused.
  Operation *fusedEpilogue = nullptr;
};

/// Rewrites the accumulation nest rooted at `root` into a micro-kernel for
/// `target` following `strategy` (null: none recorded). Fails, leaving the
/// IR unchanged, where the nest is not one the micro-kernel takes (see
/// dl-affine-register-tile's description for the contract).
FailureOr<RegisterTileResult>
registerTile(affine::AffineForOp root, const TargetInfo &target,
             StrategyAttr strategy, const RegisterTileOptions &options);

} // namespace mlir::dl

#endif // DL_CODEGEN_CPU_REGISTERTILE_H
