//===- Structured.cpp - dl matmul, conv2d and pooling to linalg -----------===//
//
// Contractions and windows become linalg named ops where one fits, so that
// later tiling/packing strategies recognize them:
// - matmul: linalg.matmul (2-D), linalg.batch_matmul (3-D, equal batch), or a
//   linalg.generic contraction (broadcast batch dimensions); a batch of rows
//   times a matrix ([batch..., M, K] x [K, N]) is one 2-D matmul over the
//   collapsed rows, expanded back;
// - conv2d: tensor.pad for the padding, then linalg.conv_2d_nchw_fchw /
//   conv_2d_nhwc_hwcf (groups = 1), linalg.depthwise_conv_2d_nchw_chw /
//   nhwc_hwc (one filter per channel), or a grouped linalg.generic on
//   group-split views (other groups); the bias is a broadcasting add;
// - max/avg pooling: tensor.pad with -inf / 0, then linalg.pooling_*_max/sum;
//   average pooling divides by the window size, or by the number of
//   non-padding elements per output position (a constant table) when
//   count_include_pad is off.
// f16/bf16 products and sums accumulate in f32 and are rounded once.
//
// Each matmul and convolution follows its #dl.strategy (dl-select-strategies;
// chosen the same way where the op carries none), and the linalg op doing
// its work carries it on (`dl.strategy`), to the loop nest where
// dl-affine-register-tile builds its micro-kernel.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "dl/Transforms/Strategy.h"

using namespace mlir;
using namespace mlir::dl;
using namespace mlir::dl::lowering;

namespace {

/// The strategy of `op`: the one it carries, else the target's choice.
StrategyAttr strategyFor(Operation *op) {
  std::optional<StrategyChoice> choice =
      strategyOf(op, TargetInfo::of(op), StrategyOptions());
  return choice ? choice->strategy : StrategyAttr();
}

/// The linalg op computing `value` (through reshapes) carries `strategy` on.
void carryStrategy(Value value, StrategyAttr strategy) {
  Operation *def = value.getDefiningOp();
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
    def = def->getOperand(0).getDefiningOp();
  if (isa_and_nonnull<linalg::LinalgOp>(def) && strategy)
    def->setAttr(kStrategyAttrName, strategy);
}

/// Rounds an accumulator tensor back to `elementType` (no-op when equal).
Value finishAccumulation(OpBuilder &b, Location loc, Value acc,
                         Type elementType) {
  return convertElements(b, loc, acc, elementType);
}

/// dl.matmul, and dl.matmul_integer (8-bit operands extended by their sign
/// and summed in i32: always a generic, whose body the extensions are in).
template <typename OpTy>
struct MatmulLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpTy::Adaptor;
  static constexpr bool widening = std::is_same_v<OpTy, MatmulIntegerOp>;
  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    // Same-width integer products wrap: the storage's (signed) matmul gives
    // an unsigned one's bits too.
    RankedTensorType resultType =
        storageType(*this->getTypeConverter(), op.getType());
    // [batch..., M, K] x [K, N] (a linear layer on a batch of sequences):
    // the batch dimensions and M are one dimension of rows, so that the
    // GEMM's cache blocks see every row and B is packed once, not once per
    // batch element (GPT-2 at batch 8: 8 x 128 rows, each block of B
    // packed 8 times and the rows' partial sums sized for 128 rows).
    RankedTensorType expandedType;
    SmallVector<ReassociationIndices> rowGroups;
    SmallVector<OpFoldResult> expandedSizes;
    // At most one of the row dimensions dynamic: a memref.expand_shape
    // with two dynamic sizes in a group aborts upstream's
    // expand-strided-metadata (ExpandStridedMetadata.cpp, getExpandedSizes).
    ArrayRef<int64_t> rowSizes = lhsType.getShape().drop_back();
    if (rhsType.getRank() == 2 && lhsType.getRank() > 2 &&
        llvm::count_if(rowSizes, ShapedType::isDynamic) <= 1) {
      int64_t lhsRank = lhsType.getRank();
      ReassociationIndices rows;
      for (int64_t dim = 0; dim < lhsRank - 1; ++dim)
        rows.push_back(dim);
      rowGroups = {rows, {lhsRank - 1}};
      expandedType = resultType;
      for (int64_t dim = 0; dim < lhsRank - 1; ++dim)
        expandedSizes.push_back(tensor::getMixedSize(rewriter, loc, lhs, dim));
      expandedSizes.push_back(tensor::getMixedSize(rewriter, loc, rhs, 1));
      lhs = tensor::CollapseShapeOp::create(rewriter, loc, lhs, rowGroups);
      lhsType = cast<RankedTensorType>(lhs.getType());
      resultType = RankedTensorType::get(
          {lhsType.getDimSize(0), rhsType.getDimSize(1)},
          resultType.getElementType());
    }
    int64_t rank = resultType.getRank();
    int64_t batchRank = rank - 2;
    bool lhsUnsigned = isUnsignedTensor(op.getLhs().getType());
    bool rhsUnsigned = isUnsignedTensor(op.getRhs().getType());

