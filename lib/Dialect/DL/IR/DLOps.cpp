//===- DLOps.cpp - dl op result-type inference and folders ----------------===//
//
// Result-type inference doubles as the verifier of each op's shapes and
// attributes: InferTypeOpInterface's verifier calls it and compares with the
// result type written in the IR, and op creation from Python calls it to get the
// result type. Every failure names the op, what was expected and what was found.
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::dl;

namespace {

using Loc = std::optional<Location>;

/// Emits "'dl.xxx' op <message>" at `loc` (when there is a location).
template <typename OpTy, typename... Args>
LogicalResult opError(Loc loc, Args &&...args) {
  return emitOptionalError(loc, "'", OpTy::getOperationName(), "' op ",
                           std::forward<Args>(args)...);
}

/// The sum of `terms`, or an error naming `what` where it overflows int64
/// (a result type built from it would assert in RankedTensorType::get).
template <typename OpTy>
FailureOr<int64_t> checkedSum(Loc loc, ArrayRef<int64_t> terms, StringRef what) {
  int64_t sum = 0;
  for (int64_t term : terms)
    if (llvm::AddOverflow(sum, term, sum) || sum < 0) {
      (void)opError<OpTy>(loc, what, " overflows (", llvm::interleaved(terms, " + "),
                          ")");
      return failure();
    }
  return sum;
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

template <typename OpTy>
FailureOr<RankedTensorType> rankedOperand(Loc loc, Value value,
                                          StringRef name) {
  auto type = dyn_cast_or_null<RankedTensorType>(value ? value.getType()
                                                       : Type());
  if (!type) {
    (void)opError<OpTy>(loc, "expects ", name, " to be a ranked tensor");
    return failure();
  }
  return type;
}

template <typename OpTy>
LogicalResult sameElementType(Loc loc, RankedTensorType a, StringRef aName,
                              RankedTensorType b, StringRef bName) {
  if (a.getElementType() == b.getElementType())
    return success();
  return opError<OpTy>(loc, "expects operands of the same element type, but got ",
                       aName, " ", a, " and ", bName, " ", b);
}

/// An axis attribute in [0, rank).
template <typename OpTy>
LogicalResult checkAxis(Loc loc, int64_t axis, RankedTensorType type,
                        StringRef what = "axis") {
  if (axis >= 0 && axis < type.getRank())
    return success();
  return opError<OpTy>(loc, what, " ", axis, " is out of range for input ", type,
                       " of rank ", type.getRank(), "; it must be in [0, rank)");
}

/// numpy broadcasting of two shapes, aligned from the right. A dynamic size
/// broadcasts with a dynamic size (assumed equal) or with 1.
template <typename OpTy>
FailureOr<SmallVector<int64_t>>
broadcastShapes(Loc loc, ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                Type lhsType, Type rhsType, StringRef what,
                StringRef lhsName = "lhs", StringRef rhsName = "rhs") {
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
            " is dynamic in ", lDyn ? lhsName : rhsName, " ",
            lDyn ? lhsType : rhsType, " and ", other, " in ",
            lDyn ? rhsName : lhsName, " ", lDyn ? rhsType : lhsType,
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
                          " is ", l, " in ", lhsName, " ", lhsType, " and ", r,
                          " in ", rhsName, " ", rhsType);
      return failure();
    }
  }
  return result;
}

/// The broadcast shape of two operands of the same element type.
template <typename OpTy>
FailureOr<SmallVector<int64_t>> inferBroadcast(Loc loc, Value lhs, Value rhs) {
  auto lhsType = rankedOperand<OpTy>(loc, lhs, "lhs");
  auto rhsType = rankedOperand<OpTy>(loc, rhs, "rhs");
  if (failed(lhsType) || failed(rhsType) ||
      failed(sameElementType<OpTy>(loc, *lhsType, "lhs", *rhsType, "rhs")))
    return failure();
  auto shape = broadcastShapes<OpTy>(loc, lhsType->getShape(),
                                     rhsType->getShape(), *lhsType, *rhsType,
                                     "operands");
  if (failed(shape))
    return failure();
  return shape;
}

template <typename OpTy>
LogicalResult inferBroadcastBinary(Loc loc, Value lhs, Value rhs,
                                   SmallVectorImpl<Type> &results) {
  auto shape = inferBroadcast<OpTy>(loc, lhs, rhs);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(
      *shape, cast<RankedTensorType>(lhs.getType()).getElementType()));
  return success();
}

template <typename OpTy>
LogicalResult inferComparison(Loc loc, Value lhs, Value rhs,
                              SmallVectorImpl<Type> &results) {
  auto shape = inferBroadcast<OpTy>(loc, lhs, rhs);
  if (failed(shape))
    return failure();
  results.push_back(
      RankedTensorType::get(*shape, IntegerType::get(lhs.getContext(), 1)));
  return success();
}

