//===- DLOps.cpp - dl op result-type inference and folders ----------------===//
//
// Result-type inference doubles as the verifier of each op's shapes and
// attributes: InferTypeOpInterface's verifier calls it and compares with the
// result type written in the IR, and op creation from Python calls it to get the
// result type. Every failure names the op, what was expected and what was found.
//
//===----------------------------------------------------------------------===//

#include "dl/DLOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::dl;

namespace {
/// Emits "'dl.xxx' op <message>" at `loc` (when there is a location).
template <typename OpTy, typename... Args>
LogicalResult opError(std::optional<Location> loc, Args &&...args) {
  return emitOptionalError(loc, "'", OpTy::getOperationName(), "' op ",
                           std::forward<Args>(args)...);
}

std::string formatDims(ArrayRef<int64_t> dims) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(dims, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return text;
}

/// Every dl tensor type keeps a dynamic dimension, if any, in front.
template <typename OpTy>
LogicalResult checkOnlyLeadingDynamic(std::optional<Location> loc,
                                      ArrayRef<int64_t> shape,
                                      StringRef what) {
  for (auto [i, d] : llvm::enumerate(shape))
    if (i > 0 && ShapedType::isDynamic(d))
      return opError<OpTy>(loc, what, " would have shape ", formatDims(shape),
                           ", with a dynamic dimension that is not the leading "
                           "one; only the leading dimension may be dynamic");
  return success();
}

template <typename OpTy>
FailureOr<RankedTensorType> rankedOperand(std::optional<Location> loc,
                                          Value value, StringRef name) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type) {
    (void)opError<OpTy>(loc, "expects ", name, " to be a ranked tensor, but got ",
                        value.getType());
    return failure();
  }
  return type;
}

/// numpy broadcasting of two shapes, aligned from the right. A dynamic size
/// broadcasts with a dynamic size (assumed equal) or with 1.
template <typename OpTy>
FailureOr<SmallVector<int64_t>>
broadcastShapes(std::optional<Location> loc, ArrayRef<int64_t> lhs,
                ArrayRef<int64_t> rhs, Type lhsType, Type rhsType,
                StringRef what) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Position counted from the right, as numpy reports it.
    int64_t l = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t r = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    int64_t &out = result[rank - 1 - i];
    bool lDyn = ShapedType::isDynamic(l), rDyn = ShapedType::isDynamic(r);
    if (lDyn && rDyn) {
      out = ShapedType::kDynamic;
    } else if (lDyn || rDyn) {
      int64_t other = lDyn ? r : l;
      if (other != 1) {
        (void)opError<OpTy>(
            loc, what, " are not broadcast-compatible: dimension -", i + 1,
            " is dynamic in ", lDyn ? "lhs " : "rhs ", lDyn ? lhsType : rhsType,
            " and ", other, " in ", lDyn ? "rhs " : "lhs ",
            lDyn ? rhsType : lhsType,
            "; a dynamic dimension broadcasts only with a dynamic one or 1");
        return failure();
      }
      out = ShapedType::kDynamic;
    } else if (l == r || r == 1) {
      out = l;
    } else if (l == 1) {
      out = r;
    } else {
      (void)opError<OpTy>(loc, what,
                          " are not broadcast-compatible: dimension -", i + 1,
                          " is ", l, " in lhs ", lhsType, " and ", r,
                          " in rhs ", rhsType);
      return failure();
    }
  }
  return result;
}

