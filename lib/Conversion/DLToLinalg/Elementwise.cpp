//===- Elementwise.cpp - dl elementwise ops to linalg.generic -------------===//
//
// Constants, casts, and every elementwise op (unary, broadcasting binary,
// comparisons, where, logical and bitwise ops) become one linalg.generic
// each; numpy broadcasting is in the indexing maps. Scalar semantics follow
// numpy: NaN-propagating max/min, integer division rounding towards zero
// (with x / 0 = 0 and no trap for INT_MIN / -1), integer remainders with
// x % 0 = 0, comparisons false on NaN except `!=`. Transcendental and
// rounding functions of f16/bf16 are evaluated in f32.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::dl;
using namespace mlir::dl::lowering;

namespace {

/// Evaluates `fn` on `x` in f32 when x is f16/bf16, rounding the result back.
Value inWideFloat(OpBuilder &b, Location loc, Value x,
                  function_ref<Value(Value)> fn) {
  Type type = x.getType();
  Type wide = accumulatorType(type);
  return convertFloat(b, loc, fn(convertFloat(b, loc, x, wide)), type);
}

Value floatConstant(OpBuilder &b, Location loc, Value like, double value) {
  return constantScalar(b, loc, like.getType(), value);
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

template <typename OpTy>
Value binaryBody(OpBuilder &b, Location loc, Value x, Value y, bool isUnsigned);
template <>
Value binaryBody<AddOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return addScalars(b, loc, x, y);
}
template <>
Value binaryBody<SubOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return subScalars(b, loc, x, y);
}
template <>
Value binaryBody<MulOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return mulScalars(b, loc, x, y);
}
template <>
Value binaryBody<DivOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  if (isFloat(x.getType()))
    return arith::DivFOp::create(b, loc, x, y);
  return safeDivI(b, loc, x, y, isUnsigned);
}
template <>
Value binaryBody<PowOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  if (isFloat(x.getType())) {
    Type wide = accumulatorType(x.getType());
    Value result = math::PowFOp::create(b, loc, convertFloat(b, loc, x, wide),
                                        convertFloat(b, loc, y, wide));
    return convertFloat(b, loc, result, x.getType());
  }
  if (!isUnsigned)
    return math::IPowIOp::create(b, loc, x, y);
  // ipowi is signed: an unsigned exponent of the top half would read as
  // negative. Wrapping products are the same bits in any wider type.
  Type wide = b.getI64Type();
  if (x.getType() == wide)
    return math::IPowIOp::create(b, loc, x, y); // ui64: exponents < 2^63.
  Value result = math::IPowIOp::create(b, loc,
                                       arith::ExtUIOp::create(b, loc, wide, x),
                                       arith::ExtUIOp::create(b, loc, wide, y));
  return arith::TruncIOp::create(b, loc, x.getType(), result);
}
template <>
Value binaryBody<MaximumOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return maxScalars(b, loc, x, y, isUnsigned);
}
template <>
Value binaryBody<MinimumOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return minScalars(b, loc, x, y, isUnsigned);
}

/// Logical and bitwise ops work on the storage bytes: bools are 0 or 1, so
/// and/or/xor of bools are bools.
template <>
Value binaryBody<LogicalAndOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return arith::AndIOp::create(b, loc, x, y);
}
template <>
Value binaryBody<LogicalOrOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return arith::OrIOp::create(b, loc, x, y);
}
template <>
Value binaryBody<LogicalXorOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return arith::XOrIOp::create(b, loc, x, y);
}
template <>
Value binaryBody<BitwiseAndOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return arith::AndIOp::create(b, loc, x, y);
}
template <>
Value binaryBody<BitwiseOrOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return arith::OrIOp::create(b, loc, x, y);
}
template <>
Value binaryBody<BitwiseXorOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  return arith::XOrIOp::create(b, loc, x, y);
}

