//===- ObjectCode.cpp - LLVM code generation in parallel parts ------------===//
//
// dlc's own replacement for the one step of MLIR's ExecutionEngine that
// dominates a model's cold compile: LLVM's optimization and code generation,
// which the ORC JIT runs on one thread over the whole module (4-6 s of
// EfficientNet-B0's or Swin-T's 11-12 s on Zen 5). Upstream has no parallel
// path for an MLIR module (llvm::splitCodeGen, which LTO uses, is not in the
// wheels, and it optimizes the whole module on one thread first), so:
//
//   1. translate the llvm-dialect module to LLVM IR, set the host's triple
//      and data layout and add the `_mlir_<f>` packed wrappers as
//      ExecutionEngine::create does (the code calls them the same way), but
//      for the functions callable from outside only (addPackedWrappers);
//   2. split it into parts of about equal size: every function definition
//      goes to the part with the fewest instructions so far (largest first),
//      a local function with every function that calls it;
//      small local constants are copied into every part (so that loads of
//      them still fold), larger constants go with a function that reads
//      them, variables to part 0; local symbols other parts refer to
//      become hidden external ones, linkable across parts but not exported;
//   3. optimize (LLVM's default pipeline, as the ExecutionEngine's
//      makeOptimizingTransformer builds it) and compile each part on its own
//      thread, in its own LLVMContext (each part travels as bitcode, as
//      llvm::splitCodeGen does), with a TargetMachine made like the
//      ExecutionEngine's (the host's, PIC), loop strength reduction off
//      and LLVM's full unrolling capped (see ScopedOption: dlc's codegen
//      unrolls the loops where that matters).
//
// DLC_LLVM_OPTIONS passes options to LLVM as on llc's command line (e.g.
// `-disable-lsr=false`); DLC_LLVM_TIME_PASSES=1 prints LLVM's pass timings.
//
// The objects are linked into one shared library by the caller (Python,
// with the system C compiler, as dlc's disk cache already does): the
// library is then both what runs and what the cache stores.
//
// The GIL: dlcObjectJobCreate reads the MLIR module (call it holding the
// GIL, as every binding does); dlcObjectJobRun touches no MLIR object.
//
//===----------------------------------------------------------------------===//

#include "dl-c/DL.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mlir;

struct DlcObjectJobImpl {
  int optLevel = 3;
  /// Each part's bitcode.
  std::vector<llvm::SmallVector<char, 0>> parts;
  /// Each part's instruction count (its share of the work).
  std::vector<uint64_t> weights;
};

namespace {

void report(MlirStringCallback onError, void *userData, const std::string &text) {
  if (onError)
    onError(mlirStringRefCreate(text.data(), text.size()), userData);
}

/// ExecutionEngine's packFunctionArguments (static there): for each defined
/// function `f` callable from outside, `_mlir_f(ptr args)` loads f's
/// arguments from the pointers in `args`, calls f and stores its result
/// through the pointer after them. Like upstream's, none for a function of
/// local linkage; unlike it, none for one `private` in the MLIR module
/// either (`private`: the names in `hidden`): the parts and loops dlc
/// outlines keep external linkage (the parts of the split are linked
/// across), and their wrappers, which load hundreds of arguments, were a
/// third of Swin-T's machine code that nobody calls (dlc calls the entry's
/// `_mlir__mlir_ciface_<f>` only).
void addPackedWrappers(llvm::Module &module, const llvm::StringSet<> &hidden) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  std::vector<llvm::Function *> defined;
  for (llvm::Function &function : module.functions())
    if (!function.isDeclaration() && !function.hasLocalLinkage() &&
        !hidden.contains(function.getName()))
      defined.push_back(&function);
  for (llvm::Function *function : defined) {
    auto *type = llvm::FunctionType::get(builder.getVoidTy(), builder.getPtrTy(),
                                         /*isVarArg=*/false);
    auto callee =
        module.getOrInsertFunction("_mlir_" + function->getName().str(), type);
    auto *wrapper = llvm::cast<llvm::Function>(callee.getCallee());
    auto *block = llvm::BasicBlock::Create(context, "", wrapper);
    builder.SetInsertPoint(block);
    llvm::Value *list = wrapper->arg_begin();
    llvm::SmallVector<llvm::Value *, 8> arguments;
    for (auto [index, argument] : llvm::enumerate(function->args())) {
      llvm::Value *slot = builder.CreateGEP(builder.getPtrTy(), list,
                                            builder.getInt64(index));
      llvm::Value *pointer = builder.CreateLoad(builder.getPtrTy(), slot);
      arguments.push_back(builder.CreateLoad(argument.getType(), pointer));
    }
    llvm::Value *result = builder.CreateCall(function, arguments);
    if (!result->getType()->isVoidTy()) {
      llvm::Value *slot =
          builder.CreateGEP(builder.getPtrTy(), list,
                            builder.getInt64(function->arg_size()));
      builder.CreateStore(result, builder.CreateLoad(builder.getPtrTy(), slot));
    }
    builder.CreateRetVoid();
  }
}

