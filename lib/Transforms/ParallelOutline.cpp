//===- ParallelOutline.cpp - dl-outline-parallel, dl-lower-parallel-launch ===//
//
// Runs each outermost scf.parallel (without reductions) on dlc's own
// fork/join thread pool (lib/Runtime/ParallelRuntime.cpp, libdlc_runtime).
// Ours: upstream's async-parallel-for fixes its sharding at compile time and
// goes through the async runtime, whose coroutine tasks on a sleeping
// llvm::ThreadPool cost ~60 us per fork/join on this 2-vCPU machine; a call
// into our spinning pool costs a few (see the runtime's header).
//
// dl-outline-parallel (scf level, before the conversion to llvm):
//
//   scf.parallel (%i, %j) = (%lb, %lb1) to (%ub, %ub1) step (%s, %s1) {B}
// becomes
//   func.func private @f_parallel_0(%begin, %end, captures...)
//       attributes {dl.parallel_body} {
//     scf.for %i = %begin to %end step %s { scf.parallel (%j) ... {B} }
//   }
//   func.func private @f_parallel_0_launch(index, index, index, i64, ...)
//       attributes {dl.parallel_launch = @f_parallel_0}
//   %n = memref.load @dlc_num_threads[]       // 0: every core
//   func.call @f_parallel_0_launch(%lb, %ub, %s, %n, captures...)
//
// Constants, and side-effect-free ops of constants, are recomputed in the
// body rather than captured. Only the first
// dimension is split; the others stay an scf.parallel inside the chunk
// (lowered to sequential loops later).
//
// dl-lower-parallel-launch (llvm dialect, after the conversion, when every
// captured memref is a flat list of scalars in both the body's signature
// and the launch call): each call of a launch stub stores its captured
// operands into a stack struct and calls
//   dlc_parallel_for(@f_parallel_0_entry, %ctx, %lb, %ub, %s, %n)
// where the trampoline @f_parallel_0_entry(ctx, begin, end) loads them back
// and calls the body.
//
//===----------------------------------------------------------------------===//

#include "dl/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLOUTLINEPARALLEL
#define GEN_PASS_DEF_DLLOWERPARALLELLAUNCH
#include "dl/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kThreadsSymbol = "dlc_num_threads";
constexpr llvm::StringLiteral kBodyAttr = "dl.parallel_body";
constexpr llvm::StringLiteral kLaunchAttr = "dl.parallel_launch";
constexpr llvm::StringLiteral kRuntimeEntry = "dlc_parallel_for";

/// The public i64 global holding the requested thread count (0: all).
memref::GlobalOp getOrCreateThreadsGlobal(ModuleOp module) {
  if (auto global = module.lookupSymbol<memref::GlobalOp>(kThreadsSymbol))
    return global;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type i64 = b.getI64Type();
  auto type = MemRefType::get({}, i64);
  return memref::GlobalOp::create(
      b, module.getLoc(), kThreadsSymbol, b.getStringAttr("public"), type,
      DenseElementsAttr::get(RankedTensorType::get({}, i64),
                             b.getI64IntegerAttr(0).getValue()),
      /*constant=*/false, /*alignment=*/IntegerAttr());
}

/// Iterations [begin, end) of dimension 0 of `loop`, as an scf.for around an
/// scf.parallel over the other dimensions, if any; `mapping` maps the values
/// the loop captures.
void emitChunk(OpBuilder &b, Location loc, scf::ParallelOp loop, Value begin,
               Value end, IRMapping &mapping) {
  Value step = mapping.lookupOrDefault(loop.getStep()[0]);
  auto outer = scf::ForOp::create(b, loc, begin, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(outer.getBody()->getTerminator());
  mapping.map(loop.getInductionVars()[0], outer.getInductionVar());
  auto cloneBody = [&](OpBuilder &inner) {
    for (Operation &op : loop.getBody()->without_terminator())
      inner.clone(op, mapping);
  };
  if (loop.getNumLoops() == 1) {
    cloneBody(b);
    return;
  }
  auto remap = [&](OperandRange values) {
    SmallVector<Value> mapped;
    for (Value value : values.drop_front())
      mapped.push_back(mapping.lookupOrDefault(value));
    return mapped;
  };
  scf::ParallelOp::create(
      b, loc, remap(loop.getLowerBound()), remap(loop.getUpperBound()),
      remap(loop.getStep()),
      [&](OpBuilder &inner, Location, ValueRange ivs) {
        SmallVector<Value> oldIvs = loop.getInductionVars();
        for (auto [old, fresh] : llvm::zip(ArrayRef(oldIvs).drop_front(), ivs))
          mapping.map(old, fresh);
        cloneBody(inner);
      });
}

/// Whether `value` is a constant, or a side-effect-free op of such values
/// (a splat of a constant, say): cheaper to recompute in the body than to
/// pass through the frame.
bool isRecomputable(Value value, unsigned depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 4 || def->getNumRegions() != 0 ||
      def->getNumResults() != 1 || !isMemoryEffectFree(def))
    return false;
  if (def->hasTrait<OpTrait::ConstantLike>())
    return def->getNumOperands() == 0;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return isRecomputable(operand, depth + 1);
  });
}

