//===- Reductions.cpp - dl reductions, softmax and normalizations ---------===//
//
// Reductions become linalg.reduce (argmax/argmin: a two-output
// linalg.generic carrying value and index); keepdims is a
// tensor.expand_shape. Softmax, log-softmax and the normalizations are
// composed of reductions and elementwise generics in their numerically stable
// forms (subtract the maximum first; two-pass variance). f16/bf16 sums and
// statistics accumulate in f32.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

using namespace mlir;
using namespace mlir::dl;
using namespace mlir::dl::lowering;

namespace {

enum class ReduceKind { Sum, Max, Min, Mean };

template <typename OpTy>
constexpr ReduceKind reduceKind() {
  if constexpr (std::is_same_v<OpTy, ReduceSumOp>)
    return ReduceKind::Sum;
  else if constexpr (std::is_same_v<OpTy, ReduceMaxOp>)
    return ReduceKind::Max;
  else if constexpr (std::is_same_v<OpTy, ReduceMinOp>)
    return ReduceKind::Min;
  else
    return ReduceKind::Mean;
}

template <typename OpTy>
struct ReductionLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  static constexpr ReduceKind kind = reduceKind<OpTy>();

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value input = adaptor.getInput();
    ArrayRef<int64_t> axes = op.getAxes();
    // Reducing over no axis is the identity (numpy: sum(x, axis=())).
    if (axes.empty()) {
      rewriter.replaceOp(op, input);
      return success();
    }
    Location loc = op.getLoc();
    Type elementType =
        storageType(*this->getTypeConverter(), op.getType()).getElementType();
    bool isUnsigned = isUnsignedTensor(op.getType());
    Value reduced;
    switch (kind) {
    case ReduceKind::Max:
      reduced = buildReduce(
          rewriter, loc, input, axes,
          lowestValue(rewriter, loc, elementType, isUnsigned),
          [&](OpBuilder &b, Location l, Value x, Value y) {
            return maxScalars(b, l, x, y, isUnsigned);
          });
      break;
    case ReduceKind::Min:
      reduced = buildReduce(
          rewriter, loc, input, axes,
          highestValue(rewriter, loc, elementType, isUnsigned),
          [&](OpBuilder &b, Location l, Value x, Value y) {
            return minScalars(b, l, x, y, isUnsigned);
          });
      break;
    case ReduceKind::Sum:
    case ReduceKind::Mean: {
      Type accType = accumulatorType(elementType);
      reduced = buildReduce(rewriter, loc, input, axes,
                            constantScalar(rewriter, loc, accType, 0), addScalars);
      if (kind == ReduceKind::Mean) {
        Value count = reducedCount(rewriter, loc, input, axes, accType);
        reduced = buildElementwise(
            rewriter, loc, cast<RankedTensorType>(reduced.getType()), {reduced},
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              return arith::DivFOp::create(b, l, args[0], count);
            });
      }
      reduced = convertElements(rewriter, loc, reduced, elementType);
      break;
    }
    }
    if (op.getKeepdims())
      reduced = expandReducedDims(rewriter, loc, reduced, op.getType(), axes);
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

