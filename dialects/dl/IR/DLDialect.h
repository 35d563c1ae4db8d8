//===- DLDialect.h - dl dialect ---------------------------------*- C++ -*-===//
#ifndef DL_DLDIALECT_H
#define DL_DLDIALECT_H

#include "dl/Support/TypeSize.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "dl/IR/DLOpsDialect.h.inc"

namespace mlir::dl {

/// True for a ranked tensor of a dl element type (any dimension may be
/// dynamic).
bool isDLTensor(Type type);
/// isDLTensor, and the element type is a float or an integer wider than i1.
bool isDLNumericTensor(Type type);
/// isDLTensor, and the element type is a float.
bool isDLFloatTensor(Type type);
/// isDLTensor, and the element type is a signless integer of one of `widths`.
bool isDLTensorOfIntegers(Type type, llvm::ArrayRef<unsigned> widths);

/// Fails with a diagnostic on `op` naming the first operand or result whose
/// size staticByteSize refuses.
LogicalResult verifyTypeSizes(Operation *op);

} // namespace mlir::dl

namespace mlir::OpTrait::dl {

/// Every dl op: its tensors' sizes fit in int64_t (in elements and bytes), so
/// that folders, passes and the lowering never overflow computing them.
template <typename ConcreteType>
class SizedTensors : public TraitBase<ConcreteType, SizedTensors> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return ::mlir::dl::verifyTypeSizes(op);
  }
};

} // namespace mlir::OpTrait::dl

#endif // DL_DLDIALECT_H