/// `fn(x, y)` in f32 when x and y are f16/bf16, rounding the result back.
Value inWideFloat2(OpBuilder &b, Location loc, Value x, Value y,
                   function_ref<Value(Value, Value)> fn) {
  Type type = x.getType();
  Type wide = accumulatorType(type);
  return convertFloat(
      b, loc, fn(convertFloat(b, loc, x, wide), convertFloat(b, loc, y, wide)),
      type);
}

template <>
Value binaryBody<FmodOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  if (!isFloat(x.getType()))
    return safeRemI(b, loc, x, y, isUnsigned);
  return inWideFloat2(b, loc, x, y, [&](Value v, Value w) -> Value {
    return arith::RemFOp::create(b, loc, v, w);
  });
}

/// numpy's remainder: the C remainder, plus the divisor when the two have
/// different signs (so that the result has the divisor's sign); a float zero
/// takes the divisor's sign, and NaN stays NaN.
template <>
Value binaryBody<RemainderOp>(OpBuilder &b, Location loc, Value x, Value y,
                 [[maybe_unused]] bool isUnsigned) {
  if (!isFloat(x.getType()) && isUnsigned)
    return safeRemI(b, loc, x, y, isUnsigned); // No signs to differ.
  if (!isFloat(x.getType())) {
    Value r = safeRemI(b, loc, x, y, isUnsigned);
    Value zero = constantScalar(b, loc, x.getType(), 0);
    Value nonZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
    // (r ^ y) < 0: the signs differ.
    Value signsDiffer = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt, arith::XOrIOp::create(b, loc, r, y),
        zero);
    Value adjust = arith::AndIOp::create(b, loc, nonZero, signsDiffer);
    return arith::SelectOp::create(b, loc, adjust,
                                   arith::AddIOp::create(b, loc, r, y), r);
  }
  return inWideFloat2(b, loc, x, y, [&](Value v, Value w) -> Value {
    Value r = arith::RemFOp::create(b, loc, v, w);
    Value zero = floatConstant(b, loc, v, 0.0);
    auto compare = [&](arith::CmpFPredicate predicate, Value p, Value q) {
      return arith::CmpFOp::create(b, loc, predicate, p, q).getResult();
    };
    Value signsDiffer =
        arith::XOrIOp::create(b, loc, compare(arith::CmpFPredicate::OLT, r, zero),
                              compare(arith::CmpFPredicate::OLT, w, zero));
    Value adjust = arith::AndIOp::create(
        b, loc, compare(arith::CmpFPredicate::ONE, r, zero), signsDiffer);
    Value adjusted = arith::SelectOp::create(
        b, loc, adjust, arith::AddFOp::create(b, loc, r, w), r);
    Value signedZero = math::CopySignOp::create(b, loc, zero, w);
    return arith::SelectOp::create(
        b, loc, compare(arith::CmpFPredicate::OEQ, r, zero), signedZero,
        adjusted);
  });
}

/// Comparisons: float predicates are ordered (false when a NaN is involved)
/// except `!=`, which is true on NaN, as in numpy. The i1 result is stored as
/// a byte.
#define DL_COMPARE_BODY(OpTy, FloatPredicate, IntPredicate, UnsignedPredicate) \
  template <>                                                                  \
  Value binaryBody<OpTy>(OpBuilder & b, Location loc, Value x, Value y,        \
                         bool isUnsigned) {                                    \
    Value bit =                                                                \
        isFloat(x.getType())                                                   \
            ? arith::CmpFOp::create(                                           \
                  b, loc, arith::CmpFPredicate::FloatPredicate, x, y)          \
                  .getResult()                                                 \
            : arith::CmpIOp::create(                                           \
                  b, loc,                                                      \
                  isUnsigned ? arith::CmpIPredicate::UnsignedPredicate         \
                             : arith::CmpIPredicate::IntPredicate,             \
                  x, y)                                                        \
                  .getResult();                                                \
    return boolToStorage(b, loc, bit);                                         \
  }
