//===- dl-opt.cpp - the dlc optimizer driver ------------------------------===//
//
// mlir-opt with the dl dialect, dlc's passes and pipelines added to every
// upstream dialect, extension and pass.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLDialect.h"
#include "dl/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::dl::registerAllDLPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::dl::DLDialect>();
  // gpu-module-to-binary translates gpu.modules to LLVM IR (as mlir-opt does).
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "dl-opt: the dlc optimizer driver\n", registry));
}