/// The host's TargetMachine, position-independent: what the
/// ExecutionEngine's C API makes (its CodeGenOptLevel stays the default).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> hostMachine() {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setRelocationModel(llvm::Reloc::PIC_);
  return builder->createTargetMachine();
}

uint64_t instructionCount(const llvm::Function &function) {
  uint64_t count = 0;
  for (const llvm::BasicBlock &block : function)
    count += block.size();
  return count;
}

/// Local constants of at most this many bytes are copied into every part
/// (loads of them fold; each part's optimizer deletes its unused copies);
/// larger ones are defined once, in the part of a function that reads them.
constexpr uint64_t kCopiedConstantBytes = 4096;

bool isCopiedConstant(const llvm::GlobalValue &value) {
  auto *variable = llvm::dyn_cast<llvm::GlobalVariable>(&value);
  return variable && variable->isConstant() && variable->hasLocalLinkage() &&
         variable->getParent()->getDataLayout().getTypeAllocSize(
             variable->getValueType()) <= kCopiedConstantBytes;
}

/// Calls `visit` with each global value (a function, or a variable whose
/// initializer) that uses `value`, through constant expressions too.
void forEachUser(const llvm::Value *value,
                 llvm::function_ref<void(const llvm::GlobalValue *)> visit,
                 unsigned depth = 0) {
  for (const llvm::User *user : value->users()) {
    if (auto *instruction = llvm::dyn_cast<llvm::Instruction>(user))
      visit(instruction->getFunction());
    else if (auto *variable = llvm::dyn_cast<llvm::GlobalVariable>(user))
      visit(variable);
    else if (depth < 16 && llvm::isa<llvm::Constant>(user))
      forEachUser(user, visit, depth + 1);
  }
}

/// Union-find over the module's function definitions.
struct Clusters {
  llvm::DenseMap<const llvm::Function *, const llvm::Function *> parent;
  const llvm::Function *find(const llvm::Function *function) {
    while (parent.lookup(function) != function)
      function = parent[function] = parent.lookup(parent.lookup(function));
    return function;
  }
  void join(const llvm::Function *a, const llvm::Function *b) {
    parent[find(a)] = find(b);
  }
};

/// Whether the module can be cut at function boundaries: no aliases, ifuncs
/// or comdats (which tie symbols together), no appending arrays such as
/// llvm.global_ctors (which must not become declarations); dlc's CPU
/// modules have none.
bool splittable(const llvm::Module &module) {
  if (!module.aliases().empty() || !module.ifuncs().empty())
    return false;
  for (const llvm::GlobalVariable &variable : module.globals())
    if (variable.hasAppendingLinkage())
      return false;
  for (const llvm::GlobalObject &object : module.global_objects())
    if (object.hasComdat())
      return false;
  return true;
}

