//===- Recompute.h - values an outlined function recomputes ---------------===//
//
// dl-outline-parallel and dl-split-function move code into new functions;
// constants (and side-effect-free ops of constants) are recomputed there
// rather than passed as arguments: immediates for LLVM, not loads. The
// addresses of globals are passed, and a function equivalent to one outlined
// before is not kept (findEquivalent).
//
//===----------------------------------------------------------------------===//
#ifndef DL_LIB_CODEGEN_CPU_RECOMPUTE_H
#define DL_LIB_CODEGEN_CPU_RECOMPUTE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::dl {

/// Whether `value` is a constant, or a side-effect-free op (without regions,
/// one result) of such values, at most `depth` deep: cheaper to recompute in
/// an outlined function than to pass to it.
inline bool isRecomputable(Value value, unsigned depth = 0) {
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

/// Clones the ops computing `value` (see isRecomputable) at `b`, once each;
/// `mapping` maps the originals to the clones.
inline void recompute(OpBuilder &b, Value value, IRMapping &mapping) {
  if (mapping.contains(value))
    return;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    recompute(b, operand, mapping);
  b.clone(*def, mapping);
}

/// Routes values into `func`, a new function whose entry block `entry` has
/// one argument per value of `inputs` and holds the ops moved into it: their
/// uses of `inputs` become the arguments, and their uses of `recomputed`
/// copies recomputed at the start of `entry`.
inline void routeIntoOutlined(Operation *func, Block *entry,
                              ArrayRef<Value> recomputed,
                              ArrayRef<Value> inputs) {
  OpBuilder inner = OpBuilder::atBlockBegin(entry);
  // Recomputed ops of an input (a view of a passed buffer) use the argument.
  IRMapping mapping;
  for (auto [value, arg] : llvm::zip(inputs, entry->getArguments()))
    mapping.map(value, arg);
  for (Value value : recomputed)
    recompute(inner, value, mapping);
  auto inside = [&](OpOperand &use) {
    return func->isProperAncestor(use.getOwner());
  };
  for (Value value : recomputed)
    value.replaceUsesWithIf(mapping.lookup(value), inside);
  for (auto [value, arg] : llvm::zip(inputs, entry->getArguments()))
    Value(value).replaceUsesWithIf(arg, inside);
}

/// Whether `value` is (computed from) the address of a global (the weights):
/// passed to an outlined function rather than recomputed in it, so that the
/// code of identical layers, which differ in their weights only, is
/// outlined to identical functions (see findEquivalent).
inline bool readsGlobal(Value value, unsigned depth = 0) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 4)
    return false;
  if (def->getName().getStringRef() == "memref.get_global")
    return true;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return readsGlobal(operand, depth + 1);
  });
}

/// Whether an outlined function recomputes `value` (see isRecomputable and
/// readsGlobal) rather than taking it as an argument.
inline bool recomputeInOutlined(Value value) {
  return isRecomputable(value) && !readsGlobal(value);
}

/// The functions an outlining pass made so far, by type, each with what the
/// pass calls instead of it (the function itself, or a launch stub).
template <typename Func>
using OutlinedFunctions =
    llvm::DenseMap<Type, SmallVector<std::pair<Func, Operation *>>>;

/// What an earlier function of `outlined` is called through if its body is
/// equivalent to `func`'s (locations ignored), else null: one function for
/// the same code outlined twice.
template <typename Func>
Operation *findEquivalent(Func func, OutlinedFunctions<Func> &outlined) {
  for (auto [earlier, callee] : outlined[func.getFunctionType()])
    if (OperationEquivalence::isRegionEquivalentTo(
            &func.getBody(), &earlier.getBody(),
            OperationEquivalence::IgnoreLocations))
      return callee;
  return nullptr;
}

} // namespace mlir::dl

#endif // DL_LIB_CODEGEN_CPU_RECOMPUTE_H
