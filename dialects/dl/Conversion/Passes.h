//===- Passes.h - conversions out of dl -------------------------*- C++ -*-===//
#ifndef DL_CONVERSION_PASSES_H
#define DL_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::dl {

#define GEN_PASS_DECL
#include "dl/Conversion/Passes.h.inc"

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
#include "dl/Conversion/Passes.h.inc"

} // namespace mlir::dl

#endif // DL_CONVERSION_PASSES_H