/// LLVM's default pipeline at `optLevel`, as the ExecutionEngine's
/// makeOptimizingTransformer builds it. DLC_LLVM_TIME_PASSES=1 prints each
/// pass's time to stderr (the parts then compile on one thread: LLVM's
/// timers are global).
void optimize(llvm::Module &module, int optLevel, llvm::TargetMachine *machine) {
  llvm::PipelineTuningOptions options;
  options.LoopUnrolling = true;
  options.LoopInterleaving = true;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  bool timed = getenv("DLC_LLVM_TIME_PASSES") != nullptr;
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::TimePassesHandler timer(timed);
  if (timed)
    timer.registerCallbacks(callbacks);
  llvm::PassBuilder builder(machine, options, std::nullopt, &callbacks);
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::OptimizationLevel level[] = {
      llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(level[optLevel]);
  passes.run(module, modules);
  if (timed) {
    timer.setOutStream(llvm::errs());
    timer.print();
  }
}

/// An LLVM command-line option set to `value` while dlc's parts compile,
/// unless DLC_LLVM_OPTIONS set it. Scoped, not set for the process: the
/// GPU pipeline's NVPTX code generation and the ExecutionEngine's JIT (small
/// modules) keep LLVM's defaults outside dlc's compiles. Counted:
/// overlapping compiles share the setting, and the last one out restores the
/// default. Two are used (dlcObjectJobRun):
///
/// `-disable-lsr`: loop strength reduction off (the code generator reads it
/// when it builds its passes). On dlc's loops it took 55% of the code
/// generator's time (Swin-T: 3.3 of 6.1 s; all of LLVM 9.4 -> 5.4 s on one
/// Zen 5 core) and changed no model's speed measurably (EfficientNet-B0,
/// Swin-T, ResNet-50, BERT-base, one thread, two runs each, within 2%): dlc's
/// loops index with affine maps LLVM already folds into addressing modes.
///
/// `-unroll-full-max-count=1`: LLVM's full unrolling capped. A short loop
/// still unrolls completely where it fits partial unrolling's budget (150
/// instructions at -O3), but no longer where only full unrolling's larger
/// one admits it (300, up to 4x where LLVM expects the copies to simplify),
/// nor in the early LoopFullUnrollPass; partial and runtime unrolling stay
/// (turning those off cost ResNet-50 4%). The cap saves a third of LLVM's
/// time (CPU seconds, Zen 3: ResNet-50 6.8 -> 4.7, Swin-T 10.6 -> 8.0,
/// MobileNetV3 4.9 -> 3.7) and, alone, slowed one kind of loop: a register
/// tile's window loop, whose iterations' loads of one input column become
/// one load once unrolled (MobileNetV3's 5x5 depthwise convolutions 10-30%
/// slower). dlc unrolls those itself (dl-affine-unroll-reductions), where it
/// knows which loops they are; with both, no zoo model ran slower (A/B in
/// one process, Zen 3: EfficientNet-B0 0.97x time, ConvNeXt-T 0.98x, Swin-T
/// 0.97x, the others within 1%).
class ScopedOption {
public:
  ScopedOption(llvm::StringRef name, llvm::StringRef value) : name(name) {
    std::lock_guard<std::mutex> lock(mutex());
    llvm::cl::Option *option = find(name);
    if (!option)
      return;
    int &users = counts()[name];
    // The first user sets it, unless it was set already (DLC_LLVM_OPTIONS).
    if (users == 0 && (option->getNumOccurrences() > 0 ||
                       option->addOccurrence(0, name, value)))
      return;
    ++users;
    active = true;
  }
  ~ScopedOption() {
    if (!active)
      return;
    std::lock_guard<std::mutex> lock(mutex());
    if (--counts()[name] == 0)
      find(name)->reset();
  }
  ScopedOption(const ScopedOption &) = delete;
  ScopedOption &operator=(const ScopedOption &) = delete;

private:
  static llvm::cl::Option *find(llvm::StringRef name) {
    auto &options = llvm::cl::getRegisteredOptions();
    auto found = options.find(name);
    return found == options.end() ? nullptr : found->second;
  }
  static std::mutex &mutex() {
    static std::mutex instance;
    return instance;
  }
  static llvm::StringMap<int> &counts() {
    static llvm::StringMap<int> instance;
    return instance;
  }
  std::string name;
  bool active = false;
};

std::string errorText(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  llvm::logAllUnhandledErrors(std::move(error), stream);
  return text;
}

} // namespace