/// argmax/argmin: a reduction generic with two outputs, the running extreme
/// and its index. The first extreme wins; a NaN wins over numbers (numpy).
template <typename OpTy>
struct ArgReductionLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  static constexpr bool isMax = std::is_same_v<OpTy, ArgmaxOp>;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    Type elementType = inputType.getElementType();
    bool isUnsigned = isUnsignedTensor(op.getInput().getType());
    int64_t axis = op.getAxis(), rank = inputType.getRank();

    SmallVector<int64_t> shape;
    SmallVector<Value> dynamicSizes;
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (dim == axis)
        continue;
      shape.push_back(inputType.getDimSize(dim));
      if (inputType.isDynamicDim(dim))
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, dim));
    }
    Value valueInit = filledTensor(
        rewriter, loc, RankedTensorType::get(shape, elementType), dynamicSizes,
        isMax ? lowestValue(rewriter, loc, elementType, isUnsigned)
              : highestValue(rewriter, loc, elementType, isUnsigned));
    Value indexInit = filledTensor(
        rewriter, loc, RankedTensorType::get(shape, rewriter.getI64Type()),
        dynamicSizes, constantScalar(rewriter, loc, rewriter.getI64Type(), 0));

    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap reducedMap = identity.dropResult(axis);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators[axis] = utils::IteratorType::reduction;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{valueInit.getType(), indexInit.getType()},
        ValueRange{input}, ValueRange{valueInit, indexInit},
        ArrayRef<AffineMap>{identity, reducedMap, reducedMap}, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[1], bestIndex = args[2];
          Value better;
          if (isFloat(elementType)) {
            better = arith::CmpFOp::create(
                b, l, isMax ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
                x, best);
            Value xIsNaN = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
            Value bestIsNumber =
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::ORD, best, best);
            better = arith::OrIOp::create(
                b, l, better, arith::AndIOp::create(b, l, xIsNaN, bestIsNumber));
          } else {
            arith::CmpIPredicate predicate =
                isUnsigned ? (isMax ? arith::CmpIPredicate::ugt
                                    : arith::CmpIPredicate::ult)
                           : (isMax ? arith::CmpIPredicate::sgt
                                    : arith::CmpIPredicate::slt);
            better = arith::CmpIOp::create(b, l, predicate, x, best);
          }
          Value index = arith::IndexCastOp::create(
              b, l, b.getI64Type(), linalg::IndexOp::create(b, l, axis));
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::SelectOp::create(b, l, better, x, best),
                         arith::SelectOp::create(b, l, better, index, bestIndex)});
        });
    Value result = generic.getResult(1);
    if (op.getKeepdims())
      result = expandReducedDims(rewriter, loc, result, op.getType(), {axis});
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// A generic over the full shape of `full` reading `full` and tensors reduced
/// along `axis` (one value per row): `body(fullElement, reducedElements...)`.
Value mapWithReduced(OpBuilder &b, Location loc, Value full,
                     ValueRange reduced, int64_t axis,
                     function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(full.getType());
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineMap> maps = {identity};
  maps.append(reduced.size(), identity.dropResult(axis));
  maps.push_back(identity);
  SmallVector<Value> inputs = {full};
  llvm::append_range(inputs, reduced);
  Value init = emptyTensor(b, loc, type, dynamicSizesOf(b, loc, full));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, inputs, ValueRange{init}, maps, iterators,
             [&](OpBuilder &nested, Location l, ValueRange args) {
               linalg::YieldOp::create(nested, l,
                                       body(nested, l, args.drop_back()));
             })
      .getResult(0);
}

template <typename OpTy>
struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  static constexpr bool isLog = std::is_same_v<OpTy, LogSoftmaxOp>;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    int64_t axis = op.getAxis();
    Type elementType = op.getType().getElementType();
    Type accType = accumulatorType(elementType);

    Value max = buildReduce(rewriter, loc, input, {axis},
                            lowestValue(rewriter, loc, elementType),
                            [](OpBuilder &b, Location l, Value x, Value y) {
                              return maxScalars(b, l, x, y);
                            });
    // exp(x - max), kept in the accumulator type for the sum.
    Value shiftedExp = mapWithReduced(
        rewriter, loc, convertElements(rewriter, loc, input, accType), {max},
        axis, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value m = convertFloat(b, l, args[1], accType);
          return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, args[0], m));
        });
    Value sum = buildReduce(rewriter, loc, shiftedExp, {axis},
                            constantScalar(rewriter, loc, accType, 0), addScalars);
    Value result;
    if (isLog) {
      result = mapWithReduced(
          rewriter, loc, convertElements(rewriter, loc, input, accType),
          {max, sum}, axis, [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value m = convertFloat(b, l, args[1], accType);
            Value shifted = arith::SubFOp::create(b, l, args[0], m);
            return arith::SubFOp::create(b, l, shifted,
                                         math::LogOp::create(b, l, args[2]));
          });
    } else {
      // Times the reciprocal of the row's sum (as PyTorch's CPU softmax
      // does): one division per row, hoisted out of the loop over the row,
      // instead of one per element (vdivps is several times an FMA's cost;
      // Whisper's attention divides 1500 exponentials per query row).
      result = mapWithReduced(
          rewriter, loc, shiftedExp, {sum}, axis,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value one = constantScalar(b, l, accType, 1);
            return arith::MulFOp::create(
                b, l, args[0], arith::DivFOp::create(b, l, one, args[1]));
          });
    }
    rewriter.replaceOp(op, convertElements(rewriter, loc, result, elementType));
    return success();
  }
};

