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

/// argv with dl-check-sizes in front of the passes it asks for: first in a
/// --pass-pipeline (-p) string ("anchor(dl-check-sizes,...)"), or as the first
/// pass flag. Rewriting the command line keeps the requested passes exactly
/// as written (no round trip through their textual form). Nothing changes
/// with --dl-no-input-check, which the option below then accepts.
static std::vector<std::string> withInputCheck(int argc, char **argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (const std::string &arg : args)
    if (arg == "--dl-no-input-check" || arg == "-dl-no-input-check")
      return args;
  auto insertCheck = [](std::string pipeline) {
    size_t open = pipeline.find('(');
    if (open == std::string::npos) // an op-agnostic list: "cse,canonicalize"
      return pipeline.empty() ? std::string("dl-check-sizes")
                              : "dl-check-sizes," + pipeline;
    size_t next = pipeline.find_first_not_of(" \t", open + 1);
    bool empty = next != std::string::npos && pipeline[next] == ')';
    return pipeline.insert(open + 1, empty ? "dl-check-sizes" : "dl-check-sizes,");
  };
  for (size_t i = 1; i < args.size(); ++i) {
    for (llvm::StringRef flag : {"--pass-pipeline", "-pass-pipeline", "-p"}) {
      llvm::StringRef arg(args[i]);
      if (arg == flag && i + 1 < args.size()) {
        args[i + 1] = insertCheck(args[i + 1]);
        return args;
      }
      if (arg.starts_with((flag + "=").str())) {
        args[i] = (flag + "=").str() + insertCheck(arg.drop_front(flag.size() + 1).str());
        return args;
      }
    }
  }
  args.insert(args.begin() + 1, "--dl-check-sizes");
  return args;
}

// Only accepted here (withInputCheck reads the command line before LLVM does).
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

  std::vector<std::string> args = withInputCheck(argc, argv);
  std::vector<char *> pointers;
  for (std::string &arg : args)
    pointers.push_back(arg.data());
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      static_cast<int>(pointers.size()), pointers.data(),
      "dl-opt: the dlc optimizer driver\n", registry);
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