extern "C" DlcObjectJob dlcObjectJobCreate(MlirModule module, int optLevel,
                                           int numParts,
                                           MlirStringCallback onError,
                                           void *userData) {
  // Once per process: the native target, and LLVM options from
  // DLC_LLVM_OPTIONS (as on llc's command line; an error is reported by
  // every job).
  static const std::string optionError = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmParser(); // inline assembly
    llvm::InitializeNativeTargetAsmPrinter();
    if (getenv("DLC_LLVM_TIME_PASSES"))
      llvm::TimePassesIsEnabled = true; // the code generator's passes
    const char *extra = getenv("DLC_LLVM_OPTIONS");
    if (!extra)
      return std::string();
    std::vector<std::string> words{"dlc"};
    llvm::SmallVector<llvm::StringRef> split;
    llvm::StringRef(extra).split(split, ' ', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef word : split)
      words.push_back(word.str());
    std::vector<const char *> argv;
    for (const std::string &word : words)
      argv.push_back(word.c_str());
    std::string text;
    llvm::raw_string_ostream errors(text);
    if (llvm::cl::ParseCommandLineOptions(argv.size(), argv.data(), "", &errors))
      return std::string();
    return "DLC_LLVM_OPTIONS='" + std::string(extra) + "': " + text;
  }();
  if (!optionError.empty()) {
    report(onError, userData, optionError);
    return {nullptr};
  }
  if (optLevel < 0 || optLevel > 3) {
    report(onError, userData, "the LLVM optimization level must be 0 to 3");
    return {nullptr};
  }
  Operation *op = unwrap(module).getOperation();
  MLIRContext &mlirContext = *op->getContext();
  registerBuiltinDialectTranslation(mlirContext);
  registerLLVMDialectTranslation(mlirContext);

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> whole = translateModuleToLLVMIR(op, context);
  if (!whole) {
    report(onError, userData, "the module could not be translated to LLVM IR");
    return {nullptr};
  }
  auto machine = hostMachine();
  if (!machine) {
    report(onError, userData, errorText(machine.takeError()));
    return {nullptr};
  }
  whole->setDataLayout((*machine)->createDataLayout());
  whole->setTargetTriple((*machine)->getTargetTriple());
  llvm::StringSet<> privateFunctions;
  for (Operation &top : op->getRegion(0).front())
    if (top.getName().getStringRef() == "llvm.func" &&
        SymbolTable::getSymbolVisibility(&top) == SymbolTable::Visibility::Private)
      privateFunctions.insert(SymbolTable::getSymbolName(&top).getValue());
  addPackedWrappers(*whole, privateFunctions);

  // Clusters: a local function stays with every function that calls it
  // (a parallel body with its trampoline), so that the optimizer still sees
  // all its calls (inlining, constant arguments); functions that only take
  // its address may be elsewhere.
  Clusters clusters;
  for (const llvm::Function &function : whole->functions())
    if (!function.isDeclaration())
      clusters.parent[&function] = &function;
  for (const llvm::Function &function : whole->functions()) {
    if (function.isDeclaration() || !function.hasLocalLinkage())
      continue;
    for (const llvm::User *user : function.users())
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(user))
        if (call->getCalledOperand() == &function)
          clusters.join(call->getFunction(), &function);
  }
  llvm::DenseMap<const llvm::Function *, uint64_t> clusterWeight;
  for (auto [function, parent] : clusters.parent)
    clusterWeight[clusters.find(function)] += instructionCount(*function);
  // Which part defines each cluster: largest first, to the lightest part.
  std::vector<std::pair<uint64_t, const llvm::Function *>> roots;
  for (const llvm::Function &function : whole->functions())
    if (!function.isDeclaration() && clusters.find(&function) == &function)
      roots.push_back({clusterWeight[&function], &function});
  size_t count = std::max(1, numParts);
  if (!splittable(*whole))
    count = 1;
  count = std::min(count, std::max<size_t>(1, roots.size()));
  std::stable_sort(roots.begin(), roots.end(),
                   [](auto &a, auto &b) { return a.first > b.first; });
  auto job = std::make_unique<DlcObjectJobImpl>();
  job->optLevel = optLevel;
  job->weights.assign(count, 0);
  llvm::DenseMap<const llvm::GlobalValue *, size_t> owner;
  for (auto [weight, root] : roots) {
    size_t lightest = std::min_element(job->weights.begin(), job->weights.end()) -
                      job->weights.begin();
    job->weights[lightest] += weight;
    owner[root] = lightest;
  }
  for (auto [function, parent] : clusters.parent)
    owner[function] = owner.lookup(clusters.find(function));
  // Constants too large to copy: beside a function that reads them.
  // Variables (and anything else) are defined in part 0.
  for (const llvm::GlobalVariable &variable : whole->globals()) {
    if (!variable.hasInitializer() || isCopiedConstant(variable))
      continue;
    size_t part = 0;
    if (variable.isConstant())
      forEachUser(&variable, [&](const llvm::GlobalValue *user) {
        if (llvm::isa<llvm::Function>(user))
          part = owner.lookup(user);
      });
    owner[&variable] = part;
  }

  if (count > 1) {
    // Local symbols used from another part: hidden external ones (linked
    // across parts, not exported by the library). Copied constants stay
    // local: each part has its own.
    unsigned unnamed = 0;
    for (llvm::GlobalValue &value : whole->global_values()) {
      if (!value.hasLocalLinkage() || value.isDeclaration() ||
          isCopiedConstant(value))
        continue;
      size_t home = owner.lookup(&value);
      bool elsewhere = false;
      forEachUser(&value, [&](const llvm::GlobalValue *user) {
        elsewhere |= isCopiedConstant(*user) || owner.lookup(user) != home;
      });
      if (!elsewhere)
        continue;
      if (!value.hasName())
        value.setName("__dlc_part_local" + std::to_string(unnamed++));
      value.setLinkage(llvm::GlobalValue::ExternalLinkage);
      value.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
  }
  job->parts.resize(count);
  for (size_t part = 0; part < count; ++part) {
    std::unique_ptr<llvm::Module> piece;
    if (count == 1) {
      piece = std::move(whole);
    } else {
      llvm::ValueToValueMapTy map;
      piece = llvm::CloneModule(*whole, map, [&](const llvm::GlobalValue *value) {
        if (isCopiedConstant(*value))
          return true;
        return owner.lookup(value) == part;
      });
    }
    llvm::raw_svector_ostream stream(job->parts[part]);
    llvm::WriteBitcodeToFile(*piece, stream);
  }
  return {job.release()};
}

