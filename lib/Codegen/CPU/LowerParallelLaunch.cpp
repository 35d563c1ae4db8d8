//===- LowerParallelLaunch.cpp - dl-lower-parallel-launch -----------------===//
//
// The second half of dl-outline-parallel, on the llvm dialect (after the
// conversion, when every captured memref is a flat list of scalars in both
// the body's signature and the launch call): each call of a launch stub
// stores its captured operands into a stack struct and calls
//   dlc_parallel_for(@f_parallel_0_entry, %ctx, %lb, %ub, %s, %n)
// where the trampoline @f_parallel_0_entry(ctx, begin, end) loads them back
// and calls the body. Ours, with the pass before it and the runtime.
//
// It also lists the trampolines for dlc's profiler (dlc.profile; the runtime
// times each dlc_parallel_for call by the function it is given):
//   @dlc_parallel_regions = [entry_0, name_0, entry_1, name_1, ...]
//   @dlc_parallel_region_count = N
// where name_k is "<body> <file>:<line> | <op>": the source line of the
// parallel loop the body was outlined from (of the first such loop where
// equivalent loops share one body) and the name convert-dl-to-linalg gave
// the dl op the loop computes ("dl.conv2d 3x3 g72 8x56x56x72 -> 8x56x56x72");
// either part is left out where the loop's location has none.
//
//===----------------------------------------------------------------------===//

#include "ParallelLaunch.h"
#include "dl/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLLOWERPARALLELLAUNCH
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

constexpr llvm::StringLiteral kRegionTable = "dlc_parallel_regions";
constexpr llvm::StringLiteral kRegionCount = "dlc_parallel_region_count";

/// "file:line" of the first file location in `loc` (a fused or call-site
/// location included), or "" when it has none.
std::string sourceLine(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      text = (file.getFilename().getValue() + ":" + Twine(file.getLine())).str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

/// The first name location in `loc` naming a dl op (convert-dl-to-linalg's),
/// or "".
std::string loweredOpName(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto name = dyn_cast<NameLoc>(inner);
        name && name.getName().getValue().starts_with("dl.")) {
      text = name.getName().getValue().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

/// The profiler's table of the trampolines (see the file comment).
void emitRegionTable(ModuleOp module, ArrayRef<LLVM::LLVMFuncOp> entries,
                     ArrayRef<std::string> names, SymbolTable &symbols) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  SmallVector<LLVM::GlobalOp> strings;
  for (auto [i, name] : llvm::enumerate(names)) {
    std::string text = name + '\0';
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
    auto global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal,
        (kRegionTable + "_name_" + Twine(i)).str(), b.getStringAttr(text));
    symbols.insert(global);
    strings.push_back(global);
  }
  auto arrayType = LLVM::LLVMArrayType::get(ptr, 2 * entries.size());
  auto table = LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true,
                                      LLVM::Linkage::External, kRegionTable,
                                      Attribute());
  symbols.insert(table);
  {
    Block *block = b.createBlock(&table.getInitializerRegion());
    OpBuilder init = OpBuilder::atBlockBegin(block);
    Value array = LLVM::UndefOp::create(init, loc, arrayType);
    for (auto [i, entry] : llvm::enumerate(entries)) {
      Value fn = LLVM::AddressOfOp::create(init, loc, entry);
      Value text = LLVM::AddressOfOp::create(init, loc, strings[i]);
      array = LLVM::InsertValueOp::create(init, loc, array, fn,
                                          ArrayRef<int64_t>{int64_t(2 * i)});
      array = LLVM::InsertValueOp::create(init, loc, array, text,
                                          ArrayRef<int64_t>{int64_t(2 * i + 1)});
    }
    LLVM::ReturnOp::create(init, loc, array);
  }
  b.setInsertionPointToEnd(module.getBody());
  auto count = LLVM::GlobalOp::create(
      b, loc, i64, /*isConstant=*/true, LLVM::Linkage::External, kRegionCount,
      b.getI64IntegerAttr(entries.size()));
  symbols.insert(count);
}

/// @<body>_entry(ctx, begin, end): loads the captures, calls the body.
LLVM::LLVMFuncOp buildTrampoline(OpBuilder &moduleBuilder, Location loc,
                                 LLVM::LLVMFuncOp body,
                                 LLVM::LLVMStructType frame,
                                 SymbolTable &symbols) {
  MLIRContext *ctx = body.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                          {ptr, i64, i64});
  auto entry = LLVM::LLVMFuncOp::create(moduleBuilder, loc,
                                        (body.getName() + "_entry").str(), type);
  entry.setLinkage(LLVM::Linkage::Internal);
  symbols.insert(entry);
  Block *block = entry.addEntryBlock(moduleBuilder);
  OpBuilder b = OpBuilder::atBlockBegin(block);
  SmallVector<Value> args = {block->getArgument(1), block->getArgument(2)};
  for (auto [i, field] : llvm::enumerate(frame.getBody())) {
    Value address = LLVM::GEPOp::create(
        b, loc, ptr, frame, block->getArgument(0),
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, field, address));
  }
  LLVM::CallOp::create(b, loc, body, args);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return entry;
}

