//===- SplitFunction.cpp - dl-split-function ------------------------------===//
//
// Cuts a function with many ops into consecutive parts, each a private
// function called in order, so that LLVM's loop passes (quadratic in the size
// of the function holding the loops) see functions of bounded size. Ours:
// upstream's outlining utilities outline one region or one loop, not ranges
// of a block. See Passes.td for the contract.
//
//   func.func @f(%a) {            func.func @f(%a) {
//     A(%a) -> %x                   %x = call @f_part_0(%a)
//     B(%x)                 =>      call @f_part_1(%x)
//     return                        return
//   }                             }
//
//===----------------------------------------------------------------------===//

#include "Recompute.h"
#include "dl/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLSPLITFUNCTION
#include "dl/Codegen/CPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

constexpr llvm::StringLiteral kPartAttr = "dl.split_part";

/// Whether `value` is (a view of) memory in the function's stack frame,
/// which must not outlive the part that allocated it.
bool isStackMemory(Value value, unsigned depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 16)
    return false;
  if (isa<memref::AllocaOp>(def))
    return true;
  if (auto view = dyn_cast<ViewLikeOpInterface>(def))
    return isStackMemory(view.getViewSource(), depth + 1);
  // Casts and other memref-to-memref ops that are not view-like.
  return isa<BaseMemRefType>(value.getType()) &&
         llvm::any_of(def->getOperands(), [&](Value operand) {
           return isa<BaseMemRefType>(operand.getType()) &&
                  isStackMemory(operand, depth + 1);
         });
}

/// The top-level op of `block` that holds `op` (or null).
Operation *topLevel(Operation *op, Block &block) {
  return block.findAncestorOpInBlock(*op);
}

/// Moves `ops` (top-level ops of `func`, in order) into a new private
/// function, called where the first of them was.
void outlinePart(func::FuncOp func, ArrayRef<Operation *> ops, unsigned index,
                 SymbolTable &symbols) {
  Block &block = func.getBody().front();
  llvm::SmallPtrSet<Operation *, 16> inPart(ops.begin(), ops.end());
  auto inside = [&](Operation *user) {
    Operation *top = topLevel(user, block);
    return top && inPart.contains(top);
  };

  // Inputs: values used inside and defined outside (the function's
  // arguments, or results of earlier top-level ops).
  llvm::SetVector<Value> used;
  for (Operation *op : ops)
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(operand)) {
          if (arg.getOwner() == &block)
            used.insert(operand);
        } else if (Operation *def = operand.getDefiningOp();
                   def->getBlock() == &block && !inPart.contains(def)) {
          used.insert(operand);
        }
      }
    });
  SmallVector<Value> recomputed, inputs;
  for (Value value : used)
    (isRecomputable(value) ? recomputed : inputs).push_back(value);
  // Outputs: results used after the part.
  SmallVector<Value> outputs;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !inside(user); }))
        outputs.push_back(result);

  MLIRContext *ctx = func.getContext();
  Location loc = ops.front()->getLoc();
  OpBuilder moduleBuilder(func);
  moduleBuilder.setInsertionPointAfter(func);
  auto part = func::FuncOp::create(
      moduleBuilder, loc, (func.getSymName() + "_part_" + Twine(index)).str(),
      FunctionType::get(ctx, ValueRange(inputs).getTypes(),
                        ValueRange(outputs).getTypes()));
  part.setPrivate();
  part->setAttr(kPartAttr, UnitAttr::get(ctx));
  // Carried by convert-func-to-llvm to the llvm.func (a `no_inline` unit
  // attribute is not).
  part->setAttr("passthrough",
                ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
  symbols.insert(part);
  Block *entry = part.addEntryBlock();

  // The call, where the ops were.
  OpBuilder b(ops.front());
  auto call = func::CallOp::create(b, loc, part, inputs);

  // Move the ops, then route values in and out.
  for (Operation *op : ops)
    op->moveBefore(entry, entry->end());
  routeIntoOutlined(part, entry, recomputed, inputs);
  for (auto [value, result] : llvm::zip(outputs, call.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !part->isProperAncestor(use.getOwner());
    });
  OpBuilder inner = OpBuilder::atBlockEnd(entry);
  func::ReturnOp::create(inner, loc, outputs);
}

struct DLSplitFunctionPass
    : public dl::impl::DLSplitFunctionBase<DLSplitFunctionPass> {
  using DLSplitFunctionBase::DLSplitFunctionBase;

  void runOnOperation() override {
    if (maxOps <= 0)
      return;
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock() &&
          !func->hasAttr(kPartAttr))
        funcs.push_back(func);
    SymbolTable symbols(module);
    for (func::FuncOp func : funcs)
      split(func, symbols);
  }

  void split(func::FuncOp func, SymbolTable &symbols) {
    Block &block = func.getBody().front();
    SmallVector<Operation *> ops;
    SmallVector<int64_t> weights;
    int64_t total = 0;
    for (Operation &op : block.without_terminator()) {
      // Constants stay: each part that uses one recomputes it.
      if (op.getNumResults() == 1 && isRecomputable(op.getResult(0)))
        continue;
      int64_t weight = 0;
      op.walk([&](Operation *) { ++weight; });
      ops.push_back(&op);
      weights.push_back(weight);
      total += weight;
    }
    if (total <= maxOps)
      return;

    // A cut before op i is forbidden while stack memory defined before i
    // is used at or after i.
    llvm::DenseMap<Operation *, size_t> position;
    for (auto [i, op] : llvm::enumerate(ops))
      position[op] = i;
    SmallVector<int64_t> open(ops.size() + 1, 0);
    for (auto [i, op] : llvm::enumerate(ops))
      for (Value result : op->getResults()) {
        if (!isStackMemory(result))
          continue;
        size_t last = i;
        for (Operation *user : result.getUsers())
          if (Operation *top = topLevel(user, block); top && position.count(top))
            last = std::max(last, position[top]);
          else
            last = ops.size(); // the terminator: no cut after i
        ++open[i + 1];
        --open[last + 1 <= ops.size() ? last + 1 : ops.size()];
      }
    // Parts: greedy, cut once a part holds maxOps where a cut is allowed.
    SmallVector<std::pair<size_t, size_t>> parts;
    size_t begin = 0;
    int64_t weight = 0, live = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      live += open[i];
      if (weight >= maxOps && live == 0) {
        parts.push_back({begin, i});
        begin = i;
        weight = 0;
      }
      weight += weights[i];
    }
    if (parts.empty())
      return;
    parts.push_back({begin, ops.size()});
    for (auto [index, range] : llvm::enumerate(parts))
      outlinePart(func,
                  ArrayRef(ops).slice(range.first, range.second - range.first),
                  index, symbols);
  }
};

} // namespace
