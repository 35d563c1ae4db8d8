//===- DLAttrs.cpp - #dl.target and #dl.strategy --------------------------===//
//
// Storage, parsing and printing are generated from DLAttrs.td; this file
// holds their verifiers. A #dl.target may be partial (dl-resolve-target
// completes it), but what it says must make sense: a CPU LLVM knows for the
// triple's architecture, features written as LLVM writes them, sizes that
// are not negative.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLAttrs.h"
#include "dl/IR/DLDialect.h"
#include "dl/IR/DLOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/TargetParser/AArch64TargetParser.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

using namespace mlir;
using namespace mlir::dl;

#include "dl/IR/DLEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dl/IR/DLAttrs.cpp.inc"

void DLDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dl/IR/DLAttrs.cpp.inc"
      >();
}

namespace {

enum class CPUArch { Unknown, X86, AArch64 };

CPUArch archOfTriple(StringRef triple) {
  llvm::Triple parsed(triple);
  if (parsed.getArch() == llvm::Triple::x86_64)
    return CPUArch::X86;
  if (parsed.getArch() == llvm::Triple::aarch64)
    return CPUArch::AArch64;
  return CPUArch::Unknown;
}

bool isX86CPU(StringRef cpu) {
  return llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) != llvm::X86::CK_None;
}

bool isAArch64CPU(StringRef cpu) {
  return llvm::AArch64::parseCpu(cpu).has_value();
}

} // namespace

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef triple, StringRef cpu,
                                 StringRef features, int64_t vectorBits,
                                 int64_t vectorRegisters, int64_t fmaUnits,
                                 int64_t fmaLatency, int64_t l1d, int64_t l2,
                                 int64_t l3, int64_t cacheLine,
                                 int64_t threads) {
  CPUArch arch = CPUArch::Unknown;
  if (!triple.empty()) {
    arch = archOfTriple(triple);
    if (arch == CPUArch::Unknown)
      return emitError() << "#dl.target: triple '" << triple
                         << "' is not one dlc generates CPU code for "
                            "(x86_64 or aarch64)";
  }
  if (!cpu.empty() && cpu != "host") {
    bool x86 = isX86CPU(cpu), aarch64 = isAArch64CPU(cpu);
    if ((arch == CPUArch::X86 && !x86) || (arch == CPUArch::AArch64 && !aarch64) ||
        (arch == CPUArch::Unknown && !x86 && !aarch64))
      return emitError() << "#dl.target: unknown CPU '" << cpu << "'"
                         << (triple.empty() ? Twine("")
                                            : " for triple '" + triple + "'")
                         << "; give an LLVM CPU name (znver4, haswell, "
                            "skylake-avx512, neoverse-v1, apple-m1, ...) or "
                            "host";
  }
  SmallVector<StringRef> parts;
  if (!features.empty())
    features.split(parts, ',');
  for (StringRef feature : parts)
    if (feature.size() < 2 || (feature[0] != '+' && feature[0] != '-'))
      return emitError() << "#dl.target: features must be a comma-separated "
                            "list of +name or -name, but got '"
                         << feature << "' in \"" << features << "\"";
  if (vectorBits < 0 || vectorBits % 32 != 0)
    return emitError() << "#dl.target: vector_bits must be a non-negative "
                          "multiple of 32, but got "
                       << vectorBits;
  std::pair<StringRef, int64_t> sizes[] = {
      {"vector_registers", vectorRegisters}, {"fma_units", fmaUnits},
      {"fma_latency", fmaLatency},           {"l1d", l1d},
      {"l2", l2},                            {"l3", l3},
      {"cache_line", cacheLine},             {"threads", threads}};
  for (auto [name, value] : sizes)
    if (value < 0)
      return emitError() << "#dl.target: " << name
                         << " must not be negative, but got " << value;
  return success();
}

