//===- Recompute.h - values an outlined function recomputes ---------------===//
//
// dl-outline-parallel and dl-split-function move code into new functions;
// constants (and side-effect-free ops of constants) are recomputed there
// rather than passed as arguments: immediates for LLVM, not loads.
//
//===----------------------------------------------------------------------===//
#ifndef DL_LIB_CODEGEN_CPU_RECOMPUTE_H
#define DL_LIB_CODEGEN_CPU_RECOMPUTE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

} // namespace mlir::dl

#endif // DL_LIB_CODEGEN_CPU_RECOMPUTE_H