struct DLLowerParallelLaunchPass
    : public dl::impl::DLLowerParallelLaunchBase<DLLowerParallelLaunchPass> {
  using DLLowerParallelLaunchBase::DLLowerParallelLaunchBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    SymbolTable symbols(module);
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);

    SmallVector<LLVM::LLVMFuncOp> stubs;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>())
      if (func->hasAttr(kLaunchAttr))
        stubs.push_back(func);
    if (stubs.empty())
      return;

    auto runtime = symbols.lookup<LLVM::LLVMFuncOp>(kRuntimeEntry);
    if (!runtime) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      runtime = LLVM::LLVMFuncOp::create(
          b, module.getLoc(), kRuntimeEntry,
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                      {ptr, ptr, i64, i64, i64, i64}));
      symbols.insert(runtime);
    }

    // Every use of every stub, from one walk of the module (a walk per stub
    // was quadratic: 1.1 s for ResNet-18's 78 launches).
    llvm::DenseMap<StringAttr, SmallVector<Operation *>> usersOf;
    for (LLVM::LLVMFuncOp stub : stubs)
      usersOf[stub.getSymNameAttr()];
    if (std::optional<SymbolTable::UseRange> all =
            SymbolTable::getSymbolUses(&module.getBodyRegion()))
      for (const SymbolTable::SymbolUse &use : *all) {
        auto found = usersOf.find(use.getSymbolRef().getRootReference());
        if (found != usersOf.end())
          found->second.push_back(use.getUser());
      }

    SmallVector<LLVM::LLVMFuncOp> entries;
    SmallVector<std::string> names;
    for (LLVM::LLVMFuncOp stub : stubs) {
      auto bodyName = stub->getAttrOfType<FlatSymbolRefAttr>(kLaunchAttr);
      auto body = bodyName ? symbols.lookup<LLVM::LLVMFuncOp>(bodyName.getValue())
                           : LLVM::LLVMFuncOp();
      if (!body || body.isExternal()) {
        stub.emitError("dl-lower-parallel-launch: the parallel body ")
            << bodyName << " of this launch is not an llvm.func with a body "
            << "(run it after the conversion to the llvm dialect)";
        return signalPassFailure();
      }
      ArrayRef<Type> stubInputs = stub.getFunctionType().getParams();
      ArrayRef<Type> bodyInputs = body.getFunctionType().getParams();
      if (stubInputs.size() < 4 || bodyInputs.size() < 2 ||
          stubInputs.drop_front(4) != bodyInputs.drop_front(2) ||
          llvm::any_of(stubInputs.take_front(4),
                       [&](Type t) { return t != i64; })) {
        stub.emitError("dl-lower-parallel-launch: the launch's operands "
                       "(lb, ub, step, threads, captures...) do not match "
                       "the body's parameters (begin, end, captures...) of ")
            << bodyName;
        return signalPassFailure();
      }
      auto frame = LLVM::LLVMStructType::getLiteral(
          ctx, llvm::to_vector(stubInputs.drop_front(4)));
      // Only the trampoline calls the body, only through dlc_parallel_for:
      // both internal (LLVM may then inline the body into the trampoline).
      body.setLinkage(LLVM::Linkage::Internal);
      body->removeAttr(SymbolTable::getVisibilityAttrName());
      OpBuilder moduleBuilder(body);
      moduleBuilder.setInsertionPointAfter(body);
      LLVM::LLVMFuncOp entry =
          buildTrampoline(moduleBuilder, stub.getLoc(), body, frame, symbols);
      entries.push_back(entry);
      std::string name = body.getName().str();
      if (std::string line = sourceLine(body.getLoc()); !line.empty())
        name += " " + line;
      if (std::string op = loweredOpName(body.getLoc()); !op.empty())
        name += " | " + op;
      names.push_back(name);

      SmallVector<LLVM::CallOp> calls;
      for (Operation *user : usersOf[stub.getSymNameAttr()]) {
        auto call = dyn_cast<LLVM::CallOp>(user);
        if (!call) {
          user->emitError("dl-lower-parallel-launch: a parallel "
                          "launch stub may only be called");
          return signalPassFailure();
        }
        calls.push_back(call);
      }
      for (LLVM::CallOp call : calls) {
        Location loc = call.getLoc();
        auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
        // The frame lives in the caller's entry block: one slot per launch,
        // however often the launch runs.
        OpBuilder entryBuilder =
            OpBuilder::atBlockBegin(&caller.getBody().front());
        Value one = LLVM::ConstantOp::create(entryBuilder, loc, i64,
                                             entryBuilder.getI64IntegerAttr(1));
        // No explicit alignment: the frame's own (a vector field needs 32
        // bytes, and its loads and stores assume it).
        Value slot = LLVM::AllocaOp::create(entryBuilder, loc, ptr, frame, one,
                                            /*alignment=*/0);
        OpBuilder b(call);
        ValueRange operands = call.getArgOperands();
        for (auto [i, value] : llvm::enumerate(operands.drop_front(4))) {
          Value address = LLVM::GEPOp::create(
              b, loc, ptr, frame, slot,
              ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
          LLVM::StoreOp::create(b, loc, value, address);
        }
        Value fn = LLVM::AddressOfOp::create(b, loc, entry);
        LLVM::CallOp::create(b, loc, runtime,
                             ValueRange{fn, slot, operands[0], operands[1],
                                        operands[2], operands[3]});
        call.erase();
      }
      stub.erase();
    }
    if (!symbols.lookup(kRegionTable) && !symbols.lookup(kRegionCount))
      emitRegionTable(module, entries, names, symbols);
  }
};

} // namespace