DL_COMPARE_BODY(EqualOp, OEQ, eq, eq)
DL_COMPARE_BODY(NotEqualOp, UNE, ne, ne)
DL_COMPARE_BODY(LessOp, OLT, slt, ult)
DL_COMPARE_BODY(LessEqualOp, OLE, sle, ule)
DL_COMPARE_BODY(GreaterOp, OGT, sgt, ugt)
DL_COMPARE_BODY(GreaterEqualOp, OGE, sge, uge)
#undef DL_COMPARE_BODY

/// Every broadcasting binary op: one generic applying binaryBody<OpTy>.
template <typename OpTy>
struct BinaryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    bool isUnsigned = isUnsignedTensor(op.getLhs().getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), storageType(*this->getTypeConverter(), op.getType()),
        {adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return binaryBody<OpTy>(b, loc, args[0], args[1], isUnsigned);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

struct WhereLowering : OpConversionPattern<WhereOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WhereOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), storageType(*getTypeConverter(), op.getType()),
        {adaptor.getCondition(), adaptor.getLhs(), adaptor.getRhs()},
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return arith::SelectOp::create(b, loc, storageToBool(b, loc, args[0]),
                                         args[1], args[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

Value sigmoidOf(OpBuilder &b, Location loc, Value x) {
  Value one = floatConstant(b, loc, x, 1.0);
  Value expNeg = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, expNeg));
}

Value clampScalar(OpBuilder &b, Location loc, Value x, double lo, double hi,
                  bool isUnsigned = false) {
  Value low = constantScalar(b, loc, x.getType(), lo);
  Value high = constantScalar(b, loc, x.getType(), hi);
  return minScalars(b, loc, maxScalars(b, loc, x, low, isUnsigned), high,
                    isUnsigned);
}

template <typename OpTy>
Value unaryBody(OpBuilder &b, Location loc, Value x, OpTy op);

#define DL_UNARY_BODY(OpTy)                                                    \
  template <>                                                                  \
  Value unaryBody<OpTy>(OpBuilder & b, Location loc, Value x,                  \
                        [[maybe_unused]] OpTy op)

