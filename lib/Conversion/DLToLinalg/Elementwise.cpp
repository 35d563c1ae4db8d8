//===- Elementwise.cpp - dl elementwise ops to linalg.generic -------------===//
//
// Constants, casts, and every elementwise op (unary, broadcasting binary,
// comparisons, where) become one linalg.generic each; numpy broadcasting is in
// the indexing maps. Scalar semantics follow numpy: NaN-propagating
// max/min, integer division rounding towards zero (with x / 0 = 0 and no trap
// for INT_MIN / -1), comparisons false on NaN except `!=`. Transcendental
// functions of f16/bf16 are evaluated in f32.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

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

/// Signed integer division that cannot trap: x / 0 = 0 and x / -1 = -x
/// (wrapping), where the hardware would raise SIGFPE.
Value safeDivSI(OpBuilder &b, Location loc, Value x, Value y) {
  Type type = x.getType();
  Value zero = constantScalar(b, loc, type, 0);
  Value one = constantScalar(b, loc, type, 1);
  Value minusOne = constantScalar(b, loc, type, -1);
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  Value isMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, minusOne);
  Value unsafe = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  Value divisor = arith::SelectOp::create(b, loc, unsafe, one, y);
  Value quotient = arith::DivSIOp::create(b, loc, x, divisor);
  Value negated = arith::SubIOp::create(b, loc, zero, x);
  quotient = arith::SelectOp::create(b, loc, isMinusOne, negated, quotient);
  return arith::SelectOp::create(b, loc, isZero, zero, quotient);
}

template <typename OpTy>
Value binaryBody(OpBuilder &b, Location loc, Value x, Value y);
template <>
Value binaryBody<AddOp>(OpBuilder &b, Location loc, Value x, Value y) {
  return addScalars(b, loc, x, y);
}
template <>
Value binaryBody<SubOp>(OpBuilder &b, Location loc, Value x, Value y) {
  return subScalars(b, loc, x, y);
}
template <>
Value binaryBody<MulOp>(OpBuilder &b, Location loc, Value x, Value y) {
  return mulScalars(b, loc, x, y);
}
template <>
Value binaryBody<DivOp>(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::DivFOp::create(b, loc, x, y);
  return safeDivSI(b, loc, x, y);
}
template <>
Value binaryBody<PowOp>(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType())) {
    Type wide = accumulatorType(x.getType());
    Value result = math::PowFOp::create(b, loc, convertFloat(b, loc, x, wide),
                                        convertFloat(b, loc, y, wide));
    return convertFloat(b, loc, result, x.getType());
  }
  return math::IPowIOp::create(b, loc, x, y);
}
template <>
Value binaryBody<MaximumOp>(OpBuilder &b, Location loc, Value x, Value y) {
  return maxScalars(b, loc, x, y);
}
template <>
Value binaryBody<MinimumOp>(OpBuilder &b, Location loc, Value x, Value y) {
  return minScalars(b, loc, x, y);
}

/// Comparisons: float predicates are ordered (false when a NaN is involved)
/// except `!=`, which is true on NaN, as in numpy. The i1 result is stored as
/// a byte.
#define DL_COMPARE_BODY(OpTy, FloatPredicate, IntPredicate)                    \
  template <>                                                                  \
  Value binaryBody<OpTy>(OpBuilder & b, Location loc, Value x, Value y) {      \
    Value bit = isFloat(x.getType())                                           \
                    ? arith::CmpFOp::create(                                   \
                          b, loc, arith::CmpFPredicate::FloatPredicate, x, y)  \
                          .getResult()                                         \
                    : arith::CmpIOp::create(                                   \
                          b, loc, arith::CmpIPredicate::IntPredicate, x, y)    \
                          .getResult();                                        \
    return boolToStorage(b, loc, bit);                                         \
  }
DL_COMPARE_BODY(EqualOp, OEQ, eq)
DL_COMPARE_BODY(NotEqualOp, UNE, ne)
DL_COMPARE_BODY(LessOp, OLT, slt)
DL_COMPARE_BODY(LessEqualOp, OLE, sle)
DL_COMPARE_BODY(GreaterOp, OGT, sgt)
DL_COMPARE_BODY(GreaterEqualOp, OGE, sge)
#undef DL_COMPARE_BODY

/// Every broadcasting binary op: one generic applying binaryBody<OpTy>.
template <typename OpTy>
struct BinaryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), storageType(*this->getTypeConverter(), op.getType()),
        {adaptor.getLhs(), adaptor.getRhs()},
        [](OpBuilder &b, Location loc, ValueRange args) {
          return binaryBody<OpTy>(b, loc, args[0], args[1]);
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

Value clampScalar(OpBuilder &b, Location loc, Value x, double lo, double hi) {
  Value low = constantScalar(b, loc, x.getType(), lo);
  Value high = constantScalar(b, loc, x.getType(), hi);
  return minScalars(b, loc, maxScalars(b, loc, x, low), high);
}

template <typename OpTy>
Value unaryBody(OpBuilder &b, Location loc, Value x, OpTy op);

#define DL_UNARY_BODY(OpTy)                                                    \
  template <>                                                                  \
  Value unaryBody<OpTy>(OpBuilder & b, Location loc, Value x,                  \
                        [[maybe_unused]] OpTy op)

DL_UNARY_BODY(ReluOp) {
  return maxScalars(b, loc, x, constantScalar(b, loc, x.getType(), 0));
}
DL_UNARY_BODY(Relu6Op) { return clampScalar(b, loc, x, 0, 6); }
DL_UNARY_BODY(AbsOp) {
  if (isFloat(x.getType()))
    return math::AbsFOp::create(b, loc, x);
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
      // i1 -> i8 storage: only dense values can be re-encoded here.
      auto dense = dyn_cast<DenseIntElementsAttr>(value);
      if (!dense)
        return rewriter.notifyMatchFailure(
            op, "only dense i1 constants can be stored as i8");
      value = dense.mapValues(type.getElementType(),
                              [](const APInt &bit) { return bit.zext(8); });
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

/// numpy's astype between storage element types; `fromBool`/`toBool` say
/// whether the source/target dl type is bool (stored as i8 0/1).
Value castScalar(OpBuilder &b, Location loc, Value x, Type target,
                 bool fromBool, bool toBool) {
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
  if (isFloat(source))
    return arith::FPToSIOp::create(b, loc, target, x);
  if (isFloat(target))
    return fromBool ? arith::UIToFPOp::create(b, loc, target, x).getResult()
                    : arith::SIToFPOp::create(b, loc, target, x).getResult();
  unsigned from = source.getIntOrFloatBitWidth(), to = target.getIntOrFloatBitWidth();
  if (from == to)
    return x;
  if (from > to)
    return arith::TruncIOp::create(b, loc, target, x);
  return fromBool ? arith::ExtUIOp::create(b, loc, target, x).getResult()
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
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, {adaptor.getInput()},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          return castScalar(b, loc, args[0], resultType.getElementType(),
                            fromBool, toBool);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void lowering::populateElementwisePatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns) {
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
}