/// Checks sorted, in-range axes; returns the reduced shape.
template <typename OpTy>
FailureOr<SmallVector<int64_t>> reducedShape(Loc loc, RankedTensorType type,
                                             ArrayRef<int64_t> axes,
                                             bool keepdims) {
  int64_t rank = type.getRank();
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= rank) {
      (void)opError<OpTy>(loc, "axis ", axis, " is out of range for input ",
                          type, " of rank ", rank, "; axes must be in [0, rank)");
      return failure();
    }
    if (i > 0 && axis <= axes[i - 1]) {
      (void)opError<OpTy>(loc, "expects strictly increasing axes, but got ",
                          formatDims(axes));
      return failure();
    }
  }
  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(type.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(dim)))
      shape.push_back(size);
    else if (keepdims)
      shape.push_back(1);
  }
  return shape;
}

template <typename OpTy>
LogicalResult inferReduction(Loc loc, Value input, ArrayRef<int64_t> axes,
                             bool keepdims, SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<OpTy>(loc, input, "input");
  if (failed(type))
    return failure();
  auto shape = reducedShape<OpTy>(loc, *type, axes, keepdims);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, type->getElementType()));
  return success();
}

/// A list attribute of `size` entries, each at least `minimum`.
template <typename OpTy>
LogicalResult checkList(Loc loc, ArrayRef<int64_t> values, size_t size,
                        int64_t minimum, StringRef name) {
  if (values.size() != size)
    return opError<OpTy>(loc, "expects ", name, " to have ", size,
                         " entries, but got ", formatDims(values));
  for (int64_t v : values)
    if (v < minimum)
      return opError<OpTy>(loc, "expects ", name, " entries >= ", minimum,
                           ", but got ", formatDims(values));
  return success();
}

/// The spatial dimensions (H, W) and channel dimension of a 4-D layout.
struct Layout2d {
  int64_t channel, height, width;
};

template <typename OpTy>
FailureOr<Layout2d> parseLayout(Loc loc, StringRef layout) {
  if (layout == "NCHW")
    return Layout2d{1, 2, 3};
  if (layout == "NHWC")
    return Layout2d{3, 1, 2};
  (void)opError<OpTy>(loc, "expects layout \"NCHW\" or \"NHWC\", but got \"",
                      layout, "\"");
  return failure();
}

/// Output size of a sliding window; fails when the window does not fit.
template <typename OpTy>
FailureOr<int64_t> windowOutputSize(Loc loc, int64_t size, int64_t padLow,
                                    int64_t padHigh, int64_t window,
                                    int64_t stride, int64_t dilation,
                                    StringRef what) {
  int64_t span = 0;
  if (llvm::MulOverflow(dilation, window - 1, span) || span == INT64_MAX) {
    (void)opError<OpTy>(loc, "the ", what, " window's span overflows (dilation ",
                        dilation, ", window ", window, ")");
    return failure();
  }
  span += 1;
  // A run-time size: the lowering computes the output size, and an image
  // smaller than the window gives an empty output (no read outside it).
  if (ShapedType::isDynamic(size))
    return ShapedType::kDynamic;
  FailureOr<int64_t> padded = checkedSum<OpTy>(
      loc, {size, padLow, padHigh}, (Twine("the padded ") + what + " size").str());
  if (failed(padded))
    return failure();
  if (*padded < span) {
    (void)opError<OpTy>(loc, "the ", what, " window spans ", span,
                        " elements but the padded input has only ", *padded);
    return failure();
  }
  return (*padded - span) / stride + 1;
}

/// The 4-D result shape of a convolution or pooling.
SmallVector<int64_t> spatialShape(Layout2d layout, int64_t batch,
                                  int64_t channels, int64_t height,
                                  int64_t width) {
  SmallVector<int64_t> shape(4);
  shape[0] = batch;
  shape[layout.channel] = channels;
  shape[layout.height] = height;
  shape[layout.width] = width;
  return shape;
}

template <typename OpTy>
FailureOr<RankedTensorType> image(Loc loc, Value input, Layout2d layout) {
  auto type = rankedOperand<OpTy>(loc, input, "input");
  if (failed(type))
    return failure();
  if (type->getRank() != 4) {
    (void)opError<OpTy>(loc, "expects a 4-D input, but got ", *type);
    return failure();
  }
  // The filters, windows and per-channel parameters are sized by the
  // channels: the batch and the image may be dynamic, the channels not.
  if (type->isDynamicDim(layout.channel)) {
    (void)opError<OpTy>(loc, "expects a static channel dimension (the batch "
                             "and the image may be dynamic), but got ",
                        *type);
    return failure();
  }
  return type;
}