DL_UNARY_BODY(ReluOp) {
  return maxScalars(b, loc, x, constantScalar(b, loc, x.getType(), 0),
                    isUnsignedTensor(op.getInput().getType()));
}
DL_UNARY_BODY(Relu6Op) {
  return clampScalar(b, loc, x, 0, 6, isUnsignedTensor(op.getInput().getType()));
}
DL_UNARY_BODY(AbsOp) {
  if (isFloat(x.getType()))
    return math::AbsFOp::create(b, loc, x);
  if (isUnsignedTensor(op.getInput().getType()))
    return x;
  return math::AbsIOp::create(b, loc, x);
}
DL_UNARY_BODY(NegOp) {
  if (isFloat(x.getType()))
    return arith::NegFOp::create(b, loc, x);
  return arith::SubIOp::create(b, loc, constantScalar(b, loc, x.getType(), 0), x);
}
DL_UNARY_BODY(ExpOp) {
  return inWideFloat(b, loc, x, [&](Value v) { return math::ExpOp::create(b, loc, v); });
}
DL_UNARY_BODY(LogOp) {
  return inWideFloat(b, loc, x, [&](Value v) { return math::LogOp::create(b, loc, v); });
}
DL_UNARY_BODY(SqrtOp) {
  return inWideFloat(b, loc, x, [&](Value v) { return math::SqrtOp::create(b, loc, v); });
}
DL_UNARY_BODY(RsqrtOp) {
  return inWideFloat(b, loc, x, [&](Value v) { return math::RsqrtOp::create(b, loc, v); });
}
DL_UNARY_BODY(ErfOp) {
  return inWideFloat(b, loc, x, [&](Value v) { return math::ErfOp::create(b, loc, v); });
}
DL_UNARY_BODY(TanhOp) {
  return inWideFloat(b, loc, x, [&](Value v) { return math::TanhOp::create(b, loc, v); });
}
DL_UNARY_BODY(SigmoidOp) {
  return inWideFloat(b, loc, x, [&](Value v) { return sigmoidOf(b, loc, v); });
}
DL_UNARY_BODY(SiluOp) {
  return inWideFloat(b, loc, x, [&](Value v) -> Value {
    return arith::MulFOp::create(b, loc, v, sigmoidOf(b, loc, v));
  });
}
DL_UNARY_BODY(HardswishOp) {
  return inWideFloat(b, loc, x, [&](Value v) -> Value {
    Value shifted = arith::AddFOp::create(b, loc, v, floatConstant(b, loc, v, 3.0));
    Value gate = arith::DivFOp::create(b, loc, clampScalar(b, loc, shifted, 0, 6),
                                       floatConstant(b, loc, v, 6.0));
    return arith::MulFOp::create(b, loc, v, gate);
  });
}
DL_UNARY_BODY(LeakyReluOp) {
  Value alpha = floatConstant(b, loc, x, op.getAlpha().convertToDouble());
  Value zero = floatConstant(b, loc, x, 0.0);
  Value positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, zero);
  return arith::SelectOp::create(b, loc, positive, x,
                                 arith::MulFOp::create(b, loc, alpha, x));
}
DL_UNARY_BODY(GeluOp) {
  bool useTanh = op.getApproximateTanh();
  return inWideFloat(b, loc, x, [&](Value v) -> Value {
    Value half = floatConstant(b, loc, v, 0.5);
    Value one = floatConstant(b, loc, v, 1.0);
    Value inner;
    if (useTanh) {
      // sqrt(2 / pi) * (x + 0.044715 x^3)
      Value cube = arith::MulFOp::create(b, loc, v, arith::MulFOp::create(b, loc, v, v));
      Value poly = arith::AddFOp::create(
          b, loc, v,
          arith::MulFOp::create(b, loc, floatConstant(b, loc, v, 0.044715), cube));
      inner = math::TanhOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, floatConstant(b, loc, v, 0.7978845608028654),
                                poly));
    } else {
      inner = math::ErfOp::create(
          b, loc,
          arith::MulFOp::create(b, loc, v, floatConstant(b, loc, v, 0.7071067811865476)));
    }
    Value gate = arith::AddFOp::create(b, loc, one, inner);
    return arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, half, v),
                                 gate);
  });
}

#define DL_WIDE_MATH_BODY(OpTy, MathOpTy)                                      \
  DL_UNARY_BODY(OpTy) {                                                        \
    return inWideFloat(b, loc, x,                                              \
                       [&](Value v) { return MathOpTy::create(b, loc, v); });  \
  }
DL_WIDE_MATH_BODY(SinOp, math::SinOp)
DL_WIDE_MATH_BODY(CosOp, math::CosOp)
DL_WIDE_MATH_BODY(TanOp, math::TanOp)
DL_WIDE_MATH_BODY(AsinOp, math::AsinOp)
DL_WIDE_MATH_BODY(AcosOp, math::AcosOp)
DL_WIDE_MATH_BODY(AtanOp, math::AtanOp)
DL_WIDE_MATH_BODY(SinhOp, math::SinhOp)
DL_WIDE_MATH_BODY(CoshOp, math::CoshOp)
DL_WIDE_MATH_BODY(AsinhOp, math::AsinhOp)
DL_WIDE_MATH_BODY(AcoshOp, math::AcoshOp)
DL_WIDE_MATH_BODY(AtanhOp, math::AtanhOp)
DL_WIDE_MATH_BODY(FloorOp, math::FloorOp)
DL_WIDE_MATH_BODY(CeilOp, math::CeilOp)
DL_WIDE_MATH_BODY(RoundOp, math::RoundEvenOp)
#undef DL_WIDE_MATH_BODY