struct BatchNormLowering : OpConversionPattern<BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    double epsilon = op.getEpsilon().convertToDouble();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap channel = AffineMap::get(rank, 0, getAffineDimExpr(axis, ctx));
    Value init = emptyTensor(rewriter, loc, type, dynamicSizesOf(rewriter, loc, input));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type,
        ValueRange{input, adaptor.getMean(), adaptor.getVariance(),
                   adaptor.getGamma(), adaptor.getBeta()},
        ValueRange{init},
        ArrayRef<AffineMap>{identity, channel, channel, channel, channel, identity},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Type elementType = args[0].getType();
          Type wide = accumulatorType(elementType);
          auto widen = [&](Value v) { return convertFloat(b, l, v, wide); };
          // (x - mean) * (gamma / sqrt(var + eps)) + beta
          Value centered = arith::SubFOp::create(b, l, widen(args[0]), widen(args[1]));
          Value variance = arith::AddFOp::create(
              b, l, widen(args[2]), constantScalar(b, l, wide, epsilon));
          Value scale = arith::DivFOp::create(b, l, widen(args[3]),
                                              math::SqrtOp::create(b, l, variance));
          Value y = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, centered, scale), widen(args[4]));
          linalg::YieldOp::create(b, l, convertFloat(b, l, y, elementType));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct LayerNormLowering : OpConversionPattern<LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank(), axis = op.getAxis();
    Type elementType = type.getElementType();
    Type accType = accumulatorType(elementType);
    double epsilon = op.getEpsilon().convertToDouble();
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
    Value count = reducedCount(rewriter, loc, input, axes, accType);

    // Pass 1: mean. Pass 2: the deviations from it, summed and squared
    // (the corrected two-pass algorithm): the mean is corrected by their
    // average, and the variance is sum(d^2) - sum(d)^2 / n over n. A row
    // of equal values then normalizes to exactly 0, as PyTorch's Welford
    // mean gives, where sum / n alone is off by a rounding (x - mean ~ 1e-7
    // x, divided by sqrt(eps): 1e-4 relative; found by the importer fuzzer).
    Value sum = buildReduce(rewriter, loc, input, axes,
                            constantScalar(rewriter, loc, accType, 0), addScalars);
    auto statsType = cast<RankedTensorType>(sum.getType());
    Value mean = buildElementwise(
        rewriter, loc, statsType, {sum},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::DivFOp::create(b, l, args[0], count);
        });

    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<AffineExpr> leading, trailing;
    for (int64_t dim = 0; dim < rank; ++dim)
      (dim < axis ? leading : trailing).push_back(getAffineDimExpr(dim, ctx));
    AffineMap statsMap = AffineMap::get(rank, 0, leading, ctx);
    AffineMap paramMap = AffineMap::get(rank, 0, trailing, ctx);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    SmallVector<utils::IteratorType> reduction(iterators);
    for (int64_t dim = axis; dim < rank; ++dim)
      reduction[dim] = utils::IteratorType::reduction;

    auto zeros = [&]() {
      return filledTensor(rewriter, loc, statsType,
                          dynamicSizesOf(rewriter, loc, sum),
                          constantScalar(rewriter, loc, accType, 0));
    };
    auto deviations = linalg::GenericOp::create(
        rewriter, loc, TypeRange{statsType, statsType}, ValueRange{input, mean},
        ValueRange{zeros(), zeros()},
        ArrayRef<AffineMap>{identity, statsMap, statsMap, statsMap}, reduction,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value d = arith::SubFOp::create(
              b, l, convertFloat(b, l, args[0], accType), args[1]);
          linalg::YieldOp::create(
              b, l,
              ValueRange{arith::AddFOp::create(b, l, args[2], d),
                         arith::AddFOp::create(b, l, args[3],
                                               arith::MulFOp::create(b, l, d, d))});
        });
    Value deviationSum = deviations.getResult(0);
    Value squares = deviations.getResult(1);

    Value init = emptyTensor(rewriter, loc, type, dynamicSizesOf(rewriter, loc, input));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type,
        ValueRange{input, mean, deviationSum, squares, adaptor.getGamma(),
                   adaptor.getBeta()},
        ValueRange{init},
        ArrayRef<AffineMap>{identity, statsMap, statsMap, statsMap, paramMap,
                            paramMap, identity},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          auto widen = [&](Value v) { return convertFloat(b, l, v, accType); };
          Value correction = arith::DivFOp::create(b, l, args[2], count);
          Value corrected = arith::AddFOp::create(b, l, args[1], correction);
          Value spread = arith::SubFOp::create(
              b, l, args[3], arith::MulFOp::create(b, l, args[2], correction));
          Value variance = arith::AddFOp::create(
              b, l, arith::DivFOp::create(b, l, spread, count),
              constantScalar(b, l, accType, epsilon));
          Value normalized = arith::MulFOp::create(
              b, l, arith::SubFOp::create(b, l, widen(args[0]), corrected),
              math::RsqrtOp::create(b, l, variance));
          Value y = arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, normalized, widen(args[4])),
              widen(args[5]));
          linalg::YieldOp::create(b, l, convertFloat(b, l, y, elementType));
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void lowering::populateReductionPatterns(const TypeConverter &converter,
                                         RewritePatternSet &patterns) {
  patterns.add<ReductionLowering<ReduceSumOp>, ReductionLowering<ReduceMaxOp>,
               ReductionLowering<ReduceMinOp>, ReductionLowering<ReduceMeanOp>,
               ArgReductionLowering<ArgmaxOp>, ArgReductionLowering<ArgminOp>,
               SoftmaxLowering<SoftmaxOp>, SoftmaxLowering<LogSoftmaxOp>,
               BatchNormLowering, LayerNormLowering>(converter,
                                                     patterns.getContext());
}