/// Clones the ops computing `value` (see isRecomputable) at `b`, once.
void recompute(OpBuilder &b, Value value, IRMapping &mapping) {
  if (mapping.contains(value))
    return;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    recompute(b, operand, mapping);
  b.clone(*def, mapping);
}

void outline(scf::ParallelOp loop, memref::GlobalOp threadsGlobal,
             SymbolTable &symbols, unsigned &counter) {
  auto parent = loop->getParentOfType<func::FuncOp>();
  Location loc = loop.getLoc();
  MLIRContext *ctx = loop.getContext();

  // What the chunk uses from outside: the region's free values, the step of
  // dimension 0 and the bounds of the other dimensions.
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  used.insert(loop.getStep()[0]);
  for (unsigned d = 1; d < loop.getNumLoops(); ++d) {
    used.insert(loop.getLowerBound()[d]);
    used.insert(loop.getUpperBound()[d]);
    used.insert(loop.getStep()[d]);
  }
  SmallVector<Value> recomputed, captures;
  for (Value value : used)
    (isRecomputable(value) ? recomputed : captures).push_back(value);

  // The body: (begin, end, captures...).
  Type index = IndexType::get(ctx);
  SmallVector<Type> bodyInputs = {index, index};
  for (Value value : captures)
    bodyInputs.push_back(value.getType());
  std::string name =
      (parent.getSymName() + "_parallel_" + Twine(counter++)).str();
  OpBuilder moduleBuilder(parent);
  moduleBuilder.setInsertionPointAfter(parent);
  auto body = func::FuncOp::create(moduleBuilder, loc, name,
                                   FunctionType::get(ctx, bodyInputs, {}));
  body.setPrivate();
  body->setAttr(kBodyAttr, UnitAttr::get(ctx));
  symbols.insert(body);
  {
    Block *entry = body.addEntryBlock();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    IRMapping mapping;
    for (Value value : recomputed)
      recompute(b, value, mapping);
    for (auto [value, arg] : llvm::zip(captures, entry->getArguments().drop_front(2)))
      mapping.map(value, arg);
    emitChunk(b, loc, loop, entry->getArgument(0), entry->getArgument(1),
              mapping);
    func::ReturnOp::create(b, loc);
  }

  // The launch stub: (lb, ub, step, threads, captures...).
  SmallVector<Type> launchInputs = {index, index, index,
                                    IntegerType::get(ctx, 64)};
  llvm::append_range(launchInputs, ArrayRef(bodyInputs).drop_front(2));
  auto launch = func::FuncOp::create(moduleBuilder, loc, name + "_launch",
                                     FunctionType::get(ctx, launchInputs, {}));
  launch.setPrivate();
  launch->setAttr(kLaunchAttr, FlatSymbolRefAttr::get(body.getSymNameAttr()));
  symbols.insert(launch);

  OpBuilder b(loop);
  Value global = memref::GetGlobalOp::create(b, loc, threadsGlobal.getType(),
                                             threadsGlobal.getSymName());
  Value threads = memref::LoadOp::create(b, loc, global, ValueRange{});
  SmallVector<Value> operands = {loop.getLowerBound()[0],
                                 loop.getUpperBound()[0], loop.getStep()[0],
                                 threads};
  llvm::append_range(operands, captures);
  func::CallOp::create(b, loc, launch, operands);
  loop.erase();
}

struct DLOutlineParallelPass
    : public dl::impl::DLOutlineParallelBase<DLOutlineParallelPass> {
  using DLOutlineParallelBase::DLOutlineParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      auto func = loop->getParentOfType<func::FuncOp>();
      if (func && !func->hasAttr(kBodyAttr) && loop.getNumReductions() == 0 &&
          !loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    if (loops.empty())
      return;
    memref::GlobalOp threads = getOrCreateThreadsGlobal(module);
    SymbolTable symbols(module);
    llvm::DenseMap<Operation *, unsigned> counters;
    for (scf::ParallelOp loop : loops) {
      auto func = loop->getParentOfType<func::FuncOp>();
      outline(loop, threads, symbols, counters[func]);
    }
  }
};

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

      std::optional<SymbolTable::UseRange> uses = stub.getSymbolUses(module);
      SmallVector<LLVM::CallOp> calls;
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto call = dyn_cast<LLVM::CallOp>(use.getUser());
        if (!call) {
          use.getUser()->emitError("dl-lower-parallel-launch: a parallel "
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
  }
};

} // namespace
