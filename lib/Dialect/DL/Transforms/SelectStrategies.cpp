//===- SelectStrategies.cpp - dl-select-strategies ------------------------===//
//
// Records on each compute-heavy dl op the code-generation strategy chosen
// for the module's target (#dl.strategy as `dl.strategy`; the policy is
// chooseStrategy, lib/Dialect/DL/Transforms/Strategy.cpp). An op that
// already carries one keeps it, so a strategy can be forced in the IR. The
// lowering (convert-dl-to-linalg), dl-layout and dl-affine-register-tile
// obey what is recorded.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"
#include "dl/Transforms/Passes.h"
#include "dl/Transforms/Strategy.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLSELECTSTRATEGIES
#include "dl/Transforms/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

struct DLSelectStrategiesPass
    : public dl::impl::DLSelectStrategiesBase<DLSelectStrategiesPass> {
  using DLSelectStrategiesBase::DLSelectStrategiesBase;

  void runOnOperation() override {
    TargetInfo target = TargetInfo::of(getOperation());
    StrategyOptions options;
    options.maxDirectFilterBytes = maxDirectFilterBytes;
    getOperation()->walk([&](Operation *op) {
      if (op->hasAttr(kStrategyAttrName))
        return;
      if (std::optional<StrategyChoice> choice =
              chooseStrategy(op, target, options))
        op->setAttr(kStrategyAttrName, choice->strategy);
    });
  }
};

} // namespace
