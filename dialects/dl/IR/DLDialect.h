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
/// isDLTensor, and the element type is a signless integer (bool included) or
/// an unsigned one.
bool isDLIntegerTensor(Type type);
/// Whether `type` is one of dl's unsigned integer element types (ui8, ui16,
/// ui32, ui64). They are stored as the signless integer of the same width
/// (convert-dl-to-linalg); the ops whose result depends on the sign (compare,
/// max/min, divide, remainder, casts) lower them with unsigned arithmetic.
bool isDLUnsignedElement(Type type);
/// Whether the element type of `type` (or `type` itself) is unsigned.
bool isUnsignedTensor(Type type);

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