/// numpy.sign: (x > 0) - (x < 0), and NaN for NaN.
DL_UNARY_BODY(SignOp) {
  Type type = x.getType();
  Value zero = constantScalar(b, loc, type, 0);
  Value one = constantScalar(b, loc, type, 1);
  Value minusOne = constantScalar(b, loc, type, -1);
  Value positive, negative;
  if (isFloat(type)) {
    positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  } else if (isUnsignedTensor(op.getInput().getType())) {
    return arith::SelectOp::create(
        b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero),
        one, zero);
  } else {
    positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
    negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  }
  Value sign = arith::SelectOp::create(
      b, loc, positive, one,
      arith::SelectOp::create(b, loc, negative, minusOne, zero));
  if (!isFloat(type))
    return sign;
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  return arith::SelectOp::create(b, loc, isNan, x, sign);
}
DL_UNARY_BODY(IsNanOp) {
  return boolToStorage(
      b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x));
}
DL_UNARY_BODY(IsInfOp) {
  Value magnitude = math::AbsFOp::create(b, loc, x);
  return boolToStorage(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, magnitude,
                            highestValue(b, loc, x.getType())));
}
/// Bools are stored as 0 or 1: flipping the low bit negates them.
DL_UNARY_BODY(LogicalNotOp) {
  return arith::XOrIOp::create(b, loc, x, constantScalar(b, loc, x.getType(), 1));
}
DL_UNARY_BODY(BitwiseNotOp) {
  bool isBool =
      cast<RankedTensorType>(op.getType()).getElementType().isInteger(1);
  return arith::XOrIOp::create(
      b, loc, x, constantScalar(b, loc, x.getType(), isBool ? 1 : -1));
}
#undef DL_UNARY_BODY

template <typename OpTy>
struct UnaryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), storageType(*this->getTypeConverter(), op.getType()),
        {adaptor.getInput()}, [&](OpBuilder &b, Location loc, ValueRange args) {
          return unaryBody<OpTy>(b, loc, args[0], op);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Constants and casts
//===----------------------------------------------------------------------===//

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = cast<TypedAttr>(op.getValueAttr());
    RankedTensorType type = storageType(*getTypeConverter(), op.getType());
    if (type != op.getType()) {
      // i1 -> i8 storage, or uiN -> iN (the same bits).
      unsigned width = type.getElementType().getIntOrFloatBitWidth();
      if (auto resource = dyn_cast<DenseResourceElementsAttr>(value);
          resource && isUnsignedTensor(op.getType()))
        value = DenseResourceElementsAttr::get(type, resource.getRawHandle());
      else if (auto dense = dyn_cast<DenseIntElementsAttr>(value))
        value = dense.mapValues(type.getElementType(), [&](const APInt &bits) {
          return bits.zextOrTrunc(width);
        });
      else
        return rewriter.notifyMatchFailure(
            op, "only dense i1 constants can be stored as i8");
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

/// An integer (storage) scalar as a float of `type`.
Value integerToFloat(OpBuilder &b, Location loc, Value x, Type type,
                     bool isUnsigned) {
  return isUnsigned ? arith::UIToFPOp::create(b, loc, type, x).getResult()
                    : arith::SIToFPOp::create(b, loc, type, x).getResult();
}

/// numpy's astype between storage element types; `fromBool`/`toBool` say
/// whether the source/target dl type is bool (stored as i8 0/1),
/// `fromUnsigned`/`toUnsigned` whether it is an unsigned integer.
Value castScalar(OpBuilder &b, Location loc, Value x, Type target,
                 bool fromBool, bool toBool, bool fromUnsigned,
                 bool toUnsigned) {
  Type source = x.getType();
  if (toBool) {
    Value bit;
    if (isFloat(source))
      bit = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                  constantScalar(b, loc, source, 0.0));
    else
      bit = storageToBool(b, loc, x);
    return boolToStorage(b, loc, bit);
  }
  if (isFloat(source) && isFloat(target))
    return convertFloat(b, loc, x, target);
  if (isFloat(source)) {
    if (!toUnsigned)
      return arith::FPToSIOp::create(b, loc, target, x);
    if (target.getIntOrFloatBitWidth() == 64)
      return arith::FPToUIOp::create(b, loc, target, x);
    // Narrow unsigned targets go through i64 and wrap, as numpy's astype does
    // on x86 (-1.0 -> 255), where fptoui of a negative value is poison.
    Value wide = arith::FPToSIOp::create(b, loc, b.getI64Type(), x);
    return arith::TruncIOp::create(b, loc, target, wide);
  }
  bool zeroExtend = fromBool || fromUnsigned;
  if (isFloat(target))
    return integerToFloat(b, loc, x, target, zeroExtend);
  unsigned from = source.getIntOrFloatBitWidth(), to = target.getIntOrFloatBitWidth();
  if (from == to)
    return x;
  if (from > to)
    return arith::TruncIOp::create(b, loc, target, x);
  return zeroExtend ? arith::ExtUIOp::create(b, loc, target, x).getResult()
                    : arith::ExtSIOp::create(b, loc, target, x).getResult();
}

struct CastLowering : OpConversionPattern<CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto isBool = [](Type type) {
      return cast<RankedTensorType>(type).getElementType().isInteger(1);
    };
    bool fromBool = isBool(op.getInput().getType());
    bool toBool = isBool(op.getType());
    bool fromUnsigned = isUnsignedTensor(op.getInput().getType());
    bool toUnsigned = isUnsignedTensor(op.getType());
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, {adaptor.getInput()},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return castScalar(b, loc, args[0], resultType.getElementType(),
                            fromBool, toBool, fromUnsigned, toUnsigned);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// One generic over `input`'s shape reading the scale and zero point per
/// tensor (rank 0) or per index of `axis` (rank 1).
Value buildPerAxis(OpBuilder &b, Location loc, RankedTensorType resultType,
                   Value input, Value scale, Value zero, int64_t axis,
                   BodyBuilder body) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  AffineMap param =
      cast<RankedTensorType>(scale.getType()).getRank() == 0
          ? AffineMap::get(rank, 0, {}, ctx)
          : AffineMap::get(rank, 0, {getAffineDimExpr(axis, ctx)}, ctx);
  Value init = emptyTensor(b, loc, resultType, dynamicSizesOf(b, loc, input));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{input, scale, zero},
             ValueRange{init},
             ArrayRef<AffineMap>{identity, param, param, identity}, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, body(nb, l, args.take_front(3)));
             })
      .getResult(0);
}