template <typename OpTy>
LogicalResult inferPool(Loc loc, Value input, ArrayRef<int64_t> kernel,
                        ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
                        StringRef layoutName, SmallVectorImpl<Type> &results) {
  auto layout = parseLayout<OpTy>(loc, layoutName);
  if (failed(layout))
    return failure();
  auto type = image<OpTy>(loc, input, *layout);
  if (failed(type) ||
      failed(checkList<OpTy>(loc, kernel, 2, 1, "kernel")) ||
      failed(checkList<OpTy>(loc, strides, 2, 1, "strides")) ||
      failed(checkList<OpTy>(loc, padding, 4, 0, "padding")))
    return failure();
  for (int i = 0; i < 4; ++i)
    if (2 * padding[i] > kernel[i / 2])
      return opError<OpTy>(loc, "expects padding of at most half the kernel, "
                                "but got padding ",
                           formatDims(padding), " for kernel ",
                           formatDims(kernel));
  auto height = windowOutputSize<OpTy>(loc, type->getDimSize(layout->height),
                                       padding[0], padding[1], kernel[0],
                                       strides[0], 1, "pooling");
  if (failed(height))
    return failure();
  auto width = windowOutputSize<OpTy>(loc, type->getDimSize(layout->width),
                                      padding[2], padding[3], kernel[1],
                                      strides[1], 1, "pooling");
  if (failed(width))
    return failure();
  results.push_back(RankedTensorType::get(
      spatialShape(*layout, type->getDimSize(0),
                   type->getDimSize(layout->channel), *height, *width),
      type->getElementType()));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// ConstantOp, CastOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, Loc loc,
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

LogicalResult CastOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getType());
  if (input.getShape() != result.getShape())
    return emitOpError("expects the result to have the input's shape ")
           << formatDims(input.getShape()) << ", but got "
           << formatDims(result.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

#define DL_INFER(OpTy, ...)                                                    \
  LogicalResult OpTy::inferReturnTypes(MLIRContext *, Loc loc,                 \
                                       Adaptor adaptor,                        \
                                       SmallVectorImpl<Type> &results) {       \
    __VA_ARGS__                                                                \
  }

#define DL_BINARY_INFER(OpTy)                                                  \
  DL_INFER(OpTy, return inferBroadcastBinary<OpTy>(loc, adaptor.getLhs(),      \
                                                   adaptor.getRhs(),           \
                                                   results);)
DL_BINARY_INFER(AddOp)
DL_BINARY_INFER(SubOp)
DL_BINARY_INFER(MulOp)
DL_BINARY_INFER(DivOp)
DL_BINARY_INFER(PowOp)
DL_BINARY_INFER(MaximumOp)
DL_BINARY_INFER(MinimumOp)
DL_BINARY_INFER(LogicalAndOp)
DL_BINARY_INFER(LogicalOrOp)
DL_BINARY_INFER(LogicalXorOp)
DL_BINARY_INFER(BitwiseAndOp)
DL_BINARY_INFER(BitwiseOrOp)
DL_BINARY_INFER(BitwiseXorOp)
DL_BINARY_INFER(RemainderOp)
DL_BINARY_INFER(FmodOp)
#undef DL_BINARY_INFER

#define DL_COMPARE_INFER(OpTy)                                                 \
  DL_INFER(OpTy, return inferComparison<OpTy>(loc, adaptor.getLhs(),           \
                                              adaptor.getRhs(), results);)
DL_COMPARE_INFER(EqualOp)
DL_COMPARE_INFER(NotEqualOp)
DL_COMPARE_INFER(LessOp)
DL_COMPARE_INFER(LessEqualOp)
DL_COMPARE_INFER(GreaterOp)
DL_COMPARE_INFER(GreaterEqualOp)
#undef DL_COMPARE_INFER

#define DL_UNARY_INFER(OpTy)                                                   \
  DL_INFER(OpTy, (void)loc; results.push_back(adaptor.getInput().getType());   \
           return success();)
DL_UNARY_INFER(ReluOp)
DL_UNARY_INFER(Relu6Op)
DL_UNARY_INFER(AbsOp)
DL_UNARY_INFER(NegOp)
DL_UNARY_INFER(ExpOp)
DL_UNARY_INFER(LogOp)
DL_UNARY_INFER(SqrtOp)
DL_UNARY_INFER(RsqrtOp)
DL_UNARY_INFER(ErfOp)
DL_UNARY_INFER(TanhOp)
DL_UNARY_INFER(SigmoidOp)
DL_UNARY_INFER(SiluOp)
DL_UNARY_INFER(HardswishOp)
DL_UNARY_INFER(LeakyReluOp)
DL_UNARY_INFER(GeluOp)
DL_UNARY_INFER(SinOp)
DL_UNARY_INFER(CosOp)
DL_UNARY_INFER(TanOp)
DL_UNARY_INFER(AsinOp)
DL_UNARY_INFER(AcosOp)
DL_UNARY_INFER(AtanOp)
DL_UNARY_INFER(SinhOp)
DL_UNARY_INFER(CoshOp)
DL_UNARY_INFER(AsinhOp)
DL_UNARY_INFER(AcoshOp)
DL_UNARY_INFER(AtanhOp)
DL_UNARY_INFER(FloorOp)
DL_UNARY_INFER(CeilOp)
DL_UNARY_INFER(RoundOp)
DL_UNARY_INFER(SignOp)
DL_UNARY_INFER(LogicalNotOp)
DL_UNARY_INFER(BitwiseNotOp)
#undef DL_UNARY_INFER

/// isnan, isinf: the input's shape, bool elements.
#define DL_FLOAT_CLASS_INFER(OpTy)                                             \
  DL_INFER(OpTy, auto type = rankedOperand<OpTy>(loc, adaptor.getInput(),      \
                                                 "input");                     \
           if (failed(type)) return failure();                                 \
           results.push_back(RankedTensorType::get(                            \
               type->getShape(), IntegerType::get(type->getContext(), 1)));    \
           return success();)
DL_FLOAT_CLASS_INFER(IsNanOp)
DL_FLOAT_CLASS_INFER(IsInfOp)
#undef DL_FLOAT_CLASS_INFER

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, Loc loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto condition =
      rankedOperand<WhereOp>(loc, adaptor.getCondition(), "condition");
  auto values = inferBroadcast<WhereOp>(loc, adaptor.getLhs(), adaptor.getRhs());
  if (failed(condition) || failed(values))
    return failure();
  auto valueType = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto shape = broadcastShapes<WhereOp>(
      loc, condition->getShape(), *values, *condition,
      RankedTensorType::get(*values, valueType.getElementType()),
      "condition and values", "condition", "broadcast values");
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, valueType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp, Conv2dOp, pooling
//===----------------------------------------------------------------------===//

namespace {

/// The result shape of a matrix product of `lhs` and `rhs` (rank 2 or more,
/// numpy's batch broadcasting).
template <typename OpTy>
FailureOr<SmallVector<int64_t>> matmulShape(Loc loc, RankedTensorType lhs,
                                            RankedTensorType rhs) {
  if (lhs.getRank() < 2 || rhs.getRank() < 2) {
    (void)opError<OpTy>(loc, "expects operands of rank 2 or more, but got lhs ",
                        lhs, " and rhs ", rhs);
    return failure();
  }
  ArrayRef<int64_t> l = lhs.getShape(), r = rhs.getShape();
  int64_t lk = l.back(), rk = r[r.size() - 2];
  if (!ShapedType::isDynamic(lk) && !ShapedType::isDynamic(rk) && lk != rk) {
    (void)opError<OpTy>(loc, "contraction dimensions differ: lhs ", lhs,
                        " has K = ", lk, " but rhs ", rhs, " has K = ", rk);
    return failure();
  }
  auto batch = broadcastShapes<OpTy>(loc, l.drop_back(2), r.drop_back(2), lhs,
                                     rhs, "batch dimensions");
  if (failed(batch))
    return failure();
  SmallVector<int64_t> shape(*batch);
  shape.push_back(l[l.size() - 2]);
  shape.push_back(r.back());
  return shape;
}

} // namespace

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, Loc loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto lhs = rankedOperand<MatmulOp>(loc, adaptor.getLhs(), "lhs");
  auto rhs = rankedOperand<MatmulOp>(loc, adaptor.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  if (lhs->getRank() >= 2 && rhs->getRank() >= 2 &&
      failed(sameElementType<MatmulOp>(loc, *lhs, "lhs", *rhs, "rhs")))
    return failure();
  auto shape = matmulShape<MatmulOp>(loc, *lhs, *rhs);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, lhs->getElementType()));
  return success();
}

