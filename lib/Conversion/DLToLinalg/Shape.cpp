//===- Shape.cpp - dl shape manipulation to tensor and linalg -------------===//
//
// - transpose: linalg.transpose;
// - reshape: tensor.collapse_shape to 1-D and tensor.expand_shape to the new
//   shape (row-major order makes every reshape "flatten, then unflatten"; both
//   bufferize to views, no copy), the size operands as its output shape;
//   static shapes collapse and expand only the groups of dimensions that
//   merge or split ([197, 64, 24] -> [1, 197, 1536]: 64 x 24 collapsed, 197
//   expanded to 1 x 197);
// - broadcast_to: a broadcasting linalg.generic;
// - slice: tensor.extract_slice (a view) when every stride is positive, else a
//   linalg.generic reading `start + stride * i`; a run-time size is clamped to
//   what the dimension holds;
// - concat: tensor.insert_slice of each input into a tensor.empty;
// - pad: tensor.pad with a constant;
// - gather: a linalg.generic over the result that reads each index, wraps it
//   when negative, clamps it into the dimension (never an out-of-bounds read)
//   and extracts the element;
// - iota: a linalg.generic of linalg.index;
// - tensor.dim of a dl tensor (a run-time size): the same on its storage.
//
// Any dimension may be dynamic; sizes come from tensor.dim of the operand
// they mirror, or from the ops' size operands (reshape, broadcast_to,
// slice).
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"

using namespace mlir;
using namespace mlir::dl;
using namespace mlir::dl::lowering;

namespace {

struct TransposeLowering : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = storageType(*getTypeConverter(), op.getType());
    SmallVector<Value> dynamicSizes;
    for (auto [dim, from] : llvm::enumerate(op.getPermutation()))
      if (resultType.isDynamicDim(dim))
        dynamicSizes.push_back(
            tensor::DimOp::create(rewriter, loc, adaptor.getInput(), from));
    Value init = emptyTensor(rewriter, loc, resultType, dynamicSizes);
    auto transpose = linalg::TransposeOp::create(rewriter, loc, adaptor.getInput(),
                                                 init, op.getPermutation());
    rewriter.replaceOp(op, transpose.getResult()[0]);
    return success();
  }
};

/// For static shapes (no zero sizes) of rank >= 1: the coarsest shape both
/// `from` and `to` refine, as the groups of `from`'s and `to`'s dimensions
/// each of its dimensions collects (unit dimensions join the group before
/// them, or the first group). None when the shapes have no such form (their
/// element counts differ). [197, 64, 24] -> [1, 197, 1536]: groups
/// {0}, {1, 2} of `from` and {0, 1}, {2} of `to`, through [197, 1536].
std::optional<std::pair<SmallVector<ReassociationIndices>,
                        SmallVector<ReassociationIndices>>>
commonGroups(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  SmallVector<ReassociationIndices> fromGroups, toGroups;
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    ReassociationIndices a, b;
    int64_t pa = 1, pb = 1;
    // Each group takes at least one dimension of each side that has any left.
    if (i < from.size())
      pa *= from[i], a.push_back(i++);
    if (j < to.size())
      pb *= to[j], b.push_back(j++);
    while (pa != pb) {
      if (pa < pb && i < from.size())
        pa *= from[i], a.push_back(i++);
      else if (pb < pa && j < to.size())
        pb *= to[j], b.push_back(j++);
      else
        return std::nullopt;
    }
    // Trailing unit dimensions stay in this group.
    while (i < from.size() && from[i] == 1 && (j >= to.size() || to[j] != 1))
      a.push_back(i++);
    while (j < to.size() && to[j] == 1 && (i >= from.size() || from[i] != 1))
      b.push_back(j++);
    if (a.empty() || b.empty()) { // one side ran out: join the last group
      if (fromGroups.empty())
        return std::nullopt;
      fromGroups.back().append(a.begin(), a.end());
      toGroups.back().append(b.begin(), b.end());
      continue;
    }
    fromGroups.push_back(a);
    toGroups.push_back(b);
  }
  return std::make_pair(fromGroups, toGroups);
}

struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value value = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(value.getType());
    auto resultType = storageType(*getTypeConverter(), op.getType());
    Type elementType = inputType.getElementType();

    // Static shapes: collapse the groups of dimensions that merge, expand
    // those that split (views of the same row-major buffer, no 1-D detour),
    // so that later folds see which dimensions stay whole: a transpose's
    // [R, J, p] read as [1, R, J*p] keeps R apart.
    if (inputType.hasStaticShape() && resultType.hasStaticShape() &&
        inputType.getRank() > 0 && resultType.getRank() > 0 &&
        !llvm::is_contained(inputType.getShape(), 0) &&
        !llvm::is_contained(resultType.getShape(), 0)) {
      if (auto groups = commonGroups(inputType.getShape(), resultType.getShape())) {
        auto &[fromGroups, toGroups] = *groups;
        if (fromGroups.size() != static_cast<size_t>(inputType.getRank())) {
          SmallVector<int64_t> middle;
          for (const ReassociationIndices &group : toGroups) {
            int64_t size = 1;
            for (int64_t d : group)
              size *= resultType.getDimSize(d);
            middle.push_back(size);
          }
          value = tensor::CollapseShapeOp::create(
              rewriter, loc, RankedTensorType::get(middle, elementType), value,
              fromGroups);
        }
        if (toGroups.size() != static_cast<size_t>(resultType.getRank()))
          value = tensor::ExpandShapeOp::create(rewriter, loc, resultType, value,
                                                toGroups);
        if (value.getType() != resultType)
          value = tensor::CastOp::create(rewriter, loc, resultType, value);
        rewriter.replaceOp(op, value);
        return success();
      }
    }
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
    ValueRange sizes = adaptor.getSizes();
    if (resultType.getRank() == 0) {
      value = tensor::CollapseShapeOp::create(rewriter, loc, resultType, value,
                                              ArrayRef<ReassociationIndices>{});
    } else if (resultType.getRank() > 1 && resultType.getNumDynamicDims() > 1) {
      // Several run-time sizes: memref's expand_shape takes one dynamic size
      // per group, so a shape tensor gives them all (tensor.reshape, a view
      // of the row-major input).
      SmallVector<Value> dims;
      auto next = sizes.begin();
      for (int64_t size : resultType.getShape())
        dims.push_back(ShapedType::isDynamic(size)
                           ? *next++
                           : arith::ConstantIndexOp::create(rewriter, loc, size)
                                 .getResult());
      Value shape = tensor::FromElementsOp::create(
          rewriter, loc,
          RankedTensorType::get({resultType.getRank()}, rewriter.getIndexType()),
          dims);
      value = tensor::ReshapeOp::create(rewriter, loc, resultType, value, shape);
    } else if (resultType.getRank() > 1 && !sizes.empty()) {
      // One run-time size: expand_shape infers it from the element count.
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, resultType.getRank()));
      value = tensor::ExpandShapeOp::create(
          rewriter, loc, resultType.clone(resultType.getShape()), value,
          ArrayRef<ReassociationIndices>{all});
    } else if (resultType.getRank() > 1) {
      ReassociationIndices all =
          llvm::to_vector(llvm::seq<int64_t>(0, resultType.getRank()));
      value = tensor::ExpandShapeOp::create(rewriter, loc, resultType, value,
                                            ArrayRef<ReassociationIndices>{all});
    } else if (resultType.isDynamicDim(0) && !sizes.empty()) {
      // 1-D: the flattened input already has the size; the operand only
      // restates it.
      value = tensor::CastOp::create(rewriter, loc, resultType, value);
    }
    rewriter.replaceOp(op, value);
    return success();
  }
};

