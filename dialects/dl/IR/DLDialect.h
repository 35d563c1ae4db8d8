//===- DLDialect.h - dl dialect ---------------------------------*- C++ -*-===//
#ifndef DL_DLDIALECT_H
#define DL_DLDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dl/IR/DLOpsDialect.h.inc"

namespace mlir::dl {

/// True for a ranked tensor of a dl element type whose dimensions are static
/// except possibly the leading one.
bool isDLTensor(Type type);
/// isDLTensor, and the element type is a float or an integer wider than i1.
bool isDLNumericTensor(Type type);
/// isDLTensor, and the element type is a float.
bool isDLFloatTensor(Type type);
/// isDLTensor, and the element type is a signless integer of one of `widths`.
bool isDLTensorOfIntegers(Type type, llvm::ArrayRef<unsigned> widths);

} // namespace mlir::dl

#endif // DL_DLDIALECT_H