LogicalResult StrategyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StrategyKind kind, int64_t rows,
                                   int64_t vectors, int64_t columnBlock,
                                   int64_t reductionBlock, StringRef layout) {
  if (rows < 0 || vectors < 0 || columnBlock < 0 || reductionBlock < 0)
    return emitError() << "#dl.strategy: rows, vectors, column_block and "
                          "reduction_block must not be negative";
  if ((rows == 0) != (vectors == 0))
    return emitError() << "#dl.strategy: rows and vectors are given together "
                          "(both 0: chosen from the target), but got rows = "
                       << rows << ", vectors = " << vectors;
  // The micro-kernel is unrolled over its tile: one accumulator per row and
  // vector. Four times the largest register file (32 vectors) bounds it, so a
  // mistyped tile is an error, not minutes of unrolling (the fuzzer found
  // rows = 65536 compiling for ever with a dynamic M).
  constexpr int64_t kMaxAccumulators = 128;
  if (rows > kMaxAccumulators || vectors > kMaxAccumulators ||
      rows * vectors > kMaxAccumulators)
    return emitError() << "#dl.strategy: a register tile of rows x vectors = "
                       << rows << " x " << vectors << " exceeds "
                       << kMaxAccumulators
                       << " accumulators (4x the largest register file)";
  bool tiled = kind != StrategyKind::Loops &&
               kind != StrategyKind::VectorizedReduction;
  if (!tiled && (rows || columnBlock || reductionBlock))
    return emitError() << "#dl.strategy: " << stringifyStrategyKind(kind)
                       << " has no register tile or cache blocks";
  if (!layout.empty() && layout != "NCHW" && layout != "NHWC")
    return emitError() << "#dl.strategy: layout must be NCHW or NHWC, but "
                          "got '"
                       << layout << "'";
  return success();
}

bool StrategyAttr::isRegisterTiled() const {
  return getKind() != StrategyKind::Loops &&
         getKind() != StrategyKind::VectorizedReduction;
}

LogicalResult DLDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attribute) {
  if (attribute.getName() == kTargetAttrName) {
    if (!isa<TargetAttr>(attribute.getValue()))
      return op->emitError()
             << "'dl.target' must be a #dl.target attribute (for example "
                "#dl.target<cpu = \"znver4\">), but got "
             << attribute.getValue();
    if (!isa<ModuleOp, FunctionOpInterface>(op))
      return op->emitError() << "'dl.target' belongs on a module or a "
                                "function, not on '"
                             << op->getName() << "'";
    return success();
  }
  if (attribute.getName() != kStrategyAttrName)
    return success();
  auto strategy = dyn_cast<StrategyAttr>(attribute.getValue());
  if (!strategy)
    return op->emitError()
           << "'dl.strategy' must be a #dl.strategy attribute (for example "
              "#dl.strategy<kind = im2col_gemm>), but got "
           << attribute.getValue();
  // On dl ops, the kind must be one the op's lowering knows; on the linalg
  // ops and loop nests it is carried to, any.
  if (!isa<DLDialect>(op->getDialect()))
    return success();
  StrategyKind kind = strategy.getKind();
  auto refuse = [&](StringRef accepted) {
    return op->emitError() << "'dl.strategy' of '" << op->getName()
                           << "' must be " << accepted << ", but got "
                           << stringifyStrategyKind(kind);
  };
  if (isa<MatmulOp>(op)) {
    if (kind != StrategyKind::RegisterTiledGemm && kind != StrategyKind::Loops)
      return refuse("register_tiled_gemm or loops");
  } else if (isa<Conv2dOp>(op)) {
    if (kind != StrategyKind::Im2colGemm && kind != StrategyKind::Direct)
      return refuse("im2col_gemm or direct");
  } else if (isa<ReduceSumOp, ReduceMaxOp, ReduceMinOp, ReduceMeanOp,
                 SoftmaxOp, LogSoftmaxOp, LayerNormOp, ArgmaxOp, ArgminOp>(op)) {
    if (kind != StrategyKind::VectorizedReduction)
      return refuse("vectorized_reduction");
  } else if (isa<MaxPool2dOp, AvgPool2dOp>(op)) {
    if (kind != StrategyKind::Direct)
      return refuse("direct (with the layout it runs in)");
  } else {
    return op->emitError() << "'" << op->getName()
                           << "' has no code-generation strategy; "
                              "dl.strategy is for matmuls, convolutions, "
                              "poolings and reductions";
  }
  if (!strategy.getLayout().empty() &&
      !isa<Conv2dOp, MaxPool2dOp, AvgPool2dOp>(op))
    return op->emitError() << "'dl.strategy' of '" << op->getName()
                           << "' has a layout, which only convolutions and "
                              "poolings have";
  return success();
}