LogicalResult MatmulIntegerOp::inferReturnTypes(MLIRContext *ctx, Loc loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &results) {
  auto lhs = rankedOperand<MatmulIntegerOp>(loc, adaptor.getLhs(), "lhs");
  auto rhs = rankedOperand<MatmulIntegerOp>(loc, adaptor.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  for (auto [type, name] : {std::pair{*lhs, "lhs"}, std::pair{*rhs, "rhs"}}) {
    Type element = type.getElementType();
    if (!(element.isSignlessInteger(8) || element.isUnsignedInteger(8)))
      return opError<MatmulIntegerOp>(loc, "expects 8-bit integer operands (i8 "
                                           "or ui8), but got ",
                                      name, " ", type);
  }
  auto shape = matmulShape<MatmulIntegerOp>(loc, *lhs, *rhs);
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, IntegerType::get(ctx, 32)));
  return success();
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *, Loc loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto layout = parseLayout<Conv2dOp>(loc, adaptor.getLayout());
  if (failed(layout))
    return failure();
  auto input = image<Conv2dOp>(loc, adaptor.getInput(), *layout);
  auto filter = rankedOperand<Conv2dOp>(loc, adaptor.getFilter(), "filter");
  if (failed(input) || failed(filter) ||
      failed(sameElementType<Conv2dOp>(loc, *input, "input", *filter,
                                       "filter")) ||
      failed(checkList<Conv2dOp>(loc, adaptor.getStrides(), 2, 1, "strides")) ||
      failed(checkList<Conv2dOp>(loc, adaptor.getDilations(), 2, 1,
                                 "dilations")) ||
      failed(checkList<Conv2dOp>(loc, adaptor.getPadding(), 4, 0, "padding")))
    return failure();
  if (filter->getRank() != 4 || !filter->hasStaticShape())
    return opError<Conv2dOp>(loc, "expects a static 4-D filter, but got ",
                             *filter);
  bool nchw = adaptor.getLayout() == "NCHW";
  // [F, C/g, KH, KW] for NCHW, [KH, KW, C/g, F] for NHWC.
  int64_t filters = filter->getDimSize(nchw ? 0 : 3);
  int64_t filterChannels = filter->getDimSize(nchw ? 1 : 2);
  int64_t kh = filter->getDimSize(nchw ? 2 : 0);
  int64_t kw = filter->getDimSize(nchw ? 3 : 1);
  int64_t groups = adaptor.getGroups();
  int64_t channels = input->getDimSize(layout->channel);
  if (groups < 1 || channels % groups != 0 || filters % groups != 0)
    return opError<Conv2dOp>(loc, "expects groups (", groups,
                             ") to divide the input channels (", channels,
                             ") and the filters (", filters, ")");
  if (filterChannels != channels / groups)
    return opError<Conv2dOp>(
        loc, "expects the filter to have ", channels / groups,
        " input channels (input ", *input, " has ", channels,
        " channels, groups = ", groups, "), but filter ", *filter, " has ",
        filterChannels);
  if (Value bias = adaptor.getBias()) {
    auto biasType = cast<RankedTensorType>(bias.getType());
    if (failed(sameElementType<Conv2dOp>(loc, *input, "input", biasType,
                                         "bias")))
      return failure();
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != filters)
      return opError<Conv2dOp>(loc, "expects a bias of shape [", filters,
                               "], but got ", biasType);
  }
  ArrayRef<int64_t> strides = adaptor.getStrides(), pad = adaptor.getPadding(),
                    dilations = adaptor.getDilations();
  auto height = windowOutputSize<Conv2dOp>(
      loc, input->getDimSize(layout->height), pad[0], pad[1], kh, strides[0],
      dilations[0], "convolution");
  if (failed(height))
    return failure();
  auto width = windowOutputSize<Conv2dOp>(loc, input->getDimSize(layout->width),
                                          pad[2], pad[3], kw, strides[1],
                                          dilations[1], "convolution");
  if (failed(width))
    return failure();
  results.push_back(RankedTensorType::get(
      spatialShape(*layout, input->getDimSize(0), filters, *height, *width),
      input->getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *, Loc loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool<MaxPool2dOp>(loc, adaptor.getInput(), adaptor.getKernel(),
                                adaptor.getStrides(), adaptor.getPadding(),
                                adaptor.getLayout(), results);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *, Loc loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPool<AvgPool2dOp>(loc, adaptor.getInput(), adaptor.getKernel(),
                                adaptor.getStrides(), adaptor.getPadding(),
                                adaptor.getLayout(), results);
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *, Loc loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto input = rankedOperand<BatchNormOp>(loc, adaptor.getInput(), "input");
  if (failed(input) ||
      failed(checkAxis<BatchNormOp>(loc, adaptor.getAxis(), *input)))
    return failure();
  int64_t channels = input->getDimSize(adaptor.getAxis());
  if (ShapedType::isDynamic(channels))
    return opError<BatchNormOp>(loc, "expects a static channel dimension, but "
                                     "axis ",
                                adaptor.getAxis(), " of ", *input,
                                " is dynamic");
  std::pair<Value, StringRef> params[] = {{adaptor.getMean(), "mean"},
                                          {adaptor.getVariance(), "variance"},
                                          {adaptor.getGamma(), "gamma"},
                                          {adaptor.getBeta(), "beta"}};
  for (auto [value, name] : params) {
    auto type = rankedOperand<BatchNormOp>(loc, value, name);
    if (failed(type) ||
        failed(sameElementType<BatchNormOp>(loc, *input, "input", *type, name)))
      return failure();
    if (type->getRank() != 1 || type->getDimSize(0) != channels)
      return opError<BatchNormOp>(loc, "expects ", name, " of shape [",
                                  channels, "] (the size of axis ",
                                  adaptor.getAxis(), " of ", *input,
                                  "), but got ", *type);
  }
  results.push_back(*input);
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

namespace {

/// The element types a quantized tensor may have: 8- and 16-bit integers of
/// either sign and i32 (an accumulator's, a bias').
bool isQuantizedElement(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer || integer.isSigned())
    return false;
  unsigned width = integer.getWidth();
  return width == 8 || width == 16 || (width == 32 && integer.isSignless());
}

/// Checks the scale and zero point of a dl.quantize / dl.dequantize of
/// `input` (its quantized side: `integerType`'s element type is the zero
/// point's).
template <typename OpTy>
LogicalResult checkQuantParams(Loc loc, RankedTensorType input, Value scaleValue,
                               Value zeroValue, int64_t axis) {
  auto scale = rankedOperand<OpTy>(loc, scaleValue, "scale");
  auto zero = rankedOperand<OpTy>(loc, zeroValue, "zero_point");
  if (failed(scale) || failed(zero))
    return failure();
  if (!isQuantizedElement(zero->getElementType()))
    return opError<OpTy>(loc, "expects a zero point of i8, ui8, i16, ui16 or i32, "
                              "but got ", *zero);
  if (scale->getShape() != zero->getShape())
    return opError<OpTy>(loc, "expects scale and zero_point of the same shape, but "
                              "got ", *scale, " and ", *zero);
  if (scale->getRank() > 1)
    return opError<OpTy>(loc, "expects a scale of rank 0 (per tensor) or 1 (per "
                              "axis), but got ", *scale);
  if (scale->getRank() == 1) {
    if (failed(checkAxis<OpTy>(loc, axis, input)))
      return failure();
    int64_t size = input.getDimSize(axis), count = scale->getDimSize(0);
    if (!ShapedType::isDynamic(size) && !ShapedType::isDynamic(count) &&
        size != count)
      return opError<OpTy>(loc, "expects one scale per index of axis ", axis,
                           " (", size, " in ", input, "), but got ", *scale);
  }
  return success();
}

} // namespace

LogicalResult QuantizeOp::inferReturnTypes(MLIRContext *, Loc loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &results) {
  auto input = rankedOperand<QuantizeOp>(loc, adaptor.getInput(), "input");
  if (failed(input) ||
      failed(checkQuantParams<QuantizeOp>(loc, *input, adaptor.getScale(),
                                          adaptor.getZeroPoint(),
                                          adaptor.getAxis())))
    return failure();
  auto scale = cast<RankedTensorType>(adaptor.getScale().getType());
  if (scale.getElementType() != input->getElementType())
    return opError<QuantizeOp>(loc, "expects a scale of the input's element "
                                    "type, but got ", scale, " for input ",
                               *input);
  auto zero = cast<RankedTensorType>(adaptor.getZeroPoint().getType());
  results.push_back(input->clone(zero.getElementType()));
  return success();
}

LogicalResult DequantizeOp::inferReturnTypes(MLIRContext *, Loc loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  auto input = rankedOperand<DequantizeOp>(loc, adaptor.getInput(), "input");
  if (failed(input) ||
      failed(checkQuantParams<DequantizeOp>(loc, *input, adaptor.getScale(),
                                            adaptor.getZeroPoint(),
                                            adaptor.getAxis())))
    return failure();
  auto zero = cast<RankedTensorType>(adaptor.getZeroPoint().getType());
  if (zero.getElementType() != input->getElementType())
    return opError<DequantizeOp>(loc, "expects a zero point of the input's "
                                      "element type, but got ", zero,
                                 " for input ", *input);
  auto scale = cast<RankedTensorType>(adaptor.getScale().getType());
  results.push_back(input->clone(scale.getElementType()));
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, Loc loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto input = rankedOperand<LayerNormOp>(loc, adaptor.getInput(), "input");
  if (failed(input) ||
      failed(checkAxis<LayerNormOp>(loc, adaptor.getAxis(), *input)))
    return failure();
  ArrayRef<int64_t> normalized =
      input->getShape().drop_front(adaptor.getAxis());
  if (llvm::any_of(normalized, ShapedType::isDynamic))
    return opError<LayerNormOp>(loc, "cannot normalize over the dynamic "
                                     "dimension of ",
                                *input);
  std::pair<Value, StringRef> params[] = {{adaptor.getGamma(), "gamma"},
                                          {adaptor.getBeta(), "beta"}};
  for (auto [value, name] : params) {
    auto type = rankedOperand<LayerNormOp>(loc, value, name);
    if (failed(type) ||
        failed(sameElementType<LayerNormOp>(loc, *input, "input", *type, name)))
      return failure();
    if (type->getShape() != normalized)
      return opError<LayerNormOp>(loc, "expects ", name, " of shape ",
                                  formatDims(normalized),
                                  " (the normalized dimensions of ", *input,
                                  "), but got ", *type);
  }
  results.push_back(*input);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

#define DL_REDUCE_INFER(OpTy)                                                  \
  DL_INFER(OpTy, return inferReduction<OpTy>(loc, adaptor.getInput(),          \
                                             adaptor.getAxes(),                \
                                             adaptor.getKeepdims(), results);)
DL_REDUCE_INFER(ReduceSumOp)
DL_REDUCE_INFER(ReduceMaxOp)
DL_REDUCE_INFER(ReduceMinOp)
DL_REDUCE_INFER(ReduceMeanOp)
#undef DL_REDUCE_INFER

#define DL_ARG_INFER(OpTy)                                                     \
  DL_INFER(                                                                    \
      OpTy, auto type = rankedOperand<OpTy>(loc, adaptor.getInput(), "input"); \
      if (failed(type) || failed(checkAxis<OpTy>(loc, adaptor.getAxis(), *type))) \
        return failure();                                                      \
      int64_t axis = adaptor.getAxis();                                        \
      auto shape = reducedShape<OpTy>(loc, *type, ArrayRef<int64_t>(axis),     \
                                      adaptor.getKeepdims());                  \
      if (failed(shape)) return failure();                                     \
      results.push_back(RankedTensorType::get(                                 \
          *shape, IntegerType::get(type->getContext(), 64)));                  \
      return success();)
DL_ARG_INFER(ArgmaxOp)
DL_ARG_INFER(ArgminOp)
#undef DL_ARG_INFER

#define DL_SOFTMAX_INFER(OpTy)                                                 \
  DL_INFER(OpTy,                                                               \
           auto type = rankedOperand<OpTy>(loc, adaptor.getInput(), "input");  \
           if (failed(type) ||                                                 \
               failed(checkAxis<OpTy>(loc, adaptor.getAxis(), *type)))         \
               return failure();                                               \
           results.push_back(*type); return success();)
DL_SOFTMAX_INFER(SoftmaxOp)
DL_SOFTMAX_INFER(LogSoftmaxOp)
#undef DL_SOFTMAX_INFER

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, Loc loc,
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
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, Loc loc,
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
      if (!inferredDim)
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
  size_t numSizes = adaptor.getSizes().size();
  if (numSizes > 0) {
    // Every -1 is a dynamic dimension whose size is the next operand.
    size_t numUnknown = llvm::count(newShape, -1);
    if (numSizes != numUnknown)
      return opError<ReshapeOp>(loc, "expects one size operand per -1 in the "
                                     "new shape ",
                                formatDims(newShape), " (", numUnknown,
                                "), but got ", numSizes);
    for (int64_t &size : shape)
      if (size == -1)
        size = ShapedType::kDynamic;
    results.push_back(RankedTensorType::get(shape, type->getElementType()));
    return success();
  }
  if (llvm::count(newShape, -1) > 1)
    return opError<ReshapeOp>(loc, "expects at most one -1 in the new shape "
                                   "without size operands, but got ",
                              formatDims(newShape));
  if (!type->hasStaticShape()) {
    if (!inferredDim)
      return opError<ReshapeOp>(
          loc, "reshaping ", *type, " (dynamic dimensions) needs a -1 in the "
          "new shape for them, or size operands, but got ",
          formatDims(newShape));
    int64_t staticCount = 1;
    for (int64_t size : type->getShape())
      if (!ShapedType::isDynamic(size))
        staticCount *= size;
    if (knownCount == 0 || staticCount % knownCount != 0)
      return opError<ReshapeOp>(
          loc, "cannot reshape ", *type, " into ", formatDims(newShape),
          " for every size of its dynamic dimensions: the ", staticCount,
          " elements of its static dimensions are not a multiple of the ",
          knownCount, " elements of the static part of the new shape");
    shape[*inferredDim] = ShapedType::kDynamic;
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

LogicalResult BroadcastToOp::inferReturnTypes(MLIRContext *, Loc loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<BroadcastToOp>(loc, adaptor.getInput(), "input");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> target = adaptor.getShape();
  int64_t rank = target.size(), offset = rank - type->getRank();
  if (offset < 0)
    return opError<BroadcastToOp>(loc, "cannot broadcast ", *type,
                                  " to the lower-rank shape ",
                                  formatDims(target));
  size_t numSizes = adaptor.getSizes().size();
  if (numSizes > 0 && numSizes != static_cast<size_t>(llvm::count(target, -1)))
    return opError<BroadcastToOp>(
        loc, "expects one size operand per -1 in the shape ", formatDims(target),
        " (", llvm::count(target, -1), "), but got ", numSizes);
  SmallVector<int64_t> shape(target);
  for (int64_t dim = 0; dim < rank; ++dim) {
    int64_t want = target[dim];
    int64_t have = dim >= offset ? type->getDimSize(dim - offset) : 1;
    if (want == -1 && numSizes > 0) {
      // A run-time size: an input dimension of 1 broadcasts to it, a dynamic
      // one must have it.
      if (have != 1 && !ShapedType::isDynamic(have))
        return opError<BroadcastToOp>(
            loc, "cannot broadcast ", *type, " to ", formatDims(target),
            ": dimension ", dim, " is ", have,
            ", which only a size of 1 or a dynamic size broadcasts to a "
            "run-time size");
      shape[dim] = ShapedType::kDynamic;
    } else if (want == -1) {
      if (dim < offset)
        return opError<BroadcastToOp>(
            loc, "expects -1 (keep the input's size) only where the input has "
                 "a dimension, but got ",
            formatDims(target), " for ", *type);
      shape[dim] = have;
    } else if (ShapedType::isDynamic(have)) {
      // A dynamic dimension broadcast to a static size only stays right when
      // it has that size at run time; it must be written as -1.
      return opError<BroadcastToOp>(loc, "cannot broadcast ", *type, " to ",
                                    formatDims(target), ": dimension ", dim,
                                    " is dynamic; keep it with -1");
    } else if (want < 0 || (have != want && have != 1 &&
                            !ShapedType::isDynamic(have))) {
      return opError<BroadcastToOp>(loc, "cannot broadcast ", *type, " to ",
                                    formatDims(target), ": dimension ", dim,
                                    " is ", formatDims({have}), ", not 1 or ",
                                    want);
    }
  }
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, Loc loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<SliceOp>(loc, adaptor.getInput(), "input");
  if (failed(type))
    return failure();
  ArrayRef<int64_t> starts = adaptor.getStarts(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  size_t rank = type->getRank();
  if (starts.size() != rank || sizes.size() != rank || strides.size() != rank)
    return opError<SliceOp>(loc, "expects starts, sizes and strides of ", rank,
                            " entries for input ", *type);
  size_t numSizes = adaptor.getDynamicSizes().size();
  if (numSizes > 0 && numSizes != static_cast<size_t>(llvm::count(sizes, -1)))
    return opError<SliceOp>(loc, "expects one dynamic size operand per -1 in "
                                 "the sizes ",
                            formatDims(sizes), " (", llvm::count(sizes, -1),
                            "), but got ", numSizes);
  SmallVector<int64_t> shape;
  for (size_t dim = 0; dim < rank; ++dim) {
    int64_t extent = type->getDimSize(dim);
    int64_t start = starts[dim], size = sizes[dim], stride = strides[dim];
    if (size == -1 && numSizes > 0) {
      // At most the operand's count of elements, as many as there are.
      if (stride <= 0 || start < 0 ||
          (!ShapedType::isDynamic(extent) && start > extent))
        return opError<SliceOp>(loc, "dimension ", dim, " of ", *type,
                                ": a slice of a run-time size needs a start "
                                "in [0, size] and a positive stride, but got "
                                "start ",
                                start, ", stride ", stride);
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    if (size == -1) {
      if (!ShapedType::isDynamic(extent) || start != 0 || stride != 1)
        return opError<SliceOp>(loc, "size -1 takes the whole dynamic "
                                     "dimension (start 0, stride 1) without "
                                     "size operands, but dimension ",
                                dim, " of ", *type, " has start ", start,
                                ", stride ", stride);
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t last = start + (size - 1) * stride;
    // On a dynamic dimension, only what is known: the indices are not
    // negative.
    bool outside =
        ShapedType::isDynamic(extent)
            ? size > 0 && (start < 0 || last < 0)
            : size > 0 && (start < 0 || start >= extent || last < 0 ||
                           last >= extent);
    if (stride == 0 || size < 0 || outside)
      return opError<SliceOp>(loc, "dimension ", dim, " of ", *type,
                              ": start ", start, ", size ", size, ", stride ",
                              stride, " reads outside [0, ",
                              (ShapedType::isDynamic(extent) ? std::string("?")
                                                           : std::to_string(extent)),
                              ")");
    shape.push_back(size);
  }
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, Loc loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return opError<ConcatOp>(loc, "expects at least one input");
  auto first = rankedOperand<ConcatOp>(loc, inputs.front(), "input #0");
  if (failed(first) ||
      failed(checkAxis<ConcatOp>(loc, adaptor.getAxis(), *first)))
    return failure();
  int64_t axis = adaptor.getAxis();
  SmallVector<int64_t> shape(first->getShape());
  for (auto [i, input] : llvm::enumerate(inputs.drop_front())) {
    std::string name = "input #" + std::to_string(i + 1);
    auto type = rankedOperand<ConcatOp>(loc, input, name);
    if (failed(type) ||
        failed(sameElementType<ConcatOp>(loc, *first, "input #0", *type, name)))
      return failure();
    if (type->getRank() != first->getRank())
      return opError<ConcatOp>(loc, "expects inputs of the same rank, but got ",
                               *first, " and ", *type);
    for (int64_t dim = 0; dim < type->getRank(); ++dim) {
      int64_t size = type->getDimSize(dim);
      if (dim == axis) {
        if (ShapedType::isDynamic(shape[dim]) || ShapedType::isDynamic(size)) {
          shape[dim] = ShapedType::kDynamic;
        } else {
          FailureOr<int64_t> total = checkedSum<ConcatOp>(
              loc, {shape[dim], size}, "the concatenated size along the axis");
          if (failed(total))
            return failure();
          shape[dim] = *total;
        }
      } else if (size != first->getDimSize(dim)) {
        return opError<ConcatOp>(loc, "expects inputs of equal sizes except "
                                      "along axis ",
                                 axis, ", but dimension ", dim, " differs: ",
                                 *first, " and ", *type);
      }
    }
  }
  results.push_back(RankedTensorType::get(shape, first->getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, Loc loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<PadOp>(loc, adaptor.getInput(), "input");
  if (failed(type) ||
      failed(checkList<PadOp>(loc, adaptor.getLow(), type->getRank(), 0, "low")) ||
      failed(checkList<PadOp>(loc, adaptor.getHigh(), type->getRank(), 0,
                              "high")))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [dim, size] : llvm::enumerate(type->getShape())) {
    if (ShapedType::isDynamic(size)) {
      shape.push_back(size);
      continue;
    }
    FailureOr<int64_t> padded = checkedSum<PadOp>(
        loc, {size, adaptor.getLow()[dim], adaptor.getHigh()[dim]},
        "the padded size of dimension " + std::to_string(dim));
    if (failed(padded))
      return failure();
    shape.push_back(*padded);
  }
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, Loc loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto type = rankedOperand<GatherOp>(loc, adaptor.getInput(), "input");
  auto indices = rankedOperand<GatherOp>(loc, adaptor.getIndices(), "indices");
  if (failed(type) || failed(indices) ||
      failed(checkAxis<GatherOp>(loc, adaptor.getAxis(), *type)))
    return failure();
  int64_t axis = adaptor.getAxis();
  SmallVector<int64_t> shape(type->getShape().take_front(axis));
  llvm::append_range(shape, indices->getShape());
  llvm::append_range(shape, type->getShape().drop_front(axis + 1));
  results.push_back(RankedTensorType::get(shape, type->getElementType()));
  return success();
}

LogicalResult IotaOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (type.getRank() != 1)
    return emitOpError("expects a 1-D result, but got ") << type;
  return success();
}

#define GET_OP_CLASSES
#include "dl/IR/DLOps.cpp.inc"
