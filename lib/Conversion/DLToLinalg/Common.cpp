//===- Common.cpp - helpers shared by the dl-to-linalg patterns -----------===//

#include "Common.h"

using namespace mlir;
using namespace mlir::dl;
using namespace mlir::dl::lowering;

RankedTensorType lowering::storageType(const TypeConverter &converter,
                                       Type type) {
  return converter.convertType<RankedTensorType>(type);
}

Value lowering::emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                            ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 dynamicSizes);
}

Value lowering::filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                             ValueRange dynamicSizes, Value value) {
  Value empty = emptyTensor(b, loc, type, dynamicSizes);
  return linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{empty})
      .getResult(0);
}

SmallVector<Value> lowering::alignedDynamicSizes(OpBuilder &b, Location loc,
                                                 RankedTensorType resultType,
                                                 ValueRange operands) {
  SmallVector<Value> sizes;
  int64_t rank = resultType.getRank();
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!resultType.isDynamicDim(dim))
      continue;
    for (Value operand : operands) {
      auto type = cast<RankedTensorType>(operand.getType());
      int64_t operandDim = dim - (rank - type.getRank());
      if (operandDim >= 0 && type.isDynamicDim(operandDim)) {
        sizes.push_back(tensor::DimOp::create(b, loc, operand, operandDim));
        break;
      }
    }
  }
  return sizes;
}

SmallVector<Value> lowering::dynamicSizesOf(OpBuilder &b, Location loc,
                                            Value value) {
  SmallVector<Value> sizes;
  auto type = cast<RankedTensorType>(value.getType());
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim))
      sizes.push_back(tensor::DimOp::create(b, loc, value, dim));
  return sizes;
}

AffineMap lowering::broadcastReadMap(MLIRContext *ctx, int64_t numLoops,
                                     ArrayRef<int64_t> operandShape,
                                     ArrayRef<int64_t> resultShape,
                                     int64_t firstLoop) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = resultShape.size() - operandShape.size();
  for (auto [dim, size] : llvm::enumerate(operandShape)) {
    int64_t resultDim = dim + offset;
    if (size == 1 && resultShape[resultDim] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(firstLoop + resultDim, ctx));
  }
  return AffineMap::get(numLoops, 0, exprs, ctx);
}

Value lowering::buildElementwise(OpBuilder &b, Location loc,
                                 RankedTensorType resultType, ValueRange inputs,
                                 BodyBuilder body) {
  return buildElementwise(b, loc, resultType, inputs, body,
                          alignedDynamicSizes(b, loc, resultType, inputs));
}

Value lowering::buildElementwise(OpBuilder &b, Location loc,
                                 RankedTensorType resultType, ValueRange inputs,
                                 BodyBuilder body, ValueRange dynamicSizes) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastReadMap(
        ctx, rank, cast<RankedTensorType>(input.getType()).getShape(),
        resultType.getShape()));
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = emptyTensor(b, loc, resultType, dynamicSizes);
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

Value lowering::convertElements(OpBuilder &b, Location loc, Value tensor,
                                Type elementType) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() == elementType)
    return tensor;
  return buildElementwise(b, loc, type.clone(elementType), {tensor},
                          [&](OpBuilder &nested, Location l, ValueRange args) {
                            return convertFloat(nested, l, args[0], elementType);
                          });
}

Value lowering::buildReduce(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes,
    Value initValue,
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
  Value init = filledTensor(b, loc, RankedTensorType::get(shape, accType),
                            dynamicSizes, initValue);
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{input}, ValueRange{init}, axes,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        // linalg.reduce passes (input element, accumulator).
        Value element = isFloat(accType)
                            ? convertFloat(nested, nestedLoc, args[0], accType)
                            : args[0];
        Value result = combine(nested, nestedLoc, args[1], element);
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return reduce.getResult(0);
}

Value lowering::expandReducedDims(OpBuilder &b, Location loc, Value reduced,
                                  RankedTensorType keptType,
                                  ArrayRef<int64_t> axes) {
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
  return tensor::ExpandShapeOp::create(
      b, loc, keptType.clone(reducedType.getElementType()), reduced, groups);
}

Value lowering::reducedCount(OpBuilder &b, Location loc, Value input,
                             ArrayRef<int64_t> axes, Type type) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t staticCount = 1;
  Value dynamicCount;
  for (int64_t axis : axes) {
    if (!inputType.isDynamicDim(axis)) {
      staticCount *= inputType.getDimSize(axis);
      continue;
    }
    Value size = tensor::DimOp::create(b, loc, input, axis);
    dynamicCount = dynamicCount ? arith::MulIOp::create(b, loc, dynamicCount, size)
                                : size;
  }
  Value count = constantScalar(b, loc, type, static_cast<double>(staticCount));
  if (!dynamicCount)
    return count;
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), dynamicCount);
  Value asFloat = arith::SIToFPOp::create(b, loc, type, asInt);
  return arith::MulFOp::create(b, loc, count, asFloat);
}

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Type lowering::accumulatorType(Type type) {
  if (isa<Float16Type, BFloat16Type>(type))
    return Float32Type::get(type.getContext());
  return type;
}

