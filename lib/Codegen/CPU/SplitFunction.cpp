//===- SplitFunction.cpp - dl-split-function ------------------------------===//
//
// Cuts a function with many ops into consecutive parts, each a private
// function called in order, so that LLVM's loop passes (quadratic in the size
// of the function holding the loops) see functions of bounded size. Ours:
// upstream's outlining utilities outline one region or one loop, not ranges
// of a block. See Passes.td for the contract.
//
// With `early`, it runs on linalg on memrefs, before the affine stage, so that
// the affine and vector passes (one function at a time) run on the MLIR
// context's threads rather than on one: allocations stay in the caller and are
// passed as arguments marked dl.fresh_buffer (isFreshBuffer: what the affine
// passes ask of a memref.alloc), views of them are recomputed in each part
// (the arena's byte ranges stay visible), and no cut separates an op from the
// one before it that touches the same memory (a fill, its accumulation and
// its epilogue are matched in one block by dl-affine-register-tile).
//
//   func.func @f(%a) {            func.func @f(%a) {
//     A(%a) -> %x                   %x = call @f_part_0(%a)
//     B(%x)                 =>      call @f_part_1(%x)
//     return                        return
//   }                             }
//
//===----------------------------------------------------------------------===//

#include "Recompute.h"
#include "dl/Codegen/CPU/AffineUtils.h"
#include "dl/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
/// which must not outlive the part that allocated it; with `early`, also of
/// an allocation with dynamic sizes (kept in the part that uses it: the
/// affine passes relate a memref.dim of it to the sizes it was allocated
/// with).
bool isPinnedMemory(Value value, bool early, unsigned depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 16)
    return false;
  if (isa<memref::AllocaOp>(def))
    return true;
  if (auto alloc = dyn_cast<memref::AllocOp>(def))
    return early && !alloc->getOperands().empty();
  if (auto view = dyn_cast<ViewLikeOpInterface>(def))
    return isPinnedMemory(view.getViewSource(), early, depth + 1);
  // Casts and other memref-to-memref ops that are not view-like.
  return isa<BaseMemRefType>(value.getType()) &&
         llvm::any_of(def->getOperands(), [&](Value operand) {
           return isa<BaseMemRefType>(operand.getType()) &&
                  isPinnedMemory(operand, early, depth + 1);
         });
}

/// Whether `op` stays in the caller under `early`: an allocation of static
/// size, or a side-effect-free op (a view, a memref.dim) of such
/// allocations, the function's arguments and constants (`stays` holds the
/// ops found so far). A part takes the allocations and recomputes the rest.
bool staysInCaller(Operation *op, Block &block,
                   const llvm::SmallPtrSetImpl<Operation *> &stays) {
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return alloc->getOperands().empty();
  if (op->getNumRegions() != 0 || op->getNumResults() == 0 ||
      !isMemoryEffectFree(op))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    if (auto arg = dyn_cast<BlockArgument>(operand))
      return arg.getOwner() == &block;
    return isRecomputable(operand) || stays.contains(operand.getDefiningOp());
  });
}

/// The memrefs `op` and the ops in it operate on.
SmallVector<Value> memrefsOf(Operation *op) {
  SmallVector<Value> memrefs;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (isa<BaseMemRefType>(operand.getType()))
        memrefs.push_back(operand);
  });
  return memrefs;
}

/// The top-level op of `block` that holds `op` (or null).
Operation *topLevel(Operation *op, Block &block) {
  return block.findAncestorOpInBlock(*op);
}