    // Dynamic sizes: batch dims align with the operands' batch dims; M comes
    // from lhs.
    SmallVector<Value> dynamicSizes;
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (!resultType.isDynamicDim(dim))
        continue;
      if (dim == rank - 2) {
        dynamicSizes.push_back(
            tensor::DimOp::create(rewriter, loc, lhs, lhsType.getRank() - 2));
        continue;
      }
      if (dim == rank - 1) { // N comes from rhs (lhs's last dimension is K)
        dynamicSizes.push_back(
            tensor::DimOp::create(rewriter, loc, rhs, rhsType.getRank() - 1));
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
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    auto accTensorType = resultType.clone(accType);
    Value init = filledTensor(rewriter, loc, accTensorType, dynamicSizes,
                              constantScalar(rewriter, loc, accType, 0));
    Value product;
    if (!widening && rank == 2 && lhsType.getRank() == 2 &&
        rhsType.getRank() == 2) {
      product = linalg::MatmulOp::create(rewriter, loc, ValueRange{lhs, rhs},
                                         ValueRange{init})
                    .getResult(0);
    } else if (!widening && rank == 3 && lhsType.getRank() == 3 &&
               rhsType.getRank() == 3 &&
               lhsType.getDimSize(0) == rhsType.getDimSize(0)) {
      product = linalg::BatchMatmulOp::create(rewriter, loc,
                                              ValueRange{lhs, rhs},
                                              ValueRange{init})
                    .getResult(0);
    } else {
      // Loops (batch..., m, n, k); batch dimensions broadcast.
      MLIRContext *ctx = rewriter.getContext();
      int64_t numLoops = batchRank + 3;
      ArrayRef<int64_t> batchShape = resultType.getShape().drop_back(2);
      auto operandMap = [&](RankedTensorType type, int64_t row, int64_t col) {
        AffineMap batchMap = broadcastReadMap(
            ctx, numLoops, type.getShape().drop_back(2), batchShape);
        SmallVector<AffineExpr> exprs(batchMap.getResults());
        exprs.push_back(getAffineDimExpr(row, ctx));
        exprs.push_back(getAffineDimExpr(col, ctx));
        return AffineMap::get(numLoops, 0, exprs, ctx);
      };
      int64_t m = batchRank, n = batchRank + 1, k = batchRank + 2;
      SmallVector<AffineExpr> outExprs;
      for (int64_t dim = 0; dim < rank; ++dim)
        outExprs.push_back(getAffineDimExpr(dim, ctx));
      SmallVector<AffineMap> maps = {operandMap(lhsType, m, k),
                                     operandMap(rhsType, k, n),
                                     AffineMap::get(numLoops, 0, outExprs, ctx)};
      SmallVector<utils::IteratorType> iterators(numLoops - 1,
                                                 utils::IteratorType::parallel);
      iterators.push_back(utils::IteratorType::reduction);
      product = linalg::GenericOp::create(
                    rewriter, loc, accTensorType, ValueRange{lhs, rhs},
                    ValueRange{init}, maps, iterators,
                    [&](OpBuilder &b, Location l, ValueRange args) {
                      Value x = args[0], y = args[1];
                      if (isFloat(accType)) {
                        x = convertFloat(b, l, x, accType);
                        y = convertFloat(b, l, y, accType);
                      } else if (widening) {
                        x = lhsUnsigned
                                ? arith::ExtUIOp::create(b, l, accType, x).getResult()
                                : arith::ExtSIOp::create(b, l, accType, x).getResult();
                        y = rhsUnsigned
                                ? arith::ExtUIOp::create(b, l, accType, y).getResult()
                                : arith::ExtSIOp::create(b, l, accType, y).getResult();
                      }
                      linalg::YieldOp::create(
                          b, l, addScalars(b, l, args[2], mulScalars(b, l, x, y)));
                    })
                    .getResult(0);
    }
    carryStrategy(product, strategyFor(op));
    Value result = finishAccumulation(rewriter, loc, product, elementType);
    if (expandedType)
      result = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                             result, rowGroups, expandedSizes);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Windows: padding and output shapes
//===----------------------------------------------------------------------===//

/// Positions of batch, channel, height and width in a 4-D layout.
struct Layout2d {
  bool nchw;
  int64_t channel() const { return nchw ? 1 : 3; }
  int64_t height() const { return nchw ? 2 : 1; }
  int64_t width() const { return nchw ? 3 : 2; }
};

/// `input` padded spatially by [top, bottom, left, right] with `value`.
Value padSpatially(OpBuilder &b, Location loc, Value input, Layout2d layout,
                   ArrayRef<int64_t> padding, Value value) {
  if (llvm::all_of(padding, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> low(4, 0), high(4, 0);
  low[layout.height()] = padding[0];
  high[layout.height()] = padding[1];
  low[layout.width()] = padding[2];
  high[layout.width()] = padding[3];
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t dim = 1; dim < 4; ++dim)
    if (!ShapedType::isDynamic(shape[dim]))
      shape[dim] += low[dim] + high[dim];
  SmallVector<OpFoldResult> lowSizes, highSizes;
  for (int64_t dim = 0; dim < 4; ++dim) {
    lowSizes.push_back(b.getIndexAttr(low[dim]));
    highSizes.push_back(b.getIndexAttr(high[dim]));
  }
  return tensor::PadOp::create(b, loc, type.clone(shape), input, lowSizes,
                               highSizes, value);
}

DenseIntElementsAttr pairAttr(OpBuilder &b, ArrayRef<int64_t> values) {
  return DenseIntElementsAttr::get(
      RankedTensorType::get({2}, b.getI64Type()), values);
}

/// The sizes (batch, height, width) of a window's 4-D result over the
/// (padded) `input`: constants where the result type knows them; otherwise
/// the batch is the input's and an image size is max(0, (size - span)
/// floordiv stride + 1), span = dilation * (window - 1) + 1: an image
/// smaller than the window gives an empty output, never a read outside it.
struct WindowSizes {
  Value batch, height, width;
};
WindowSizes windowSizes(OpBuilder &b, Location loc, Value input,
                        RankedTensorType resultType, Layout2d layout,
                        ArrayRef<int64_t> window, ArrayRef<int64_t> strides,
                        ArrayRef<int64_t> dilations) {
  auto size = [&](int64_t dim, int axis) -> Value {
    if (!resultType.isDynamicDim(dim))
      return arith::ConstantIndexOp::create(b, loc, resultType.getDimSize(dim));
    Value extent = tensor::DimOp::create(b, loc, input, dim);
    if (axis < 0)
      return extent;
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    // One statement per op: the IR's order must not depend on the order in
    // which a compiler evaluates call arguments.
    Value span = index(dilations[axis] * (window[axis] - 1) + 1);
    Value stride = index(strides[axis]);
    Value one = index(1), zero = index(0);
    Value room = arith::SubIOp::create(b, loc, extent, span);
    Value steps = arith::FloorDivSIOp::create(b, loc, room, stride);
    Value count = arith::AddIOp::create(b, loc, steps, one);
    return arith::MaxSIOp::create(b, loc, count, zero);
  };
  return {size(0, -1), size(layout.height(), 0), size(layout.width(), 1)};
}

/// The dynamic sizes of a 4-D window result, in order.
SmallVector<Value> dynamicWindowSizes(RankedTensorType resultType,
                                      Layout2d layout, const WindowSizes &sizes) {
  SmallVector<Value> dims;
  for (int64_t dim = 0; dim < 4; ++dim) {
    if (!resultType.isDynamicDim(dim))
      continue;
    dims.push_back(dim == 0                   ? sizes.batch
                   : dim == layout.height() ? sizes.height
                                            : sizes.width);
  }
  return dims;
}

/// `value` expanded to `type` along `groups`; with several run-time sizes in
/// one group (memref's expand_shape takes one), a tensor.reshape given the
/// whole shape (`sizes`, one per dimension of `type`).
Value expandTo(OpBuilder &b, Location loc, Value value, RankedTensorType type,
               ArrayRef<ReassociationIndices> groups, ArrayRef<Value> sizes) {
  bool inferable = llvm::all_of(groups, [&](const ReassociationIndices &group) {
    return llvm::count_if(group, [&](int64_t dim) {
             return type.isDynamicDim(dim);
           }) <= 1;
  });
  if (inferable)
    return tensor::ExpandShapeOp::create(b, loc, type, value, groups);
  Value shape = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({type.getRank()}, b.getIndexType()), sizes);
  return tensor::ReshapeOp::create(b, loc, type, value, shape);
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

struct Conv2dLowering : OpConversionPattern<Conv2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(Conv2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Layout2d layout{op.getLayout() == "NCHW"};
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    auto accType4d = resultType.clone(accType);

    Value input = padSpatially(rewriter, loc, adaptor.getInput(), layout,
                               op.getPadding(),
                               constantScalar(rewriter, loc, elementType, 0));
    Value filter = adaptor.getFilter();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto filterType = cast<RankedTensorType>(filter.getType());
    int64_t kH = filterType.getDimSize(layout.nchw ? 2 : 0);
    int64_t kW = filterType.getDimSize(layout.nchw ? 3 : 1);
    WindowSizes sizes = windowSizes(rewriter, loc, input, resultType, layout,
                                    {kH, kW}, op.getStrides(), op.getDilations());
    Value init = filledTensor(rewriter, loc, accType4d,
                              dynamicWindowSizes(resultType, layout, sizes),
                              constantScalar(rewriter, loc, accType, 0));
    int64_t groups = op.getGroups();
    int64_t channels = inputType.getDimSize(layout.channel());
    int64_t filters = resultType.getDimSize(layout.channel());
    auto strides = pairAttr(rewriter, op.getStrides());
    auto dilations = pairAttr(rewriter, op.getDilations());

    Value conv;
    StrategyAttr strategy = strategyFor(op);
    if (groups == 1 && strategy.getKind() == StrategyKind::Im2colGemm) {
      Value bias = adaptor.getBias();
      rewriter.replaceOp(op, finishAccumulation(
                                 rewriter, loc,
                                 im2colConvolution(rewriter, loc, layout, input,
                                                   filter, bias, resultType,
                                                   accType, op.getStrides(),
                                                   op.getDilations(), strategy,
                                                   sizes),
                                 elementType));
      return success();
    }
    if (groups == 1) {
      if (layout.nchw)
        conv = linalg::Conv2DNchwFchwOp::create(rewriter, loc, accType4d,
                                                ValueRange{input, filter},
                                                ValueRange{init}, strides,
                                                dilations)
                   .getResult(0);
      else
        conv = linalg::Conv2DNhwcHwcfOp::create(rewriter, loc, accType4d,
                                                ValueRange{input, filter},
                                                ValueRange{init}, strides,
                                                dilations)
                   .getResult(0);
    } else if (groups == channels && filters == channels) {
      // One filter per channel: drop the filter's size-1 channel dimension.
      SmallVector<ReassociationIndices> groupsOfDims =
          layout.nchw ? SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}
                      : SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}};
      Value depthwiseFilter =
          tensor::CollapseShapeOp::create(rewriter, loc, filter, groupsOfDims);
      if (layout.nchw)
        conv = linalg::DepthwiseConv2DNchwChwOp::create(
                   rewriter, loc, accType4d, ValueRange{input, depthwiseFilter},
                   ValueRange{init}, strides, dilations)
                   .getResult(0);
      else
        conv = linalg::DepthwiseConv2DNhwcHwcOp::create(
                   rewriter, loc, accType4d, ValueRange{input, depthwiseFilter},
                   ValueRange{init}, strides, dilations)
                   .getResult(0);
    } else {
      conv = groupedConvolution(rewriter, loc, layout, input, filter, init,
                                groups, op.getStrides(), op.getDilations(),
                                filterType);
    }
    carryStrategy(conv, strategy);
    if (Value bias = adaptor.getBias()) {
      int64_t channelDim = layout.channel();
      auto accTensor = cast<RankedTensorType>(conv.getType());
      MLIRContext *ctx = rewriter.getContext();
      AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
      AffineMap channelMap = AffineMap::get(4, 0, getAffineDimExpr(channelDim, ctx));
      Value biasInit = emptyTensor(rewriter, loc, accTensor,
                                   dynamicSizesOf(rewriter, loc, conv));
      conv = linalg::GenericOp::create(
                 rewriter, loc, accTensor, ValueRange{conv, bias},
                 ValueRange{biasInit},
                 ArrayRef<AffineMap>{identity, channelMap, identity},
                 SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
                 [&](OpBuilder &b, Location l, ValueRange args) {
                   linalg::YieldOp::create(
                       b, l,
                       arith::AddFOp::create(b, l, args[0],
                                             convertFloat(b, l, args[1], accType))
                           .getResult());
                 })
                 .getResult(0);
    }
    rewriter.replaceOp(op, finishAccumulation(rewriter, loc, conv, elementType));
    return success();
  }

  /// im2col + GEMM. The patches of the (padded) input become a matrix laid
  /// out so that it is written contiguously (a 6-D linalg.generic whose
  /// indexing map gathers the input, collapsed), and a GEMM against the
  /// filter as it lies computes [N, OH*OW, F], plus the bias:
  ///  - NCHW: col[n, (oh, ow), (c, kh, kw)] = x[n, c, oh*sh + kh*dh,
  ///    ow*sw + kw*dw], written contiguously along kw (the 3x3 windows of
  ///    neighbouring pixels overlap, so the reads stay in cache); out[n, p,
  ///    f] += col[n, p, k] * W[f, k] (the OIHW filter is a transposed B,
  ///    packed by dl-affine-register-tile), transposed to [N, F, OH, OW].
  ///  - NHWC: col[n, (oh, ow), (kh, kw, c)], contiguous along c;
  ///    out[n*p, f] = col x W[(kh, kw, c), f] (HWIO as it lies).
  /// Either way the GEMM's columns are the filters (a multiple of the
  /// micro-kernel's width in real networks) and its rows the output pixels.
  static Value im2colConvolution(OpBuilder &b, Location loc, Layout2d layout,
                                 Value input, Value filter, Value bias,
                                 RankedTensorType resultType, Type accType,
                                 ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations,
                                 StrategyAttr strategy,
                                 const WindowSizes &sizes) {
    MLIRContext *ctx = b.getContext();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto filterType = cast<RankedTensorType>(filter.getType());
    int64_t channels = inputType.getDimSize(layout.channel());
    int64_t filters = resultType.getDimSize(layout.channel());
    int64_t outH = resultType.getDimSize(layout.height());
    int64_t outW = resultType.getDimSize(layout.width());
    int64_t kH = filterType.getDimSize(layout.nchw ? 2 : 0);
    int64_t kW = filterType.getDimSize(layout.nchw ? 3 : 1);
    int64_t batch = resultType.getDimSize(0);
    bool dynamicImage =
        ShapedType::isDynamic(outH) || ShapedType::isDynamic(outW);
    int64_t pixels = dynamicImage ? ShapedType::kDynamic : outH * outW;
    // The run-time sizes of the batch, the image and the pixel count.
    Value pixelCount = arith::MulIOp::create(b, loc, sizes.height, sizes.width);
    auto dynamicOf = [](RankedTensorType type, ArrayRef<Value> all) {
      SmallVector<Value> dims;
      for (auto [dim, value] : llvm::enumerate(all))
        if (type.isDynamicDim(dim))
          dims.push_back(value);
      return dims;
    };
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    // The 6-D patch tensor of `type`, element (n, oh, ow, ...) read from
    // the input at `gather`, written contiguously.
    auto gatherPatches = [&](RankedTensorType type, AffineMap gather) -> Value {
      return linalg::GenericOp::create(
                 b, loc, type, ValueRange{input},
                 ValueRange{emptyTensor(
                     b, loc, type,
                     dynamicOf(type, {sizes.batch, sizes.height, sizes.width}))},
                 ArrayRef<AffineMap>{gather,
                                     AffineMap::getMultiDimIdentityMap(6, ctx)},
                 SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
                 [](OpBuilder &nested, Location l, ValueRange args) {
                   linalg::YieldOp::create(nested, l, args[0]);
                 })
          .getResult(0);
    };
    auto multiplyAdd = [&](OpBuilder &nested, Location l, ValueRange args) {
      Value x = convertFloat(nested, l, args[0], accType);
      Value y = convertFloat(nested, l, args[1], accType);
      Value xy = arith::MulFOp::create(nested, l, x, y);
      linalg::YieldOp::create(
          nested, l, arith::AddFOp::create(nested, l, args[2], xy).getResult());
    };
    // result = product (read through `productMap`, identity by default) +
    // bias along dimension `biasDim` of the result (the last by default).
    auto addBias = [&](Value product, RankedTensorType type,
                       ArrayRef<Value> dims, AffineMap productMap = {},
                       int64_t biasDim = -1) -> Value {
      if (!bias)
        return product;
      unsigned rank = type.getRank();
      AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
      return linalg::GenericOp::create(
                 b, loc, type, ValueRange{product, bias},
                 ValueRange{emptyTensor(b, loc, type, dims)},
                 ArrayRef<AffineMap>{
                     productMap ? productMap : identity,
                     AffineMap::get(rank, 0, d(biasDim < 0 ? rank - 1 : biasDim),
                                    ctx),
                     identity},
                 SmallVector<utils::IteratorType>(rank,
                                                  utils::IteratorType::parallel),
                 [&](OpBuilder &nested, Location l, ValueRange args) {
                   linalg::YieldOp::create(
                       nested, l,
                       arith::AddFOp::create(
                           nested, l, args[0],
                           convertFloat(nested, l, args[1], accType))
                           .getResult());
                 })
          .getResult(0);
    };
    Type element = inputType.getElementType();

    if (layout.nchw) {
      auto col6Type = RankedTensorType::get(
          {batch, outH, outW, channels, kH, kW}, element);
      AffineMap gather = AffineMap::get(
          6, 0,
          {d(0), d(3), d(1) * strides[0] + d(4) * dilations[0],
           d(2) * strides[1] + d(5) * dilations[1]},
          ctx);
      Value col6 = gatherPatches(col6Type, gather);
      Value col = tensor::CollapseShapeOp::create(
          b, loc, col6, SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
      Value weights = tensor::CollapseShapeOp::create(
          b, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
      auto gemmType = RankedTensorType::get({batch, pixels, filters}, accType);
      SmallVector<Value> gemmDims =
          dynamicOf(gemmType, {sizes.batch, pixelCount});
      Value zeros = filledTensor(b, loc, gemmType, gemmDims,
                                 constantScalar(b, loc, accType, 0));
      // (n, p, f, k): out[n, p, f] += col[n, p, k] * W[f, k]
      Value product =
          linalg::GenericOp::create(
              b, loc, gemmType, ValueRange{col, weights}, ValueRange{zeros},
              ArrayRef<AffineMap>{AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx),
                                  AffineMap::get(4, 0, {d(2), d(3)}, ctx),
                                  AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)},
              SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                               utils::IteratorType::parallel,
                                               utils::IteratorType::parallel,
                                               utils::IteratorType::reduction},
              multiplyAdd)
              .getResult(0);
      carryStrategy(product, strategy);
      auto transposedType =
          RankedTensorType::get({batch, filters, pixels}, accType);
      // With a bias, out[n, f, p] = product[n, p, f] + bias[f]: the kernel
      // that transposes back adds it (one pass over the result, and an
      // activation after it fuses into that same kernel).
      SmallVector<Value> transposedDims = gemmDims;
      Value transposed =
          bias ? addBias(product, transposedType, transposedDims,
                         AffineMap::get(3, 0, {d(0), d(2), d(1)}, ctx),
                         /*biasDim=*/1)
               : linalg::TransposeOp::create(
                     b, loc, product,
                     emptyTensor(b, loc, transposedType, transposedDims),
                     ArrayRef<int64_t>{0, 2, 1})
                     .getResult()[0];
      return expandTo(b, loc, transposed, resultType.clone(accType),
                      {{0}, {1}, {2, 3}},
                      {sizes.batch,
                       arith::ConstantIndexOp::create(b, loc, filters),
                       sizes.height, sizes.width});
    }

    Value col;
    if (kH == 1 && kW == 1 && strides[0] == 1 && strides[1] == 1) {
      // A 1x1 kernel at stride 1: the (padded) input is the patch matrix.
      col = tensor::CollapseShapeOp::create(
          b, loc, input, SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});
    } else {
      auto col6Type = RankedTensorType::get(
          {batch, outH, outW, kH, kW, channels}, element);
      AffineMap gather = AffineMap::get(
          6, 0,
          {d(0), d(1) * strides[0] + d(3) * dilations[0],
           d(2) * strides[1] + d(4) * dilations[1], d(5)},
          ctx);
      Value col6 = gatherPatches(col6Type, gather);
      col = tensor::CollapseShapeOp::create(
          b, loc, col6, SmallVector<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
    }
    Value weights = tensor::CollapseShapeOp::create(
        b, loc, filter, SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});
    int64_t rows = ShapedType::isDynamic(batch) || dynamicImage
                       ? ShapedType::kDynamic
                       : batch * pixels;
    auto gemmType = RankedTensorType::get({rows, filters}, accType);
    SmallVector<Value> rowDims;
    if (ShapedType::isDynamic(rows))
      rowDims.push_back(tensor::DimOp::create(b, loc, col, 0));
    Value product =
        linalg::MatmulOp::create(
            b, loc, TypeRange{gemmType}, ValueRange{col, weights},
            ValueRange{filledTensor(b, loc, gemmType, rowDims,
                                    constantScalar(b, loc, accType, 0))})
            .getResult(0);
    carryStrategy(product, strategy);
    product = addBias(product, gemmType, rowDims);
    return expandTo(b, loc, product, resultType.clone(accType),
                    {{0, 1, 2}, {3}},
                    {sizes.batch, sizes.height, sizes.width,
                     arith::ConstantIndexOp::create(b, loc, filters)});
  }

  /// A grouped convolution as a linalg.generic on views that split the
  /// channel dimensions into (group, channel-in-group): input [N, G, C/G, H, W]
  /// (or [N, H, W, G, C/G]), filter [G, F/G, C/G, KH, KW] (or
  /// [KH, KW, C/G, G, F/G]), result [N, G, F/G, OH, OW] (or [N, OH, OW, G, F/G]).
  static Value groupedConvolution(OpBuilder &b, Location loc, Layout2d layout,
                                  Value input, Value filter, Value init,
                                  int64_t groups, ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations,
                                  RankedTensorType filterType) {
    MLIRContext *ctx = b.getContext();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto initType = cast<RankedTensorType>(init.getType());
    auto split = [&](Value value, RankedTensorType type, int64_t dim,
                     int64_t outer) {
      SmallVector<int64_t> shape;
      SmallVector<ReassociationIndices> reassociation;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        int64_t first = shape.size();
        if (d == dim) {
          shape.push_back(outer);
          shape.push_back(type.getDimSize(d) / outer);
          reassociation.push_back({first, first + 1});
        } else {
          shape.push_back(type.getDimSize(d));
          reassociation.push_back({first});
        }
      }
      return tensor::ExpandShapeOp::create(b, loc, type.clone(shape), value,
                                           reassociation)
          .getResult();
    };
    int64_t filterOutDim = layout.nchw ? 0 : 3;
    Value groupedInput = split(input, inputType, layout.channel(), groups);
    Value groupedFilter = split(filter, filterType, filterOutDim, groups);
    Value groupedInit = split(init, initType, layout.channel(), groups);

    // Loops: n, g, f, oh, ow, then the window and the channels of the
    // group: c innermost in NHWC (contiguous in the input and the filter;
    // with kw innermost LLVM unrolled the 3x3 window around a 4 x 3 tile and
    // spilled accumulators: 0.76 against 0.33 ms for 28x28x120 in 5 groups
    // on Zen 3), c, kh, kw in NCHW (kw walks the input's contiguous w).
    const bool nchw = layout.nchw;
    const unsigned N = 0, G = 1, F = 2, OH = 3, OW = 4, C = nchw ? 5 : 7,
                   KH = nchw ? 6 : 5, KW = nchw ? 7 : 6, NumLoops = 8;
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    AffineExpr h = d(OH) * strides[0] + d(KH) * dilations[0];
    AffineExpr w = d(OW) * strides[1] + d(KW) * dilations[1];
    SmallVector<AffineExpr> inputExprs, filterExprs, outputExprs;
    if (layout.nchw) {
      inputExprs = {d(N), d(G), d(C), h, w};
      filterExprs = {d(G), d(F), d(C), d(KH), d(KW)};
      outputExprs = {d(N), d(G), d(F), d(OH), d(OW)};
    } else {
      inputExprs = {d(N), h, w, d(G), d(C)};
      filterExprs = {d(KH), d(KW), d(C), d(G), d(F)};
      outputExprs = {d(N), d(OH), d(OW), d(G), d(F)};
    }
    SmallVector<AffineMap> maps = {AffineMap::get(NumLoops, 0, inputExprs, ctx),
                                   AffineMap::get(NumLoops, 0, filterExprs, ctx),
                                   AffineMap::get(NumLoops, 0, outputExprs, ctx)};
    SmallVector<utils::IteratorType> iterators(NumLoops,
                                               utils::IteratorType::parallel);
    for (unsigned loop : {C, KH, KW})
      iterators[loop] = utils::IteratorType::reduction;
    Type accType = initType.getElementType();
    Value grouped =
        linalg::GenericOp::create(
            b, loc, groupedInit.getType(), ValueRange{groupedInput, groupedFilter},
            ValueRange{groupedInit}, maps, iterators,
            [&](OpBuilder &nested, Location l, ValueRange args) {
              Value product = arith::MulFOp::create(
                  nested, l, convertFloat(nested, l, args[0], accType),
                  convertFloat(nested, l, args[1], accType));
              linalg::YieldOp::create(
                  nested, l,
                  arith::AddFOp::create(nested, l, args[2], product).getResult());
            })
            .getResult(0);
    SmallVector<ReassociationIndices> merge =
        layout.nchw ? SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}}
                    : SmallVector<ReassociationIndices>{{0}, {1}, {2}, {3, 4}};
    return tensor::CollapseShapeOp::create(b, loc, grouped, merge);
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct MaxPool2dLowering : OpConversionPattern<MaxPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MaxPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Layout2d layout{op.getLayout() == "NCHW"};
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    Value lowest = lowestValue(rewriter, loc, elementType);
    Value input = padSpatially(rewriter, loc, adaptor.getInput(), layout,
                               op.getPadding(), lowest);
    WindowSizes sizes = windowSizes(rewriter, loc, input, resultType, layout,
                                    op.getKernel(), op.getStrides(), {1, 1});
    Value init = filledTensor(rewriter, loc, resultType,
                              dynamicWindowSizes(resultType, layout, sizes),
                              lowest);
    Value window = tensor::EmptyOp::create(rewriter, loc, op.getKernel(), elementType);
    SmallVector<NamedAttribute> attrs = {
        rewriter.getNamedAttr("strides", pairAttr(rewriter, op.getStrides())),
        rewriter.getNamedAttr("dilations", pairAttr(rewriter, {1, 1}))};
    Value pooled =
        layout.nchw
            ? linalg::PoolingNchwMaxOp::create(rewriter, loc, resultType,
                                               ValueRange{input, window},
                                               ValueRange{init}, attrs)
                  .getResult(0)
            : linalg::PoolingNhwcMaxOp::create(rewriter, loc, resultType,
                                               ValueRange{input, window},
                                               ValueRange{init}, attrs)
                  .getResult(0);
    rewriter.replaceOp(op, pooled);
    return success();
  }
};

