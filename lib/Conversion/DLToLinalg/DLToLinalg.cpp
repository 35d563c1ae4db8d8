//===- DLToLinalg.cpp - convert-dl-to-linalg ------------------------------===//
//
// Lowers every dl op to upstream ops on tensors. Ours, because upstream has no
// dl; the output uses only upstream named ops and linalg.generic so that every
// upstream linalg transformation (fusion, tiling, vectorization, bufferization)
// applies afterwards.
//
// - numpy broadcasting becomes indexing maps (a size-1 operand dimension reads
//   index 0), never a materialized broadcast copy;
// - matmul: linalg.matmul (2-D), linalg.batch_matmul (3-D, equal batch) or a
//   linalg.generic contraction (broadcast batch dimensions); f16/bf16 products
//   and sums accumulate in f32 and are rounded once at the end;
// - reductions: linalg.reduce, then tensor.expand_shape for keepdims;
// - softmax: max-reduce, exp(x - max), sum-reduce, divide (numerically stable);
// - reshape: tensor.collapse_shape to 1-D and tensor.expand_shape to the new
//   shape (both bufferize to views, no copy);
// - bool (i1) tensors become i8 tensors holding 0/1, function signatures
//   included: numpy stores a bool in a byte, and MLIR's memref lowering
//   cannot address i1 elements.
//
//===----------------------------------------------------------------------===//

#include "dl/DLOps.h"
#include "dl/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::dl {
#define GEN_PASS_DEF_CONVERTDLTOLINALG
#include "dl/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

using BodyBuilder = function_ref<Value(OpBuilder &, Location, ValueRange)>;

bool isFloat(Type type) { return isa<FloatType>(type); }

/// `tensor.empty` of `type`, taking dynamic sizes from `dynamicSizes` in order.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 dynamicSizes);
}

/// The dynamic sizes of `resultType`, each read from the first of `operands`
/// whose dimension aligned from the right (numpy style) is dynamic too.
SmallVector<Value> alignedDynamicSizes(OpBuilder &b, Location loc,
                                       RankedTensorType resultType,
                                       ValueRange operands,
                                       ArrayRef<int64_t> operandRanks) {
  SmallVector<Value> sizes;
  int64_t rank = resultType.getRank();
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!resultType.isDynamicDim(dim))
      continue;
    for (auto [operand, operandRank] : llvm::zip(operands, operandRanks)) {
      int64_t operandDim = dim - (rank - operandRank);
      auto type = cast<RankedTensorType>(operand.getType());
      if (operandDim >= 0 && type.isDynamicDim(operandDim)) {
        sizes.push_back(tensor::DimOp::create(b, loc, operand, operandDim));
        break;
      }
    }
  }
  return sizes;
}

/// Indexing map reading an operand of shape `operandShape` (the last
/// `operandShape.size()` of `numLoops` loops, offset by `firstDim`) while
/// iterating over `resultShape`: broadcast dimensions read index 0.
AffineMap broadcastReadMap(MLIRContext *ctx, int64_t numLoops,
                           ArrayRef<int64_t> operandShape,
                           ArrayRef<int64_t> resultShape,
                           int64_t firstResultDim) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = resultShape.size() - operandShape.size();
  for (auto [dim, size] : llvm::enumerate(operandShape)) {
    int64_t resultDim = dim + offset;
    if (size == 1 && resultShape[resultDim] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(firstResultDim + resultDim, ctx));
  }
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

/// An all-parallel linalg.generic producing `resultType` from `inputs`, which
/// broadcast against the result numpy-style.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, BodyBuilder body) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> ranks;
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    maps.push_back(broadcastReadMap(ctx, rank, type.getShape(),
                                    resultType.getShape(), 0));
    ranks.push_back(type.getRank());
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = emptyTensor(
      b, loc, resultType, alignedDynamicSizes(b, loc, resultType, inputs, ranks));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

Value constantScalar(OpBuilder &b, Location loc, Type type, double floatValue,
                     int64_t intValue) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, floatValue));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, intValue));
}

Value addScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value mulScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

/// numpy's max: NaN-propagating on floats.
Value maxScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::MaximumFOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

/// The identity of max: -inf, or the smallest signed integer.
Value lowestValue(OpBuilder &b, Location loc, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(floatType, APFloat::getInf(floatType.getFloatSemantics(),
                                                  /*Negative=*/true)));
  return arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(type, APInt::getSignedMinValue(type.getIntOrFloatBitWidth())));
}

/// The type sums of `type` accumulate in: f32 for the half-precision floats
/// (as numpy's and PyTorch's CPU kernels do), `type` otherwise.
Type accumulatorType(Type type) {
  if (isa<Float16Type, BFloat16Type>(type))
    return Float32Type::get(type.getContext());
  return type;
}