struct QuantizeLowering : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    Type element = getElementTypeOrSelf(op.getType());
    bool isUnsigned = element.isUnsignedInteger();
    unsigned width = element.getIntOrFloatBitWidth();
    Type inputType = getElementTypeOrSelf(op.getInput().getType());
    // The rounding, the zero point and the clamp in a float that holds the
    // integer range exactly: f32 for 8/16-bit results, f64 for i32.
    Type wide = width >= 32 || inputType.isF64()
                    ? Type(rewriter.getF64Type())
                    : Type(rewriter.getF32Type());
    double low = isUnsigned ? 0.0 : -std::ldexp(1.0, width - 1);
    double high = std::ldexp(1.0, isUnsigned ? width : width - 1) - 1.0;
    bool zeroUnsigned = isUnsignedTensor(op.getZeroPoint().getType());
    Value result = buildPerAxis(
        rewriter, op.getLoc(), resultType, adaptor.getInput(),
        adaptor.getScale(), adaptor.getZeroPoint(), op.getAxis(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          // The quotient in the input's type (ONNX's reference: x / scale).
          // (One op per statement: the order of nested calls' evaluation
          // is the C++ compiler's.)
          Value quotient = arith::DivFOp::create(b, loc, args[0], args[1]);
          Value widened = convertFloat(b, loc, quotient, wide);
          Value rounded = math::RoundEvenOp::create(b, loc, widened);
          Value zero = integerToFloat(b, loc, args[2], wide, zeroUnsigned);
          Value shifted = arith::AddFOp::create(b, loc, rounded, zero);
          // maxnumf/minnumf: NaN becomes the low end, as the reference's
          // int32 conversion of NaN clipped gives.
          Value lowest = constantScalar(b, loc, wide, low);
          Value highest = constantScalar(b, loc, wide, high);
          Value above = arith::MaxNumFOp::create(b, loc, shifted, lowest);
          Value clamped = arith::MinNumFOp::create(b, loc, above, highest);
          Type target = resultType.getElementType();
          return isUnsigned
                     ? arith::FPToUIOp::create(b, loc, target, clamped).getResult()
                     : arith::FPToSIOp::create(b, loc, target, clamped).getResult();
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct DequantizeLowering : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DequantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    Type scaleType = resultType.getElementType();
    Type wide = scaleType.isF64() ? Type(rewriter.getF64Type())
                                  : Type(rewriter.getF32Type());
    bool isUnsigned = isUnsignedTensor(op.getInput().getType());
    Value result = buildPerAxis(
        rewriter, op.getLoc(), resultType, adaptor.getInput(),
        adaptor.getScale(), adaptor.getZeroPoint(), op.getAxis(),
        [&](OpBuilder &b, Location loc, ValueRange args) -> Value {
          Value value = integerToFloat(b, loc, args[0], wide, isUnsigned);
          Value zero = integerToFloat(b, loc, args[2], wide, isUnsigned);
          Value shifted = arith::SubFOp::create(b, loc, value, zero);
          Value scale = convertFloat(b, loc, args[1], wide);
          Value scaled = arith::MulFOp::create(b, loc, shifted, scale);
          return convertFloat(b, loc, scaled, scaleType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void lowering::populateElementwisePatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  patterns.add<QuantizeLowering, DequantizeLowering>(converter,
                                                    patterns.getContext());
  patterns.add<ConstantLowering, CastLowering, WhereLowering,
               BinaryLowering<AddOp>, BinaryLowering<SubOp>,
               BinaryLowering<MulOp>, BinaryLowering<DivOp>,
               BinaryLowering<PowOp>, BinaryLowering<MaximumOp>,
               BinaryLowering<MinimumOp>, BinaryLowering<EqualOp>,
               BinaryLowering<NotEqualOp>, BinaryLowering<LessOp>,
               BinaryLowering<LessEqualOp>, BinaryLowering<GreaterOp>,
               BinaryLowering<GreaterEqualOp>, UnaryLowering<ReluOp>,
               UnaryLowering<Relu6Op>, UnaryLowering<AbsOp>,
               UnaryLowering<NegOp>, UnaryLowering<ExpOp>,
               UnaryLowering<LogOp>, UnaryLowering<SqrtOp>,
               UnaryLowering<RsqrtOp>, UnaryLowering<ErfOp>,
               UnaryLowering<TanhOp>, UnaryLowering<SigmoidOp>,
               UnaryLowering<SiluOp>, UnaryLowering<HardswishOp>,
               UnaryLowering<LeakyReluOp>, UnaryLowering<GeluOp>>(
      converter, patterns.getContext());
  patterns.add<UnaryLowering<SinOp>, UnaryLowering<CosOp>,
               UnaryLowering<TanOp>, UnaryLowering<AsinOp>,
               UnaryLowering<AcosOp>, UnaryLowering<AtanOp>,
               UnaryLowering<SinhOp>, UnaryLowering<CoshOp>,
               UnaryLowering<AsinhOp>, UnaryLowering<AcoshOp>,
               UnaryLowering<AtanhOp>, UnaryLowering<FloorOp>,
               UnaryLowering<CeilOp>, UnaryLowering<RoundOp>,
               UnaryLowering<SignOp>, UnaryLowering<IsNanOp>,
               UnaryLowering<IsInfOp>, UnaryLowering<LogicalNotOp>,
               UnaryLowering<BitwiseNotOp>, BinaryLowering<LogicalAndOp>,
               BinaryLowering<LogicalOrOp>, BinaryLowering<LogicalXorOp>,
               BinaryLowering<BitwiseAndOp>, BinaryLowering<BitwiseOrOp>,
               BinaryLowering<BitwiseXorOp>, BinaryLowering<RemainderOp>,
               BinaryLowering<FmodOp>>(converter, patterns.getContext());
}