extern "C" int dlcObjectJobNumParts(DlcObjectJob job) {
  return static_cast<int>(static_cast<DlcObjectJobImpl *>(job.ptr)->parts.size());
}

extern "C" bool dlcObjectJobRun(DlcObjectJob handle, MlirStringRef directory,
                                int numThreads, MlirStringCallback onError,
                                void *userData) {
  auto *job = static_cast<DlcObjectJobImpl *>(handle.ptr);
  size_t count = job->parts.size();
  // The heaviest parts first, so that no thread is left with a large one.
  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return job->weights[a] > job->weights[b];
  });
  std::string folder = unwrap(directory).str();
  std::atomic<size_t> next{0};
  std::mutex errorLock;
  std::string firstError;
  auto fail = [&](std::string text) {
    std::lock_guard<std::mutex> lock(errorLock);
    if (firstError.empty())
      firstError = std::move(text);
  };
  auto work = [&] {
    for (size_t index; (index = next.fetch_add(1)) < count;) {
      size_t part = order[index];
      llvm::LLVMContext context;
      auto buffer = llvm::MemoryBuffer::getMemBuffer(
          llvm::StringRef(job->parts[part].data(), job->parts[part].size()),
          "part", /*RequiresNullTerminator=*/false);
      auto module = llvm::parseBitcodeFile(buffer->getMemBufferRef(), context);
      if (!module) {
        fail(errorText(module.takeError()));
        continue;
      }
      auto machine = hostMachine();
      if (!machine) {
        fail(errorText(machine.takeError()));
        continue;
      }
      optimize(**module, job->optLevel, machine->get());
      std::string path = folder + "/part" + std::to_string(part) + ".o";
      std::error_code code;
      llvm::raw_fd_ostream file(path, code, llvm::sys::fs::OF_None);
      if (code) {
        fail("cannot write " + path + ": " + code.message());
        continue;
      }
      llvm::legacy::PassManager passes;
      if ((*machine)->addPassesToEmitFile(passes, file, nullptr,
                                          llvm::CodeGenFileType::ObjectFile)) {
        fail("LLVM cannot emit object code for this target");
        continue;
      }
      passes.run(**module);
      if (getenv("DLC_LLVM_TIME_PASSES"))
        llvm::reportAndResetTimings(&llvm::errs());
      file.close();
      if (file.has_error()) {
        fail("cannot write " + path + ": " + file.error().message());
        file.clear_error();
      }
    }
  };
  ScopedOption noLSR("disable-lsr", "true");
  ScopedOption noFullUnroll("unroll-full-max-count", "1");
  size_t threads = std::min<size_t>(std::max(1, numThreads), count);
  if (getenv("DLC_LLVM_TIME_PASSES"))
    threads = 1; // LLVM's pass timers are global, not thread-safe
  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; ++i)
    pool.emplace_back(work);
  work();
  for (std::thread &thread : pool)
    thread.join();
  if (!firstError.empty()) {
    report(onError, userData, firstError);
    return false;
  }
  return true;
}

extern "C" void dlcObjectJobDestroy(DlcObjectJob job) {
  delete static_cast<DlcObjectJobImpl *>(job.ptr);
}

extern "C" int64_t dlcModuleOperationCount(MlirModule module) {
  int64_t count = 0;
  unwrap(module).getOperation()->walk([&](Operation *) { ++count; });
  return count;
}