/// `value` converted between float widths (no-op when already `type`).
Value convertFloat(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  if (type.getIntOrFloatBitWidth() > value.getType().getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   ValueRange dynamicSizes, Value fillValue) {
  Value empty = emptyTensor(b, loc, type, dynamicSizes);
  return linalg::FillOp::create(b, loc, ValueRange{fillValue}, ValueRange{empty})
      .getResult(0);
}

/// linalg.reduce of `input` over sorted `axes`, starting from `initValue`,
/// combining with `combine`. The result drops the reduced dimensions. When
/// `initValue` is wider than the elements (half-precision sums), the reduction
/// accumulates at its width and the result is rounded back at the end.
Value buildReduce(OpBuilder &b, Location loc, Value input,
                  ArrayRef<int64_t> axes, Value initValue,
                  function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  auto type = cast<RankedTensorType>(input.getType());
  Type accType = initValue.getType();
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  for (auto [dim, size] : llvm::enumerate(type.getShape())) {
    if (llvm::is_contained(axes, static_cast<int64_t>(dim)))
      continue;
    shape.push_back(size);
    if (ShapedType::isDynamic(size))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, input, dim));
  }
  auto accTensorType = RankedTensorType::get(shape, accType);
  Value init = filledTensor(b, loc, accTensorType, dynamicSizes, initValue);
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{input}, ValueRange{init}, axes,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        // linalg.reduce passes (input element, accumulator).
        Value element = convertFloat(nested, nestedLoc, args[0], accType);
        Value result = combine(nested, nestedLoc, args[1], element);
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  Value result = reduce.getResult(0);
  if (accType == type.getElementType())
    return result;
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return buildElementwise(b, loc, resultType, {result},
                          [&](OpBuilder &nested, Location l, ValueRange args) {
                            return convertFloat(nested, l, args[0],
                                                type.getElementType());
                          });
}

