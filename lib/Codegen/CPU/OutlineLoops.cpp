//===- OutlineLoops.cpp - dl-outline-loops --------------------------------===//
//
// Compiles repeated code once: a top-level loop nest of a function that is
// equivalent to another one (the same kernel in each of a transformer's 12
// layers, which differ in their weights and buffers only) becomes a call of
// one private function, which both nests call with their own memory. Nests
// that occur once stay where they are. Ours: upstream has no pass that merges
// equivalent code (LLVM's MergeFunctions merges whole functions, after the
// time this saves has been spent).
//
//   scf.for ... { A(%w1, %x) }           call @f_loop_0(%w1, %x)
//   scf.for ... { A(%w2, %y) }    =>     call @f_loop_0(%w2, %y)
//   scf.for ... { B }                    scf.for ... { B }
//
// dl-outline-parallel does the same for the bodies of parallel loops; both
// share the rules of Recompute.h: constants are recomputed in the outlined
// function, the addresses of globals (weights) are passed.
//
//===----------------------------------------------------------------------===//

#include "Recompute.h"
#include "dl/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLOUTLINELOOPS
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

constexpr llvm::StringLiteral kLoopAttr = "dl.outlined_loop";

/// An outlined nest: its function and the calls of it.
struct Outlined {
  func::FuncOp func;
  SmallVector<func::CallOp> calls;
};

/// Moves `loop` (a top-level op of its function) into a new private
/// function taking what it uses from outside (less what it recomputes) and
/// returning its results, called where it was.
func::CallOp outlineLoop(Operation *loop, StringRef name, SymbolTable &symbols) {
  auto parent = loop->getParentOfType<func::FuncOp>();
  llvm::SetVector<Value> used;
  loop->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      // Defined by an op of the nest, or an argument of one of its blocks.
      Operation *owner = isa<BlockArgument>(operand)
                             ? cast<BlockArgument>(operand).getOwner()->getParentOp()
                             : operand.getDefiningOp();
      if (!loop->isAncestor(owner))
        used.insert(operand);
    }
  });
  SmallVector<Value> recomputed, inputs;
  for (Value value : used)
    (recomputeInOutlined(value) ? recomputed : inputs).push_back(value);

  MLIRContext *ctx = loop->getContext();
  Location loc = loop->getLoc();
  OpBuilder moduleBuilder(parent);
  moduleBuilder.setInsertionPointAfter(parent);
  auto func = func::FuncOp::create(
      moduleBuilder, loc, name,
      FunctionType::get(ctx, ValueRange(inputs).getTypes(),
                        loop->getResultTypes()));
  func.setPrivate();
  func->setAttr(kLoopAttr, UnitAttr::get(ctx));
  // Called from several places: LLVM's inliner must not copy it back.
  func->setAttr("passthrough",
                ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
  symbols.insert(func);
  Block *entry = func.addEntryBlock();

  OpBuilder b(loop);
  auto call = func::CallOp::create(b, loc, func, inputs);
  loop->replaceAllUsesWith(call.getResults());
  loop->moveBefore(entry, entry->end());
  routeIntoOutlined(func, entry, recomputed, inputs);
  OpBuilder inner = OpBuilder::atBlockEnd(entry);
  func::ReturnOp::create(inner, loc, loop->getResults());
  return call;
}

/// Puts the body of `func` (called once, by `call`) back where the call is,
/// and erases `func`.
void inlineBack(func::FuncOp func, func::CallOp call, SymbolTable &symbols) {
  Block &entry = func.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  call->replaceAllUsesWith(ret.getOperands());
  for (auto [arg, value] : llvm::zip(entry.getArguments(), call.getOperands()))
    arg.replaceAllUsesWith(value);
  ret.erase();
  Block *block = call->getBlock();
  block->getOperations().splice(call->getIterator(), entry.getOperations());
  call.erase();
  symbols.erase(func);
}

struct DLOutlineLoopsPass
    : public dl::impl::DLOutlineLoopsBase<DLOutlineLoopsPass> {
  using DLOutlineLoopsBase::DLOutlineLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> loops;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock() ||
          func->hasAttr(kLoopAttr))
        continue;
      for (Operation &op : func.getBody().front()) {
        // A memref result may be the nest's stack memory, gone once the
        // function returns.
        if (!isa<scf::ForOp, scf::ParallelOp>(op) ||
            llvm::any_of(op.getResultTypes(), llvm::IsaPred<BaseMemRefType>))
          continue;
        int64_t weight = 0;
        op.walk([&](Operation *) { ++weight; });
        if (weight >= minOps)
          loops.push_back(&op);
      }
    }
    SymbolTable symbols(module);
    OutlinedFunctions<func::FuncOp> byType;
    SmallVector<Outlined> outlined;
    llvm::DenseMap<Operation *, size_t> index;
    for (Operation *loop : loops) {
      auto parent = loop->getParentOfType<func::FuncOp>();
      std::string name =
          (parent.getSymName() + "_loop_" + Twine(outlined.size())).str();
      func::CallOp call = outlineLoop(loop, name, symbols);
      auto func = cast<func::FuncOp>(
          symbols.lookup(call.getCallee()));
      if (Operation *earlier = findEquivalent(func, byType)) {
        auto same = cast<func::FuncOp>(earlier);
        call.setCallee(same.getSymName());
        symbols.erase(func);
        outlined[index[same]].calls.push_back(call);
        continue;
      }
      byType[func.getFunctionType()].push_back({func, func});
      index[func] = outlined.size();
      outlined.push_back({func, {call}});
    }
    // A nest that occurs once is not worth a call.
    for (Outlined &entry : outlined)
      if (entry.calls.size() == 1)
        inlineBack(entry.func, entry.calls.front(), symbols);
  }
};

} // namespace
