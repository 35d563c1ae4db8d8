//===- AffineRegisterTile.cpp - dl-affine-register-tile -------------------===//
//
// The pass: each outermost affine nest of the function that matches the
// micro-kernel's contract is rewritten by dl::registerTile
// (RegisterTile.cpp), following the nest's #dl.strategy (put on its
// outermost loop by dl-linalg-to-affine-loops) and the target
// (#dl.target). A nest whose strategy is `loops` is left alone. The pass
// holds no state between functions.
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
#include "dl/Codegen/CPU/RegisterTile.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLAFFINEREGISTERTILE
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;
using affine::AffineForOp;

namespace {

struct DLAffineRegisterTilePass
    : public dl::impl::DLAffineRegisterTileBase<DLAffineRegisterTilePass> {
  using DLAffineRegisterTileBase::DLAffineRegisterTileBase;

  void runOnOperation() override {
    if (rows < 0 || vectors < 0 || (rows == 0) != (vectors == 0)) {
      getOperation().emitError()
          << "dl-affine-register-tile: rows and vectors must be given "
             "together, positive (or both 0: from the target), but got "
             "rows = "
          << static_cast<int64_t>(rows) << ", vectors = "
          << static_cast<int64_t>(vectors);
      return signalPassFailure();
    }
    if (failed(dl::normalizeAffineLoops(getOperation())))
      return signalPassFailure();
    if (columnBlock < 0 || reductionBlock < 0) {
      getOperation().emitError()
          << "dl-affine-register-tile: column-block and reduction-block must "
             "not be negative";
      return signalPassFailure();
    }
    TargetInfo target = TargetInfo::of(getOperation());
    RegisterTileOptions options;
    options.rows = rows;
    options.vectors = vectors;
    options.columnBlock = columnBlock;
    options.reductionBlock = reductionBlock;
    options.pack = pack;
    options.epilogue = epilogue;
    options.prefetch = prefetch;
    if (report)
      options.epilogueRefused = [](Operation *nest, const std::string &why) {
        nest->emitRemark()
            << "dl-affine-register-tile: the elementwise nest after this "
               "accumulation is not fused: "
            << why;
      };

    SmallVector<AffineForOp> roots = outermostAffineLoops(getOperation());
    // Epilogue nests computed in the tiles of the nest before them are
    // erased: their (dangling) addresses, to skip them.
    DenseSet<Operation *> fused;
    for (AffineForOp root : roots) {
      if (fused.contains(root))
        continue;
      auto strategy = root->getAttrOfType<StrategyAttr>(kStrategyAttrName);
      if (strategy && strategy.getKind() == StrategyKind::Loops) {
        if (report)
          root.emitRemark() << "dl-affine-register-tile: left as loops by "
                               "its strategy "
                            << strategy;
        continue;
      }
      FailureOr<RegisterTileResult> result =
          registerTile(root, target, strategy, options);
      if (succeeded(result) && result->fusedEpilogue)
        fused.insert(result->fusedEpilogue);
    }
    // How many elementwise nests now run inside register tiles (the
    // kernels fusion saved at this level), for reports; added to those
    // dl-integer-matmul computed in its kernels' tiles.
    if (!fused.empty()) {
      auto before =
          getOperation()->getAttrOfType<IntegerAttr>("dl.fused_epilogues");
      getOperation()->setAttr(
          "dl.fused_epilogues",
          IntegerAttr::get(IntegerType::get(&getContext(), 64),
                           (before ? before.getInt() : 0) +
                               static_cast<int64_t>(fused.size())));
    }
  }
};

} // namespace