/// Moves `ops` (top-level ops of `func`, in order) into a new private
/// function, called where the first of them was.
void outlinePart(func::FuncOp func, ArrayRef<Operation *> ops, unsigned index,
                 SymbolTable &symbols,
                 const llvm::SmallPtrSetImpl<Operation *> &stays) {
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
  // What stays in the caller (early) is recomputed from what it is computed
  // of: the allocations and arguments are passed.
  SmallVector<Value> recomputed;
  llvm::SetVector<Value> inputs;
  std::function<void(Value)> leaves = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (isRecomputable(value))
      return;
    if (!def || !stays.contains(def) || isa<memref::AllocOp>(def)) {
      inputs.insert(value);
      return;
    }
    for (Value operand : def->getOperands())
      leaves(operand);
  };
  for (Value value : used) {
    if (isRecomputable(value)) {
      recomputed.push_back(value);
    } else if (Operation *def = value.getDefiningOp();
               def && stays.contains(def) && !isa<memref::AllocOp>(def)) {
      recomputed.push_back(value);
      leaves(value);
    } else {
      inputs.insert(value);
    }
  }
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
      FunctionType::get(ctx, ValueRange(inputs.getArrayRef()).getTypes(),
                        ValueRange(outputs).getTypes()));
  part.setPrivate();
  part->setAttr(kPartAttr, UnitAttr::get(ctx));
  // Carried by convert-func-to-llvm to the llvm.func (a `no_inline` unit
  // attribute is not).
  part->setAttr("passthrough",
                ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));
  symbols.insert(part);
  for (auto [i, input] : llvm::enumerate(inputs))
    if (input.getDefiningOp<memref::AllocOp>())
      part.setArgAttr(i, kFreshBufferAttr, UnitAttr::get(ctx));
  Block *entry = part.addEntryBlock();

  // The call, where the ops were.
  OpBuilder b(ops.front());
  auto call = func::CallOp::create(b, loc, part, inputs.getArrayRef());

  // Move the ops, then route values in and out.
  for (Operation *op : ops)
    op->moveBefore(entry, entry->end());
  routeIntoOutlined(part, entry, recomputed, inputs.getArrayRef());
  for (auto [value, result] : llvm::zip(outputs, call.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !part->isProperAncestor(use.getOwner());
    });
  OpBuilder inner = OpBuilder::atBlockEnd(entry);
  func::ReturnOp::create(inner, loc, outputs);
}

/// The position (in `position`, ops.size() for the terminator) of the last
/// top-level op of `block` after `accumulation` that uses its output, through
/// views, before one fills the output whole; 0 if none.
size_t lastReader(linalg::LinalgOp accumulation,
                  const llvm::DenseMap<Operation *, size_t> &position,
                  Block &block) {
  size_t self = position.lookup(accumulation);
  size_t end = position.size();
  // The output and the views it is of, up to a slot of the arena (a
  // memref.view) or the buffer it is; then every view of those.
  llvm::SetVector<Value> whole, values;
  for (OpOperand &init : accumulation.getDpsInitsMutable()) {
    Value value = init.get();
    while (true) {
      whole.insert(value);
      auto view = value.getDefiningOp<ViewLikeOpInterface>();
      if (!view || isa<memref::ViewOp>(view))
        break;
      value = view.getViewSource();
    }
  }
  values.insert(whole.begin(), whole.end());
  SmallVector<std::pair<size_t, Operation *>> readers;
  for (size_t i = 0; i < values.size(); ++i)
    for (Operation *user : values[i].getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == values[i] &&
          isMemoryEffectFree(user)) {
        values.insert(user->result_begin(), user->result_end());
        continue;
      }
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top || top == block.getTerminator()) {
        readers.push_back({end, nullptr});
        continue;
      }
      auto found = position.find(top);
      if (found != position.end() && found->second > self &&
          !isa<memref::DeallocOp>(top))
        readers.push_back({found->second, top});
    }
  llvm::sort(readers, [](auto &a, auto &b) { return a.first < b.first; });
  size_t last = 0;
  for (auto [at, op] : readers) {
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(op);
        fill && whole.contains(fill.getOutputs()[0]))
      break;
    last = at;
  }
  return last;
}

