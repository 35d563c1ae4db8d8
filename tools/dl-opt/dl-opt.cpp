//===- dl-opt.cpp - the dlc optimizer driver ------------------------------===//
//
// mlir-opt with the dl dialect, dlc's passes and pipelines added to every
// upstream dialect, extension and pass.
//
// One difference from mlir-opt: dl-check-sizes runs before the pipeline the
// command line asks for (`--dl-no-input-check` turns it off). It refuses IR
// that upstream's verifiers accept but its printer, folders or passes abort on
// (a tensor.pad width of INT64_MIN with no operand for it, an affine.for step
// of 0, a type whose size overflows 64 bits), so any pass run alone answers
// such input with a diagnostic rather than an abort; the Python pipelines
// start with the same pass.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLDialect.h"
#include "dl/InitAllPasses.h"
#include "dl/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

static llvm::cl::opt<bool> noInputCheck(
    "dl-no-input-check",
    llvm::cl::desc("Do not run dl-check-sizes before the requested passes"),
    llvm::cl::init(false));

int main(int argc, char **argv) {
  // As MlirOptMain(argc, argv, ...) does: a crash prints its stack.
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerAllPasses();
  mlir::dl::registerAllDLPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::dl::DLDialect>();
  // gpu-module-to-binary translates gpu.modules to LLVM IR (as mlir-opt does).
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "dl-opt: the dlc optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return 0;
  }
  if (config.shouldListPasses()) {
    mlir::printRegisteredPasses();
    return 0;
  }
  if (!noInputCheck) {
    mlir::MlirOptMainConfig requested = config;
    config.setPassPipelineSetupFn(
        [requested](mlir::PassManager &pm) -> llvm::LogicalResult {
          pm.addPass(mlir::dl::createDLCheckSizes());
          return requested.setupPassPipeline(pm);
        });
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> file =
      mlir::openInputFile(inputFilename, &errorMessage);
  if (!file) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return 1;
  }
  if (llvm::failed(
          mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