template <typename OpTy>
LogicalResult inferBroadcastBinary(std::optional<Location> loc, Value lhs,
                                   Value rhs, SmallVectorImpl<Type> &results) {
  auto lhsType = rankedOperand<OpTy>(loc, lhs, "lhs");
  auto rhsType = rankedOperand<OpTy>(loc, rhs, "rhs");
  if (failed(lhsType) || failed(rhsType))
    return failure();
  Type elementType = lhsType->getElementType();
  if (elementType != rhsType->getElementType())
    return opError<OpTy>(loc, "expects operands of the same element type, but "
                              "got lhs ",
                         *lhsType, " and rhs ", *rhsType);
  auto shape = broadcastShapes<OpTy>(loc, lhsType->getShape(),
                                     rhsType->getShape(), *lhsType, *rhsType,
                                     "operands");
  if (failed(shape) ||
      failed(checkOnlyLeadingDynamic<OpTy>(loc, *shape, "the result")))
    return failure();
  results.push_back(RankedTensorType::get(*shape, elementType));
  return success();
}

template <typename OpTy>
LogicalResult inferReduction(std::optional<Location> loc, Value input,
                             ArrayRef<int64_t> axes, bool keepdims,
                             SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<OpTy>(loc, input, "input");
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank)
      return opError<OpTy>(loc, "axis ", axis, " is out of range for input ",
                           *type, " of rank ", rank,
                           "; axes must be in [0, rank)");
    if (i > 0 && axis <= axes[i - 1])
      return opError<OpTy>(loc, "expects strictly increasing axes, but got ",
                           formatDims(axes));
  }
  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(type->getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(dim)))
      shape.push_back(size);
    else if (keepdims)
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  auto value = dyn_cast_or_null<ElementsAttr>(adaptor.getValueAttr());
  if (!value)
    return opError<ConstantOp>(loc, "expects an elements attribute as value");
  auto type = dyn_cast<RankedTensorType>(value.getShapedType());
  if (!type || !type.hasStaticShape())
    return opError<ConstantOp>(loc, "expects a statically shaped tensor value, "
                                    "but got ",
                               value.getShapedType());
  results.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

#define DL_BINARY_INFER(OpTy)                                                  \
  LogicalResult OpTy::inferReturnTypes(MLIRContext *,                          \
                                       std::optional<Location> loc,            \
                                       Adaptor adaptor,                        \
                                       SmallVectorImpl<Type> &results) {       \
    return inferBroadcastBinary<OpTy>(loc, adaptor.getLhs(), adaptor.getRhs(), \
                                      results);                                \
  }
DL_BINARY_INFER(AddOp)
DL_BINARY_INFER(SubOp)
DL_BINARY_INFER(MulOp)
DL_BINARY_INFER(DivOp)
#undef DL_BINARY_INFER

#define DL_UNARY_INFER(OpTy)                                                   \
  LogicalResult OpTy::inferReturnTypes(MLIRContext *, std::optional<Location>, \
                                       Adaptor adaptor,                        \
                                       SmallVectorImpl<Type> &results) {       \
    results.push_back(adaptor.getInput().getType());                           \
    return success();                                                          \
  }
