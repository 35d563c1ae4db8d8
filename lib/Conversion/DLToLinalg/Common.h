//===- Common.h - helpers shared by the dl-to-linalg patterns ---*- C++ -*-===//
//
// Builders of the tensor/linalg/arith idioms every lowering uses: empty and
// filled tensors, broadcasting elementwise generics, reductions, scalar
// arithmetic that follows numpy's semantics per element type.
//
// Inside linalg bodies, bool values are their i8 storage (0 or 1); scalar
// results that are i1 (comparisons) are widened with `boolToStorage`.
//
//===----------------------------------------------------------------------===//

#ifndef DL_CONVERSION_DLTOLINALG_COMMON_H
#define DL_CONVERSION_DLTOLINALG_COMMON_H

#include "dl/IR/DLOps.h"
#include "dl/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::dl::lowering {

using BodyBuilder = function_ref<Value(OpBuilder &, Location, ValueRange)>;

inline bool isFloat(Type type) { return isa<FloatType>(type); }

/// The storage type of a dl tensor type (i1 becomes i8).
RankedTensorType storageType(const TypeConverter &converter, Type type);

/// `tensor.empty` of `type`, taking dynamic sizes from `dynamicSizes` in order.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynamicSizes);

/// `tensor.empty` of `type` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   ValueRange dynamicSizes, Value value);

/// The dynamic sizes of `resultType`, each read from the first of `operands`
/// whose dimension aligned from the right (numpy style) is dynamic too.
SmallVector<Value> alignedDynamicSizes(OpBuilder &b, Location loc,
                                       RankedTensorType resultType,
                                       ValueRange operands);

/// `tensor.dim` of every dynamic dimension of `value`, in order.
SmallVector<Value> dynamicSizesOf(OpBuilder &b, Location loc, Value value);

/// Indexing map reading an operand of shape `operandShape` aligned from the
/// right with `resultShape` (whose dimensions are loops `firstLoop`...), in a
/// space of `numLoops` loops: broadcast dimensions read index 0.
AffineMap broadcastReadMap(MLIRContext *ctx, int64_t numLoops,
                           ArrayRef<int64_t> operandShape,
                           ArrayRef<int64_t> resultShape, int64_t firstLoop = 0);

/// An all-parallel linalg.generic producing `resultType` from `inputs`, which
/// broadcast against the result numpy-style; `body` maps the input elements
/// to the result element.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyBuilder body);
/// The same, with the result's dynamic sizes given.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyBuilder body,
                       ValueRange dynamicSizes);

/// `tensor` with its elements converted to `elementType` (floats only; a
/// no-op when already of that type).
Value convertElements(OpBuilder &b, Location loc, Value tensor,
                      Type elementType);

/// A linalg.reduce of `input` over sorted `axes` from `init` (whose type is the
/// accumulator type; a wider float accumulates narrower elements), combining
/// with `combine(accumulator, element)`. The result drops the reduced
/// dimensions and has the accumulator's element type.
Value buildReduce(OpBuilder &b, Location loc, Value input,
                  ArrayRef<int64_t> axes, Value init,
                  function_ref<Value(OpBuilder &, Location, Value, Value)> combine);

/// Reinserts the reduced `axes` of `reduced` as size-1 dimensions (keepdims).
Value expandReducedDims(OpBuilder &b, Location loc, Value reduced,
                        RankedTensorType keptType, ArrayRef<int64_t> axes);

/// The number of elements `axes` of `input` span, as a scalar of float type
/// `type` (from tensor.dim when a reduced dimension is dynamic).
Value reducedCount(OpBuilder &b, Location loc, Value input,
                   ArrayRef<int64_t> axes, Type type);

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// The type sums of `type` accumulate in: f32 for f16/bf16, `type` otherwise.
Type accumulatorType(Type type);

/// `value` converted between float widths (no-op when already `type`).
Value convertFloat(OpBuilder &b, Location loc, Value value, Type type);

Value constantScalar(OpBuilder &b, Location loc, Type type, double value);
Value addScalars(OpBuilder &b, Location loc, Value x, Value y);
Value subScalars(OpBuilder &b, Location loc, Value x, Value y);
Value mulScalars(OpBuilder &b, Location loc, Value x, Value y);
/// numpy's maximum/minimum: NaN-propagating on floats, signed on integers
/// (unsigned when `isUnsigned`: the operands are the storage of a uiN type).
Value maxScalars(OpBuilder &b, Location loc, Value x, Value y,
                 bool isUnsigned = false);
Value minScalars(OpBuilder &b, Location loc, Value x, Value y,
                 bool isUnsigned = false);
/// The identities of max and min: -inf / +inf, or the extreme integers
/// (0 and 2^n - 1 when `isUnsigned`). `type` is the storage type.
Value lowestValue(OpBuilder &b, Location loc, Type type,
                  bool isUnsigned = false);
Value highestValue(OpBuilder &b, Location loc, Type type,
                   bool isUnsigned = false);
/// An i1 widened to bool storage (i8 holding 0 or 1).
Value boolToStorage(OpBuilder &b, Location loc, Value bit);
/// Bool storage (i8) narrowed to i1.
Value storageToBool(OpBuilder &b, Location loc, Value byte);

/// Integer division and remainders that cannot trap: x / 0 = 0, x % 0 = 0;
/// signed: x / -1 = -x (wrapping) and x % -1 = 0 (the hardware traps on
/// INT_MIN / -1). Unsigned when `isUnsigned`.
Value safeDivI(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned);
Value safeRemI(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned);

//===----------------------------------------------------------------------===//
// Pattern groups
//===----------------------------------------------------------------------===//

void populateElementwisePatterns(const TypeConverter &converter,
                                 RewritePatternSet &patterns);
void populateReductionPatterns(const TypeConverter &converter,
                               RewritePatternSet &patterns);
void populateStructuredPatterns(const TypeConverter &converter,
                                RewritePatternSet &patterns);
void populateShapePatterns(const TypeConverter &converter,
                           RewritePatternSet &patterns);

} // namespace mlir::dl::lowering

#endif // DL_CONVERSION_DLTOLINALG_COMMON_H