/// Reinserts the reduced `axes` as size-1 dimensions (keepdims).
Value expandReducedDims(OpBuilder &b, Location loc, Value reduced,
                        RankedTensorType keptType, ArrayRef<int64_t> axes) {
  auto reducedType = cast<RankedTensorType>(reduced.getType());
  SmallVector<ReassociationIndices> groups(reducedType.getRank());
  ReassociationIndices leadingOnes;
  int64_t group = -1;
  for (int64_t dim = 0; dim < keptType.getRank(); ++dim) {
    bool isReduced = llvm::is_contained(axes, dim);
    if (!isReduced) {
      ++group;
      groups[group].append(leadingOnes.begin(), leadingOnes.end());
      leadingOnes.clear();
      groups[group].push_back(dim);
    } else if (group < 0) {
      leadingOnes.push_back(dim);
    } else {
      groups[group].push_back(dim);
    }
  }
  return tensor::ExpandShapeOp::create(b, loc, keptType, reduced, groups);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

struct ConstantLowering : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = cast<TypedAttr>(op.getValueAttr());
    Type storageType = getTypeConverter()->convertType(op.getType());
    if (storageType != op.getType()) {
      // i1 -> i8 storage: only dense values can be re-encoded here.
      auto dense = dyn_cast<DenseIntElementsAttr>(value);
      if (!dense)
        return rewriter.notifyMatchFailure(
            op, "only dense i1 constants can be stored as i8");
      value = dense.mapValues(
          cast<ShapedType>(storageType).getElementType(),
          [](const APInt &bit) { return bit.zext(8); });
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

template <typename OpTy, typename FloatOp, typename IntOp>
struct BinaryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(op.getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, {adaptor.getLhs(), adaptor.getRhs()},
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          if (isFloat(args[0].getType()))
            return FloatOp::create(b, loc, args[0], args[1]);
          return IntOp::create(b, loc, args[0], args[1]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ReluLowering : OpConversionPattern<ReluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), op.getType(), {adaptor.getInput()},
        [](OpBuilder &b, Location loc, ValueRange args) {
          Value zero = constantScalar(b, loc, args[0].getType(), 0.0, 0);
          return maxScalars(b, loc, args[0], zero);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ExpLowering : OpConversionPattern<ExpOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), op.getType(), {adaptor.getInput()},
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return math::ExpOp::create(b, loc, args[0]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct MatmulLowering : OpConversionPattern<MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank();
    int64_t batchRank = rank - 2;

    // Dynamic sizes: batch dims align with the operands' batch dims; M comes
    // from lhs, N from rhs.
    SmallVector<Value> dynamicSizes;
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (!resultType.isDynamicDim(dim))
        continue;
      if (dim == rank - 2) {
        dynamicSizes.push_back(
            tensor::DimOp::create(rewriter, loc, lhs, lhsType.getRank() - 2));
        continue;
      }
      for (auto [operand, type] :
           {std::pair{lhs, lhsType}, std::pair{rhs, rhsType}}) {
        int64_t operandDim = dim - (rank - type.getRank());
        if (operandDim >= 0 && type.isDynamicDim(operandDim)) {
          dynamicSizes.push_back(
              tensor::DimOp::create(rewriter, loc, operand, operandDim));
          break;
        }
      }
    }
    // Half-precision products accumulate in f32, rounded once at the end.
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    auto accTensorType = resultType.clone(accType);
    Value zero = constantScalar(rewriter, loc, accType, 0.0, 0);
    Value init = filledTensor(rewriter, loc, accTensorType, dynamicSizes, zero);
    auto finish = [&](Value product) {
      if (accType != elementType)
        product = buildElementwise(
            rewriter, loc, resultType, {product},
            [&](OpBuilder &b, Location l, ValueRange args) {
              return convertFloat(b, l, args[0], elementType);
            });
      rewriter.replaceOp(op, product);
      return success();
    };

    if (rank == 2 && lhsType.getRank() == 2 && rhsType.getRank() == 2)
      return finish(linalg::MatmulOp::create(rewriter, loc, ValueRange{lhs, rhs},
                                             ValueRange{init})
                        .getResult(0));
    if (rank == 3 && lhsType.getRank() == 3 && rhsType.getRank() == 3 &&
        lhsType.getDimSize(0) == rhsType.getDimSize(0))
      return finish(linalg::BatchMatmulOp::create(rewriter, loc,
                                                  ValueRange{lhs, rhs},
                                                  ValueRange{init})
                        .getResult(0));

    // General case: loops (batch..., m, n, k), batch dims broadcast.
    MLIRContext *ctx = rewriter.getContext();
    int64_t numLoops = batchRank + 3;
    ArrayRef<int64_t> batchShape = resultType.getShape().drop_back(2);
    auto operandMap = [&](RankedTensorType type, int64_t row, int64_t col) {
      AffineMap batchMap =
          broadcastReadMap(ctx, numLoops, type.getShape().drop_back(2),
                           batchShape, 0);
      SmallVector<AffineExpr> exprs(batchMap.getResults());
      exprs.push_back(getAffineDimExpr(row, ctx));
      exprs.push_back(getAffineDimExpr(col, ctx));
      return AffineMap::get(numLoops, 0, exprs, ctx);
    };
    int64_t m = batchRank, n = batchRank + 1, k = batchRank + 2;
    SmallVector<AffineMap> maps = {operandMap(lhsType, m, k),
                                   operandMap(rhsType, k, n)};
    SmallVector<AffineExpr> outExprs;
    for (int64_t dim = 0; dim < rank; ++dim)
      outExprs.push_back(getAffineDimExpr(dim, ctx));
    maps.push_back(AffineMap::get(numLoops, 0, outExprs, ctx));
    SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, accTensorType, ValueRange{lhs, rhs}, ValueRange{init},
        maps, iterators, [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
          Value x = args[0], y = args[1];
          if (accType != elementType) {
            x = convertFloat(b, nestedLoc, x, accType);
            y = convertFloat(b, nestedLoc, y, accType);
          }
          Value product = mulScalars(b, nestedLoc, x, y);
          linalg::YieldOp::create(b, nestedLoc,
                                  addScalars(b, nestedLoc, args[2], product));
        });
    return finish(generic.getResult(0));
  }
};

template <typename OpTy>
struct ReductionLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  static constexpr bool isMax = std::is_same_v<OpTy, ReduceMaxOp>;

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Reducing over no axis is the identity (numpy: sum(x, axis=())).
    if (op.getAxes().empty()) {
      rewriter.replaceOp(op, adaptor.getInput());
      return success();
    }
    Location loc = op.getLoc();
    Type elementType = op.getType().getElementType();
    Value initValue =
        isMax ? lowestValue(rewriter, loc, elementType)
              : constantScalar(rewriter, loc, accumulatorType(elementType), 0.0, 0);
    Value reduced = buildReduce(rewriter, loc, adaptor.getInput(), op.getAxes(),
                                initValue, isMax ? maxScalars : addScalars);
    if (op.getKeepdims())
      reduced = expandReducedDims(rewriter, loc, reduced, op.getType(),
                                  op.getAxes());
    rewriter.replaceOp(op, reduced);
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = getTypeConverter()->convertType<RankedTensorType>(op.getType());
    SmallVector<Value> dynamicSizes;
    // Only the leading dimension can be dynamic, and it stays in front.
    if (resultType.getRank() > 0 && resultType.isDynamicDim(0))
      dynamicSizes.push_back(
          tensor::DimOp::create(rewriter, loc, adaptor.getInput(), 0));
    Value init = emptyTensor(rewriter, loc, resultType, dynamicSizes);
    auto transpose = linalg::TransposeOp::create(rewriter, loc, adaptor.getInput(),
                                                 init, op.getPermutation());
    rewriter.replaceOp(op, transpose.getResult()[0]);
    return success();
  }
};

struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value value = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(value.getType());
    auto resultType = getTypeConverter()->convertType<RankedTensorType>(op.getType());
    Type elementType = inputType.getElementType();

    // Row-major order makes every reshape "flatten, then unflatten".
    if (inputType.getRank() == 0) {
      value = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get({1}, elementType), value,
          ArrayRef<ReassociationIndices>{});
    } else if (inputType.getRank() > 1) {
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, inputType.getRank()));
      value = tensor::CollapseShapeOp::create(rewriter, loc, value,
                                              ArrayRef<ReassociationIndices>{all});
    }
    if (resultType.getRank() == 0) {
      value = tensor::CollapseShapeOp::create(rewriter, loc, resultType, value,
                                              ArrayRef<ReassociationIndices>{});
    } else if (resultType.getRank() > 1) {
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, resultType.getRank()));
      value = tensor::ExpandShapeOp::create(rewriter, loc, resultType, value,
                                            ArrayRef<ReassociationIndices>{all});
    }
    rewriter.replaceOp(op, value);
    return success();
  }
};

struct SoftmaxLowering : OpConversionPattern<SoftmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = op.getAxis();
    int64_t rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();
    Type elementType = type.getElementType();

    // Maps of the full iteration space and of its reduction along `axis`.
    AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap reducedMap = identity.dropResult(axis);
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    SmallVector<Value> dynamicSizes;
    if (rank > 0 && type.isDynamicDim(0))
      dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, 0));

    auto mapWithReduced = [&](Value full, Value reduced,
                              function_ref<Value(OpBuilder &, Location, Value,
                                                 Value)>
                                  body) {
      Value init = emptyTensor(rewriter, loc, type, dynamicSizes);
      return linalg::GenericOp::create(
                 rewriter, loc, type, ValueRange{full, reduced},
                 ValueRange{init},
                 ArrayRef<AffineMap>{identity, reducedMap, identity}, iterators,
                 [&](OpBuilder &b, Location nestedLoc, ValueRange args) {
                   linalg::YieldOp::create(
                       b, nestedLoc, body(b, nestedLoc, args[0], args[1]));
                 })
          .getResult(0);
    };

    Value max = buildReduce(rewriter, loc, input, {axis},
                            lowestValue(rewriter, loc, elementType), maxScalars);
    Value exps = mapWithReduced(
        input, max, [](OpBuilder &b, Location l, Value x, Value m) -> Value {
          return math::ExpOp::create(b, l, arith::SubFOp::create(b, l, x, m));
        });
    Value sum = buildReduce(
        rewriter, loc, exps, {axis},
        constantScalar(rewriter, loc, accumulatorType(elementType), 0.0, 0),
        addScalars);
    Value result = mapWithReduced(
        exps, sum, [](OpBuilder &b, Location l, Value e, Value s) -> Value {
          return arith::DivFOp::create(b, l, e, s);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ConvertDLToLinalgPass
    : public dl::impl::ConvertDLToLinalgBase<ConvertDLToLinalgPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    DLStorageTypeConverter typeConverter;
    ConversionTarget target(*ctx);
    target.addIllegalDialect<DLDialect>();
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return typeConverter.isLegal(op); });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return typeConverter.isSignatureLegal(op.getFunctionType()) &&
             typeConverter.isLegal(&op.getBody());
    });
    RewritePatternSet patterns(ctx);
    populateDLToLinalgConversionPatterns(typeConverter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(
        patterns, typeConverter);
    populateReturnOpTypeConversionPattern(patterns, typeConverter);
    populateCallOpTypeConversionPattern(patterns, typeConverter);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

mlir::dl::DLStorageTypeConverter::DLStorageTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> Type {
    if (!type.getElementType().isInteger(1))
      return type;
    return type.clone(IntegerType::get(type.getContext(), 8));
  });
}

void mlir::dl::populateDLToLinalgConversionPatterns(
    const TypeConverter &typeConverter, RewritePatternSet &patterns) {
  patterns.add<ConstantLowering, ReluLowering, ExpLowering, MatmulLowering,
               ReductionLowering<ReduceSumOp>, ReductionLowering<ReduceMaxOp>,
               TransposeLowering, ReshapeLowering, SoftmaxLowering,
               BinaryLowering<AddOp, arith::AddFOp, arith::AddIOp>,
               BinaryLowering<SubOp, arith::SubFOp, arith::SubIOp>,
               BinaryLowering<MulOp, arith::MulFOp, arith::MulIOp>,
               BinaryLowering<DivOp, arith::DivFOp, arith::DivSIOp>>(
      typeConverter, patterns.getContext());
}
