//===- GPUNameKernels.cpp - dl-gpu-name-kernels ---------------------------===//
//
// Kernel outlining (upstream's gpu-kernel-outlining) names every gpu.module
// after its host function and a counter (@f_kernel, @f_kernel_0, ...) but
// every kernel inside after the host function alone (@f_kernel): in a
// profiler (CUPTI, Nsight, torch.profiler) the 224 kernels of ResNet-18
// were one name. This pass gives each module's kernel its module's name and
// updates the launches, so that a kernel's name says which module (and
// which line of the gpu stage) it is. Modules holding several kernels keep
// their names.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUNAMEKERNELS
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

struct DLGPUNameKernels
    : public dl::impl::DLGPUNameKernelsBase<DLGPUNameKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // module name -> (old kernel name, new kernel name)
    llvm::StringMap<std::pair<StringAttr, StringAttr>> renamed;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      auto kernels = llvm::to_vector(gpuModule.getOps<gpu::GPUFuncOp>());
      if (kernels.size() != 1 || !kernels.front().isKernel())
        continue;
      gpu::GPUFuncOp kernel = kernels.front();
      StringAttr name = gpuModule.getSymNameAttr();
      if (kernel.getNameAttr() == name)
        continue;
      renamed[name.getValue()] = {kernel.getNameAttr(), name};
      SymbolTable::setSymbolName(kernel, name);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernelModuleName().getValue());
      if (it == renamed.end() ||
          launch.getKernelName() != it->second.first)
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          launch.getKernelModuleName(),
          {FlatSymbolRefAttr::get(it->second.second)}));
    });
  }
};

} // namespace
