//===- Explain.cpp - dl-explain -------------------------------------------===//
//
// `dl-opt --dl-explain model.mlir`: the target the module is compiled for,
// and for each compute-heavy op its strategy and why, one remark each. The
// strategies are chosen (and recorded) as dl-select-strategies does.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"
#include "dl/Transforms/Passes.h"
#include "dl/Transforms/Strategy.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLEXPLAIN
#include "dl/Transforms/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

struct DLExplainPass : public dl::impl::DLExplainBase<DLExplainPass> {
  using DLExplainBase::DLExplainBase;

  void runOnOperation() override {
    Operation *root = getOperation();
    TargetInfo target = TargetInfo::of(root);
    bool given = false;
    for (Operation *op = root; op && !given; op = op->getParentOp())
      given = op->hasAttr(kTargetAttrName);
    RegisterTileShape tile = chooseRegisterTile(target);
    RegisterTileShape lined = chooseRegisterTile(target, /*wholeLines=*/true);
    std::string linedText;
    if (lined.rows != tile.rows || lined.vectors != tile.vectors)
      linedText = " (" + std::to_string(lined.rows) + " x " +
                  std::to_string(lined.vectors) + " where B is read in rows of " +
                  "whole " + std::to_string(target.getCacheLineBytes()) +
                  "-byte lines)";
    root->emitRemark() << "target " << target.getCPU() << " ("
                       << target.getTriple() << ", "
                       << (given ? "from the IR" : "the host") << "): "
                       << target.getVectorRegisters() << " x "
                       << target.getVectorBits() << "-bit vector registers, "
                       << target.getFMAUnits() << " FMA/cycle of latency "
                       << target.getFMALatency() << ", L1d "
                       << target.getL1DataBytes() / 1024 << " KiB, L2 "
                       << target.getL2Bytes() / 1024 << " KiB, "
                       << target.getThreads() << " thread(s); micro-kernel "
                       << tile.rows << " x " << tile.vectors << " vectors"
                       << linedText << "; "
                       << target.getAttr();
    StrategyOptions options;
    options.maxDirectFilterBytes = maxDirectFilterBytes;
    root->walk([&](Operation *op) {
      std::optional<StrategyChoice> choice = strategyOf(op, target, options);
      if (!choice)
        return;
      op->setAttr(kStrategyAttrName, choice->strategy);
      op->emitRemark() << op->getName() << ": "
                       << choice->strategy << " (" << choice->reason << ")";
    });
  }
};

} // namespace