struct DLSplitFunctionPass
    : public dl::impl::DLSplitFunctionBase<DLSplitFunctionPass> {
  using DLSplitFunctionBase::DLSplitFunctionBase;

  void runOnOperation() override {
    if (maxOps <= 0)
      return;
    ModuleOp module = getOperation();
    // The parts of an earlier (early) run are cut again where they grew.
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock())
        funcs.push_back(func);
    SymbolTable symbols(module);
    for (func::FuncOp func : funcs)
      split(func, symbols);
  }

  void split(func::FuncOp func, SymbolTable &symbols) {
    Block &block = func.getBody().front();
    SmallVector<Operation *> ops;
    SmallVector<int64_t> weights;
    llvm::SmallPtrSet<Operation *, 32> stays;
    int64_t total = 0;
    for (Operation &op : block.without_terminator()) {
      // Constants stay: each part that uses one recomputes it.
      if (op.getNumResults() == 1 && isRecomputable(op.getResult(0)))
        continue;
      if (early && staysInCaller(&op, block, stays)) {
        stays.insert(&op);
        continue;
      }
      int64_t weight = 0;
      op.walk([&](Operation *) { ++weight; });
      ops.push_back(&op);
      weights.push_back(weight);
      total += weight;
    }
    if (total <= maxOps)
      return;

    // A cut before op i is forbidden while stack memory (early: or an
    // allocation of dynamic size) defined before i is used at or after i.
    llvm::DenseMap<Operation *, size_t> position;
    for (auto [i, op] : llvm::enumerate(ops))
      position[op] = i;
    SmallVector<int64_t> open(ops.size() + 1, 0);
    for (auto [i, op] : llvm::enumerate(ops))
      for (Value result : op->getResults()) {
        if (!isPinnedMemory(result, early))
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
    // Early, no cut between an accumulation (a linalg op with reduction
    // loops) and the ops before and after it that touch its output first:
    // its fill and its epilogue, which dl-affine-register-tile matches in
    // one block (what stands between them moves or stays with them).
    SmallVector<bool> held(ops.size() + 1, false);
    auto touches = [&](Operation *op, ArrayRef<Value> memrefs) {
      for (Value memref : memrefsOf(op))
        for (Value other : memrefs)
          if (mayShareMemory(memref, other))
            return true;
      return false;
    };
    for (size_t k = 0; early && k < ops.size(); ++k) {
      auto accumulation = dyn_cast<linalg::LinalgOp>(ops[k]);
      if (!accumulation || accumulation.getNumReductionLoops() == 0)
        continue;
      SmallVector<Value> outputs;
      for (OpOperand &init : accumulation.getDpsInitsMutable())
        outputs.push_back(init.get());
      for (size_t j = k; j-- > 0;)
        if (touches(ops[j], outputs)) {
          std::fill(held.begin() + j + 1, held.begin() + k + 1, true);
          break;
        }
      for (size_t j = k + 1; j < ops.size(); ++j)
        if (touches(ops[j], outputs)) {
          std::fill(held.begin() + k + 1, held.begin() + j + 1, true);
          break;
        }
      // Nor before a later reader of the output: dl-affine-register-tile
      // stores only the epilogue's result where it sees no later use of the
      // output but a fill of it (its users, through views, in its block).
      size_t last = lastReader(accumulation, position, block);
      if (last > k)
        std::fill(held.begin() + k + 1, held.begin() + last + 1, true);
    }
    // Parts: greedy, cut once a part holds maxOps where a cut is allowed.
    SmallVector<std::pair<size_t, size_t>> parts;
    size_t begin = 0;
    int64_t weight = 0, live = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      live += open[i];
      if (weight >= maxOps && live == 0 && !held[i]) {
        parts.push_back({begin, i});
        begin = i;
        weight = 0;
      }
      weight += weights[i];
    }
    if (parts.empty())
      return;
    parts.push_back({begin, ops.size()});
    // What stays in the caller within a part's ops moves before them, where
    // the part is called.
    // (With the constants they use, in order.)
    for (auto [first, end] : early ? parts : decltype(parts)()) {
      Operation *last = end < ops.size() ? ops[end] : block.getTerminator();
      for (Operation *op = ops[first]->getNextNode(); op != last;) {
        Operation *next = op->getNextNode();
        if (stays.contains(op) ||
            (op->getNumResults() == 1 && isRecomputable(op->getResult(0))))
          op->moveBefore(ops[first]);
        op = next;
      }
    }
    for (auto [index, range] : llvm::enumerate(parts))
      outlinePart(func,
                  ArrayRef(ops).slice(range.first, range.second - range.first),
                  index, symbols, stays);
    // What stayed for the parts only is dead in the caller.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (stays.contains(&op) && op.use_empty() &&
          !isa<memref::AllocOp>(op))
        op.erase();
  }
};

} // namespace
