//===- LLVMTargetAttributes.cpp - dl-llvm-target-attributes ---------------===//
//
// The last step of the CPU pipeline: the llvm dialect carries the target's
// triple, CPU and features (#dl.target), so that LLVM compiles for the CPU
// the IR's decisions were made for, not for whatever machine runs the JIT.
// Features are LLVM's `target-features` syntax already: changes relative to
// the CPU's own list.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/Passes.h"
#include "dl/Target/Target.h"

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLLLVMTARGETATTRIBUTES
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

struct DLLLVMTargetAttributesPass
    : public dl::impl::DLLLVMTargetAttributesBase<DLLLVMTargetAttributesPass> {
  using DLLLVMTargetAttributesBase::DLLLVMTargetAttributesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    dl::TargetInfo target = dl::TargetInfo::of(module);
    module->setAttr(LLVM::LLVMDialect::getTargetTripleAttrName(),
                    StringAttr::get(ctx, target.getTriple()));
    auto cpu = StringAttr::get(ctx, target.getCPU());
    auto features =
        LLVM::TargetFeaturesAttr::get(ctx, target.getAttr().getFeatures());
    module.walk([&](LLVM::LLVMFuncOp func) {
      if (func.isExternal())
        return;
      func.setTargetCpuAttr(cpu);
      func.setTargetFeaturesAttr(features);
    });
  }
};

} // namespace