Value lowering::convertFloat(OpBuilder &b, Location loc, Value value,
                             Type type) {
  Type source = value.getType();
  if (source == type)
    return value;
  unsigned from = source.getIntOrFloatBitWidth(), to = type.getIntOrFloatBitWidth();
  if (from == to) // f16 <-> bf16: through f32, which holds both exactly.
    value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
  if (to > from)
    return arith::ExtFOp::create(b, loc, type, value);
  return arith::TruncFOp::create(b, loc, type, value);
}

Value lowering::constantScalar(OpBuilder &b, Location loc, Type type,
                               double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  // Wrapped to the width: the storage of an unsigned value of the top half
  // (ui8 200) is a negative signless one.
  APInt bits(type.getIntOrFloatBitWidth(),
             static_cast<uint64_t>(static_cast<int64_t>(value)),
             /*isSigned=*/true, /*implicitTrunc=*/true);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, bits));
}

Value lowering::addScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value lowering::subScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::SubFOp::create(b, loc, x, y);
  return arith::SubIOp::create(b, loc, x, y);
}

Value lowering::mulScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

Value lowering::maxScalars(OpBuilder &b, Location loc, Value x, Value y,
                          bool isUnsigned) {
  if (isFloat(x.getType()))
    return arith::MaximumFOp::create(b, loc, x, y);
  if (isUnsigned)
    return arith::MaxUIOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value lowering::minScalars(OpBuilder &b, Location loc, Value x, Value y,
                          bool isUnsigned) {
  if (isFloat(x.getType()))
    return arith::MinimumFOp::create(b, loc, x, y);
  if (isUnsigned)
    return arith::MinUIOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}

static Value extremeValue(OpBuilder &b, Location loc, Type type, bool lowest,
                          bool isUnsigned) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(floatType,
                       APFloat::getInf(floatType.getFloatSemantics(), lowest)));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt value = isUnsigned ? (lowest ? APInt::getMinValue(width)
                                     : APInt::getMaxValue(width))
                           : (lowest ? APInt::getSignedMinValue(width)
                                     : APInt::getSignedMaxValue(width));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

Value lowering::lowestValue(OpBuilder &b, Location loc, Type type,
                            bool isUnsigned) {
  return extremeValue(b, loc, type, /*lowest=*/true, isUnsigned);
}

Value lowering::highestValue(OpBuilder &b, Location loc, Type type,
                             bool isUnsigned) {
  return extremeValue(b, loc, type, /*lowest=*/false, isUnsigned);
}

Value lowering::safeDivI(OpBuilder &b, Location loc, Value x, Value y,
                         bool isUnsigned) {
  Type type = x.getType();
  Value zero = constantScalar(b, loc, type, 0);
  Value one = constantScalar(b, loc, type, 1);
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
  if (isUnsigned) {
    Value divisor = arith::SelectOp::create(b, loc, isZero, one, y);
    Value quotient = arith::DivUIOp::create(b, loc, x, divisor);
    return arith::SelectOp::create(b, loc, isZero, zero, quotient);
  }
  Value minusOne = constantScalar(b, loc, type, -1);
  Value isMinusOne =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, minusOne);
  Value unsafe = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  Value divisor = arith::SelectOp::create(b, loc, unsafe, one, y);
  Value quotient = arith::DivSIOp::create(b, loc, x, divisor);
  Value negated = arith::SubIOp::create(b, loc, zero, x);
  quotient = arith::SelectOp::create(b, loc, isMinusOne, negated, quotient);
  return arith::SelectOp::create(b, loc, isZero, zero, quotient);
}

Value lowering::safeRemI(OpBuilder &b, Location loc, Value x, Value y,
                         bool isUnsigned) {
  Type type = x.getType();
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y,
                                       constantScalar(b, loc, type, 0));
  if (isUnsigned) {
    // x % 1 = 0.
    Value divisor = arith::SelectOp::create(
        b, loc, isZero, constantScalar(b, loc, type, 1), y);
    return arith::RemUIOp::create(b, loc, x, divisor);
  }
  Value isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y,
                                           constantScalar(b, loc, type, -1));
  Value divisor = arith::SelectOp::create(
      b, loc, arith::OrIOp::create(b, loc, isZero, isMinusOne),
      constantScalar(b, loc, type, 1), y);
  return arith::RemSIOp::create(b, loc, x, divisor);
}

Value lowering::boolToStorage(OpBuilder &b, Location loc, Value bit) {
  return arith::ExtUIOp::create(b, loc, b.getI8Type(), bit);
}

Value lowering::storageToBool(OpBuilder &b, Location loc, Value byte) {
  Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(byte.getType(), 0));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, byte, zero);
}
