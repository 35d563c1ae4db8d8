//===- OutlineParallel.cpp - dl-outline-parallel --------------------------===//
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
// body rather than captured; global memory (memref.get_global, the weights,
// and views of it) is captured, so that the loops of identical layers, which
// differ only in their weights, outline to identical bodies, and a body
// equivalent to one outlined before is not kept: its loop launches that one
// (the 12 layers of a BERT or a ViT give LLVM each kernel once). Only the first
// dimension is split; the others stay an scf.parallel inside the chunk
// (lowered to sequential loops later). dl-lower-parallel-launch finishes the
// job on the llvm dialect.
//
//===----------------------------------------------------------------------===//

#include "ParallelLaunch.h"
#include "Recompute.h"
#include "dl/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLOUTLINEPARALLEL
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {
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

/// The bodies outlined so far, each with its launch stub.
using Outlined = OutlinedFunctions<func::FuncOp>;

void outline(scf::ParallelOp loop, memref::GlobalOp threadsGlobal,
             SymbolTable &symbols, unsigned &counter, Outlined &outlined,
             bool merge) {
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
    (recomputeInOutlined(value) ? recomputed : captures).push_back(value);

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

  // The launch stub: (lb, ub, step, threads, captures...); an earlier one
  // where an equivalent body was outlined before.
  func::FuncOp launch;
  if (Operation *earlier = merge ? findEquivalent(body, outlined) : nullptr) {
    launch = cast<func::FuncOp>(earlier);
    symbols.erase(body);
  } else {
    SmallVector<Type> launchInputs = {index, index, index,
                                      IntegerType::get(ctx, 64)};
    llvm::append_range(launchInputs, ArrayRef(bodyInputs).drop_front(2));
    launch = func::FuncOp::create(moduleBuilder, loc, name + "_launch",
                                  FunctionType::get(ctx, launchInputs, {}));
    launch.setPrivate();
    launch->setAttr(kLaunchAttr, FlatSymbolRefAttr::get(body.getSymNameAttr()));
    symbols.insert(launch);
    outlined[body.getFunctionType()].push_back({body, launch});
  }

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
    Outlined outlined;
    for (scf::ParallelOp loop : loops) {
      auto func = loop->getParentOfType<func::FuncOp>();
      outline(loop, threads, symbols, counters[func], outlined, merge);
    }
  }
};

} // namespace
