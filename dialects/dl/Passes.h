//===- Passes.h - dlc passes ------------------------------------*- C++ -*-===//
#ifndef DL_PASSES_H
#define DL_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace dl {

#define GEN_PASS_DECL
#include "dl/Passes.h.inc"

/// Converts tensors of i1 (bool) to tensors of i8 holding 0 or 1, the storage
/// numpy uses; every other type is kept.
class DLStorageTypeConverter : public TypeConverter {
public:
  DLStorageTypeConverter();
};

/// Patterns lowering every dl op to linalg/tensor/arith/math on tensors, with
/// result types converted by `typeConverter`.
void populateDLToLinalgConversionPatterns(const TypeConverter &typeConverter,
                                          RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "dl/Passes.h.inc"

} // namespace dl
} // namespace mlir

#endif // DL_PASSES_H