struct BroadcastToLowering : OpConversionPattern<BroadcastToOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastToOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto copy = [](OpBuilder &, Location, ValueRange args) { return args[0]; };
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    Value result =
        adaptor.getSizes().empty()
            ? buildElementwise(rewriter, op.getLoc(), resultType,
                               {adaptor.getInput()}, copy)
            : buildElementwise(rewriter, op.getLoc(), resultType,
                               {adaptor.getInput()}, copy, adaptor.getSizes());
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    ArrayRef<int64_t> starts = op.getStarts(), strides = op.getStrides();
    int64_t rank = resultType.getRank();
    // An empty result reads nothing (its offsets may not even be inside an
    // empty input: x[:, 1:] of a 0x3 tensor).
    if (llvm::is_contained(resultType.getShape(), 0) &&
        resultType.hasStaticShape()) {
      rewriter.replaceOp(op, emptyTensor(rewriter, loc, resultType, {}));
      return success();
    }
    // The elements read, as a slice with positive steps: along a dimension
    // read backwards, from the last element read (the lowest index) up.
    SmallVector<OpFoldResult> offsets, sizes, steps;
    auto nextSize = adaptor.getDynamicSizes().begin();
    bool given = !adaptor.getDynamicSizes().empty();
    for (int64_t dim = 0; dim < rank; ++dim) {
      int64_t stride = strides[dim];
      if (resultType.isDynamicDim(dim)) {
        // Read forwards: the whole dimension, or at most the given count,
        // as many as there are from the start on (never out of bounds).
        Value extent = tensor::DimOp::create(rewriter, loc, input, dim);
        Value size = extent;
        if (given) {
          Value start = arith::ConstantIndexOp::create(rewriter, loc, starts[dim]);
          Value step = arith::ConstantIndexOp::create(rewriter, loc, stride);
          Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
          Value left = arith::MaxSIOp::create(
              rewriter, loc, arith::SubIOp::create(rewriter, loc, extent, start),
              zero);
          Value available = arith::CeilDivSIOp::create(rewriter, loc, left, step);
          size = arith::MaxSIOp::create(
              rewriter, loc,
              arith::MinSIOp::create(rewriter, loc, *nextSize++, available),
              zero);
        }
        offsets.push_back(rewriter.getIndexAttr(starts[dim]));
        sizes.push_back(size);
        steps.push_back(rewriter.getIndexAttr(stride));
        continue;
      }
      int64_t size = resultType.getDimSize(dim);
      offsets.push_back(rewriter.getIndexAttr(
          stride > 0 ? starts[dim] : starts[dim] + stride * (size - 1)));
      sizes.push_back(rewriter.getIndexAttr(size));
      steps.push_back(rewriter.getIndexAttr(stride > 0 ? stride : -stride));
    }
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, resultType,
                                                 input, offsets, sizes, steps);
    if (llvm::all_of(strides, [](int64_t s) { return s > 0; })) {
      rewriter.replaceOp(op, slice);
      return success();
    }
    // Then reversed along the dimensions read backwards: out[.., i, ..] =
    // slice[.., size - 1 - i, ..], every operand of the same extents.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t dim = 0; dim < rank; ++dim) {
      AffineExpr d = getAffineDimExpr(dim, ctx);
      exprs.push_back(strides[dim] > 0
                          ? d
                          : getAffineConstantExpr(
                                resultType.getDimSize(dim) - 1, ctx) -
                                d);
    }
    Value init = emptyTensor(rewriter, loc, resultType,
                             dynamicSizesOf(rewriter, loc, slice));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{slice}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, exprs, ctx),
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange inputs = adaptor.getInputs();
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    int64_t axis = op.getAxis(), rank = resultType.getRank();

    // Sizes of every input along `axis`, and the offsets they start at.
    SmallVector<OpFoldResult> extents;
    for (Value input : inputs)
      extents.push_back(tensor::getMixedSize(rewriter, loc, input, axis));
    SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(0)};
    for (OpFoldResult extent : ArrayRef(extents).drop_back()) {
      OpFoldResult last = offsets.back();
      std::optional<int64_t> a = getConstantIntValue(last),
                             b = getConstantIntValue(extent);
      if (a && b) {
        offsets.push_back(rewriter.getIndexAttr(*a + *b));
      } else {
        Value lhs = getValueOrCreateConstantIndexOp(rewriter, loc, last);
        Value rhs = getValueOrCreateConstantIndexOp(rewriter, loc, extent);
        offsets.push_back(arith::AddIOp::create(rewriter, loc, lhs, rhs).getResult());
      }
    }
    SmallVector<Value> dynamicSizes;
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (!resultType.isDynamicDim(dim))
        continue;
      if (dim != axis) {
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, inputs[0], dim));
        continue;
      }
      Value total = getValueOrCreateConstantIndexOp(rewriter, loc, offsets.back());
      Value lastExtent = getValueOrCreateConstantIndexOp(rewriter, loc, extents.back());
      dynamicSizes.push_back(arith::AddIOp::create(rewriter, loc, total, lastExtent));
    }
    Value result = emptyTensor(rewriter, loc, resultType, dynamicSizes);
    for (auto [input, offset] : llvm::zip(inputs, offsets)) {
      // An input with no elements inserts nothing (and its offset may be
      // the end of the result, out of bounds for insert_slice).
      if (llvm::is_contained(cast<RankedTensorType>(input.getType()).getShape(),
                             0))
        continue;
      SmallVector<OpFoldResult> at(rank, rewriter.getIndexAttr(0));
      at[axis] = offset;
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, input);
      SmallVector<OpFoldResult> steps(rank, rewriter.getIndexAttr(1));
      result = tensor::InsertSliceOp::create(rewriter, loc, input, result, at,
                                             sizes, steps);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct PadLowering : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    Type elementType = resultType.getElementType();
    double value = op.getValue().convertToDouble();
    bool isBool = cast<RankedTensorType>(op.getType()).getElementType().isInteger(1);
    Value padValue = constantScalar(rewriter, loc, elementType,
                                    isBool ? (value != 0.0 ? 1.0 : 0.0) : value);
    SmallVector<OpFoldResult> low, high;
    for (int64_t size : op.getLow())
      low.push_back(rewriter.getIndexAttr(size));
    for (int64_t size : op.getHigh())
      high.push_back(rewriter.getIndexAttr(size));
    rewriter.replaceOpWithNewOp<tensor::PadOp>(op, resultType, adaptor.getInput(),
                                               low, high, padValue);
    return success();
  }
};

struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    int64_t axis = op.getAxis(), rank = resultType.getRank();
    int64_t indicesRank = indicesType.getRank();

    // Result dimension d is input dimension d before the axis, indices
    // dimension d - axis within the indices' span, input dimension
    // d - indicesRank + 1 after it.
    SmallVector<Value> dynamicSizes;
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (!resultType.isDynamicDim(dim))
        continue;
      if (dim < axis)
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, dim));
      else if (dim < axis + indicesRank)
        dynamicSizes.push_back(
            tensor::DimOp::create(rewriter, loc, indices, dim - axis));
      else
        dynamicSizes.push_back(tensor::DimOp::create(
            rewriter, loc, input, dim - indicesRank + 1));
    }
    Value extent = tensor::DimOp::create(rewriter, loc, input, axis);
    Value init = emptyTensor(rewriter, loc, resultType, dynamicSizes);
    SmallVector<AffineExpr> indexExprs;
    for (int64_t dim = 0; dim < indicesRank; ++dim)
      indexExprs.push_back(getAffineDimExpr(axis + dim, ctx));
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{indices}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, indexExprs, ctx),
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value index = arith::IndexCastOp::create(b, l, b.getIndexType(), args[0]);
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          Value one = arith::ConstantIndexOp::create(b, l, 1);
          Value negative =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index, zero);
          index = arith::SelectOp::create(
              b, l, negative, arith::AddIOp::create(b, l, index, extent), index);
          index = arith::MaxSIOp::create(b, l, index, zero);
          index = arith::MinSIOp::create(
              b, l, index, arith::SubIOp::create(b, l, extent, one));
          SmallVector<Value> position;
          for (int64_t dim = 0; dim < inputType.getRank(); ++dim) {
            if (dim < axis)
              position.push_back(linalg::IndexOp::create(b, l, dim));
            else if (dim == axis)
              position.push_back(index);
            else
              position.push_back(
                  linalg::IndexOp::create(b, l, dim - 1 + indicesRank));
          }
          linalg::YieldOp::create(
              b, l, tensor::ExtractOp::create(b, l, input, position).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct IotaLowering : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType resultType = storageType(*getTypeConverter(), op.getType());
    SmallVector<Value> dynamicSizes;
    if (resultType.isDynamicDim(0))
      dynamicSizes.push_back(adaptor.getSize());
    Value init = emptyTensor(rewriter, loc, resultType, dynamicSizes);
    Type elementType = resultType.getElementType();
    MLIRContext *ctx = rewriter.getContext();
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(1, ctx)},
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel},
        [&](OpBuilder &b, Location l, ValueRange) {
          Value index = linalg::IndexOp::create(b, l, 0);
          Value asInt = arith::IndexCastOp::create(b, l, b.getI64Type(), index);
          Value value;
          if (isFloat(elementType))
            value = arith::SIToFPOp::create(b, l, elementType, asInt);
          else if (elementType.getIntOrFloatBitWidth() < 64)
            value = arith::TruncIOp::create(b, l, elementType, asInt);
          else
            value = asInt;
          linalg::YieldOp::create(b, l, value);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// tensor.dim reads the size of a dl tensor (the frontends' run-time sizes);
/// it follows its operand to the storage type (bool tensors become i8).
struct TensorDimLowering : OpConversionPattern<tensor::DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tensor::DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::DimOp>(op, adaptor.getSource(),
                                               adaptor.getIndex());
    return success();
  }
};

} // namespace

void lowering::populateShapePatterns(const TypeConverter &converter,
                                     RewritePatternSet &patterns) {
  patterns.add<TransposeLowering, ReshapeLowering, BroadcastToLowering,
               SliceLowering, ConcatLowering, PadLowering, GatherLowering,
               IotaLowering, TensorDimLowering>(
      converter, patterns.getContext());
}
