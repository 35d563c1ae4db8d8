//===- Passes.h - dlc passes ------------------------------------*- C++ -*-===//
#ifndef DL_PASSES_H
#define DL_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
class TypeConverter;

namespace dl {

#define GEN_PASS_DECL
#include "dl/Passes.h.inc"

/// Patterns lowering every dl op to linalg/tensor/arith/math on tensors.
void populateDLToLinalgConversionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "dl/Passes.h.inc"

} // namespace dl
} // namespace mlir

#endif // DL_PASSES_H