struct AvgPool2dLowering : OpConversionPattern<AvgPool2dOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AvgPool2dOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Layout2d layout{op.getLayout() == "NCHW"};
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    Type accType = accumulatorType(elementType);
    auto accTensor = resultType.clone(accType);
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      padding = op.getPadding();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());

    Value unpadded = adaptor.getInput();
    Value input = padSpatially(rewriter, loc, unpadded, layout, padding,
                               constantScalar(rewriter, loc, elementType, 0));
    WindowSizes sizes = windowSizes(rewriter, loc, input, resultType, layout,
                                    kernel, strides, {1, 1});
    SmallVector<Value> resultDims = dynamicWindowSizes(resultType, layout, sizes);
    Value init = filledTensor(rewriter, loc, accTensor, resultDims,
                              constantScalar(rewriter, loc, accType, 0));
    Value window = tensor::EmptyOp::create(rewriter, loc, kernel, elementType);
    SmallVector<NamedAttribute> attrs = {
        rewriter.getNamedAttr("strides", pairAttr(rewriter, strides)),
        rewriter.getNamedAttr("dilations", pairAttr(rewriter, {1, 1}))};
    Value sums =
        layout.nchw
            ? linalg::PoolingNchwSumOp::create(rewriter, loc, accTensor,
                                               ValueRange{input, window},
                                               ValueRange{init}, attrs)
                  .getResult(0)
            : linalg::PoolingNhwcSumOp::create(rewriter, loc, accTensor,
                                               ValueRange{input, window},
                                               ValueRange{init}, attrs)
                  .getResult(0);

    // Divisors per output position [OH, OW]: the window size, or the number
    // of non-padding elements the window covers: a constant table for a
    // static image, computed from the position for a run-time one.
    int64_t outH = resultType.getDimSize(layout.height());
    int64_t outW = resultType.getDimSize(layout.width());
    MLIRContext *ctx = rewriter.getContext();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
    Value resultInit = emptyTensor(rewriter, loc, resultType, resultDims);
    auto divide = [&](OpBuilder &b, Location l, Value sum, Value divisor) {
      Value quotient = arith::DivFOp::create(b, l, sum, divisor);
      linalg::YieldOp::create(b, l, convertFloat(b, l, quotient, elementType));
    };
    bool countAll = op.getCountIncludePad();
    if (ShapedType::isDynamic(outH) || ShapedType::isDynamic(outW)) {
      Value heightSize =
          tensor::DimOp::create(rewriter, loc, unpadded, layout.height());
      Value widthSize =
          tensor::DimOp::create(rewriter, loc, unpadded, layout.width());
      Value mean =
          linalg::GenericOp::create(
              rewriter, loc, resultType, ValueRange{sums}, ValueRange{resultInit},
              ArrayRef<AffineMap>{identity, identity},
              SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
              [&](OpBuilder &b, Location l, ValueRange args) {
                auto index = [&](int64_t v) {
                  return arith::ConstantIndexOp::create(b, l, v).getResult();
                };
                // min(start + k, size) - max(start, 0), start = out*s - pad
                auto covered = [&](int64_t dim, int axis, Value size) {
                  if (countAll)
                    return index(kernel[axis]);
                  // (one statement per op: a fixed order of the IR)
                  Value out = linalg::IndexOp::create(b, l, dim);
                  Value stride = index(strides[axis]);
                  Value pad = index(padding[2 * axis]);
                  Value window = index(kernel[axis]);
                  Value zero = index(0);
                  Value offset = arith::MulIOp::create(b, l, out, stride);
                  Value start = arith::SubIOp::create(b, l, offset, pad);
                  Value reach = arith::AddIOp::create(b, l, start, window);
                  Value end = arith::MinSIOp::create(b, l, reach, size);
                  Value begin = arith::MaxSIOp::create(b, l, start, zero);
                  return arith::SubIOp::create(b, l, end, begin).getResult();
                };
                Value rows = covered(layout.height(), 0, heightSize);
                Value columns = covered(layout.width(), 1, widthSize);
                Value count = arith::MulIOp::create(b, l, rows, columns);
                Value divisor = arith::SIToFPOp::create(
                    b, l, accType,
                    arith::IndexCastOp::create(b, l, b.getI64Type(), count));
                divide(b, l, args[0], divisor);
              })
              .getResult(0);
      rewriter.replaceOp(op, mean);
      return success();
    }
    int64_t height = inputType.getDimSize(layout.height());
    int64_t width = inputType.getDimSize(layout.width());
    auto covered = [](int64_t out, int64_t stride, int64_t pad, int64_t k,
                      int64_t size) {
      int64_t start = out * stride - pad;
      return std::min(start + k, size) - std::max<int64_t>(start, 0);
    };
    SmallVector<APFloat> divisors;
    for (int64_t oh = 0; oh < outH; ++oh)
      for (int64_t ow = 0; ow < outW; ++ow) {
        double count =
            countAll
                ? static_cast<double>(kernel[0] * kernel[1])
                : static_cast<double>(
                      covered(oh, strides[0], padding[0], kernel[0], height) *
                      covered(ow, strides[1], padding[2], kernel[1], width));
        APFloat value(count);
        bool lost;
        value.convert(cast<FloatType>(accType).getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &lost);
        divisors.push_back(value);
      }
    auto divisorType = RankedTensorType::get({outH, outW}, accType);
    Value divisorTable = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(divisorType, divisors));
    AffineMap spatial = AffineMap::get(
        4, 0,
        {getAffineDimExpr(layout.height(), ctx), getAffineDimExpr(layout.width(), ctx)},
        ctx);
    Value mean =
        linalg::GenericOp::create(
            rewriter, loc, resultType, ValueRange{sums, divisorTable},
            ValueRange{resultInit}, ArrayRef<AffineMap>{identity, spatial, identity},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange args) {
              divide(b, l, args[0], args[1]);
            })
            .getResult(0);
    rewriter.replaceOp(op, mean);
    return success();
  }
};

} // namespace

void lowering::populateStructuredPatterns(const TypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<MatmulLowering<MatmulOp>, MatmulLowering<MatmulIntegerOp>,
               Conv2dLowering, MaxPool2dLowering,
               AvgPool2dLowering>(converter, patterns.getContext());
}
