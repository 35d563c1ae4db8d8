//===- ResolveTarget.cpp - dl-resolve-target ------------------------------===//
//
// Attaches the complete #dl.target to the module: the first step of every
// pipeline (see dl/Target/Target.h). Ours: upstream has no CPU target
// description (IREE's closest is ResolveCPUAndCPUFeatures).
//
//===----------------------------------------------------------------------===//

#include "dl/Target/Passes.h"
#include "dl/Target/Target.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLRESOLVETARGET
#include "dl/Target/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

struct DLResolveTargetPass
    : public dl::impl::DLResolveTargetBase<DLResolveTargetPass> {
  using DLResolveTargetBase::DLResolveTargetBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (threads < 0) {
      module.emitError() << "dl-resolve-target: threads must not be "
                            "negative, but got "
                         << static_cast<int64_t>(threads);
      return signalPassFailure();
    }
    auto given = module->getAttrOfType<TargetAttr>(kTargetAttrName);
    auto emitError = [&] { return module.emitError(); };
    if (!cpu.empty() || !features.empty()) {
      // Another target than the module's: nothing of its description holds.
      int64_t unset = 0;
      given = TargetAttr::getChecked(emitError, ctx, StringRef(),
                                     StringRef(cpu), StringRef(features),
                                     unset, unset, unset, unset, unset, unset,
                                     unset, unset, unset);
      if (!given)
        return signalPassFailure();
    }
    TargetAttr target =
        given ? completeTarget(given) : hostTarget(ctx);
    if (threads > 0)
      target = TargetAttr::get(
          ctx, target.getTriple(), target.getCpu(), target.getFeatures(),
          target.getVectorBits(), target.getVectorRegisters(),
          target.getFmaUnits(), target.getFmaLatency(), target.getL1d(),
          target.getL2(), target.getL3(), target.getCacheLine(),
          static_cast<int64_t>(threads));
    module->setAttr(kTargetAttrName, target);
  }
};

} // namespace