DL_UNARY_INFER(ReluOp)
DL_UNARY_INFER(ExpOp)
#undef DL_UNARY_INFER

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto lhs = rankedOperand<MatmulOp>(loc, adaptor.getLhs(), "lhs");
  auto rhs = rankedOperand<MatmulOp>(loc, adaptor.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  if (lhs->getRank() < 2 || rhs->getRank() < 2)
    return opError<MatmulOp>(loc, "expects operands of rank 2 or more, but got "
                                  "lhs ",
                             *lhs, " and rhs ", *rhs);
  if (lhs->getElementType() != rhs->getElementType())
    return opError<MatmulOp>(loc, "expects operands of the same element type, "
                                  "but got lhs ",
                             *lhs, " and rhs ", *rhs);
  ArrayRef<int64_t> l = lhs->getShape(), r = rhs->getShape();
  int64_t lk = l.back(), rk = r[r.size() - 2];
  if (!ShapedType::isDynamic(lk) && !ShapedType::isDynamic(rk) && lk != rk)
    return opError<MatmulOp>(loc, "contraction dimensions differ: lhs ", *lhs,
                             " has K = ", lk, " but rhs ", *rhs, " has K = ",
                             rk);
  auto batch = broadcastShapes<MatmulOp>(loc, l.drop_back(2), r.drop_back(2),
                                         *lhs, *rhs, "batch dimensions");
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shape(*batch);
  shape.push_back(l[l.size() - 2]);
  shape.push_back(r.back());
  if (failed(checkOnlyLeadingDynamic<MatmulOp>(loc, shape, "the result")))
    return failure();
  results.push_back(RankedTensorType::get(shape, lhs->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduction<ReduceSumOp>(loc, adaptor.getInput(), adaptor.getAxes(),
                                     adaptor.getKeepdims(), results);
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduction<ReduceMaxOp>(loc, adaptor.getInput(), adaptor.getAxes(),
                                     adaptor.getKeepdims(), results);
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<TransposeOp>(loc, adaptor.getInput(), "input");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = type->getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return opError<TransposeOp>(loc, "expects a permutation of ", rank,
                                " entries for input ", *type, ", but got ",
                                formatDims(perm));
  llvm::SmallBitVector seen(rank);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen.test(p))
      return opError<TransposeOp>(loc, "expects a permutation of 0..",
                                  rank - 1, ", but got ", formatDims(perm));
    seen.set(p);
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type->getDimSize(p));
  if (failed(checkOnlyLeadingDynamic<TransposeOp>(loc, shape, "the result")))
    return failure();
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<ReshapeOp>(loc, adaptor.getInput(), "input");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> newShape = adaptor.getShape();
  std::optional<size_t> inferredDim;
  int64_t knownCount = 1;
  for (auto [i, size] : llvm::enumerate(newShape)) {
    if (size == -1) {
      if (inferredDim)
        return opError<ReshapeOp>(loc, "expects at most one -1 in the new "
                                       "shape, but got ",
                                  formatDims(newShape));
      inferredDim = i;
      continue;
    }
    if (size < 0)
      return opError<ReshapeOp>(loc, "expects sizes >= 0 or -1 in the new "
                                     "shape, but got ",
                                formatDims(newShape));
    knownCount *= size;
  }

  SmallVector<int64_t> shape(newShape);
  ArrayRef<int64_t> in = type->getShape();
  bool dynamicInput = type->getRank() > 0 && type->isDynamicDim(0);
  if (dynamicInput) {
    if (!inferredDim || *inferredDim != 0)
      return opError<ReshapeOp>(
          loc, "reshaping ", *type, " (dynamic leading dimension) needs -1 as "
          "the first entry of the new shape, but got ", formatDims(newShape));
    int64_t perRow = 1;
    for (int64_t size : in.drop_front())
      perRow *= size;
    if (knownCount == 0 || perRow % knownCount != 0)
      return opError<ReshapeOp>(
          loc, "cannot reshape ", *type, " into ", formatDims(newShape),
          " for every batch size: the ", perRow, " elements per leading index "
          "are not a multiple of the ", knownCount, " elements of the static "
          "part of the new shape");
    shape[0] = ShapedType::kDynamic;
  } else {
    int64_t count = type->getNumElements();
    if (inferredDim) {
      if (knownCount == 0 || count % knownCount != 0)
        return opError<ReshapeOp>(loc, "cannot reshape ", *type, " (", count,
                                  " elements) into ", formatDims(newShape));
      shape[*inferredDim] = count / knownCount;
    } else if (count != knownCount) {
      return opError<ReshapeOp>(loc, "cannot reshape ", *type, " (", count,
                                " elements) into ", formatDims(newShape), " (",
                                knownCount, " elements)");
    }
  }
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<SoftmaxOp>(loc, adaptor.getInput(), "input");
  if (failed(type))
    return failure();
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= type->getRank())
    return opError<SoftmaxOp>(loc, "axis ", axis, " is out of range for input ",
                              *type, " of rank ", type->getRank(),
                              "; the axis must be in [0, rank)");
  results.push_back(*type);
  return success();
}

#define GET_OP_CLASSES
#include "dl/DLOps.cpp.inc"
