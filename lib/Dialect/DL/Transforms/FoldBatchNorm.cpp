//===- FoldBatchNorm.cpp - dl-fold-batchnorm ------------------------------===//
//
// Inference batch normalization folded into the convolution or matrix
// product that feeds it:
//
//   bn(conv(x, w, b)) = conv(x, w * s, (b - mean) * s + beta),
//   s = gamma / sqrt(var + eps), s laid along the filter's output channels;
//
// and likewise for x @ w (+ b) normalized over its last (feature) axis, the
// layout of dlc.nn.Linear followed by a 1-D batch norm. The new weights and
// bias are dl ops on the old ones, so when the parameters are constants the
// folders (DLFolds.cpp) turn them into new constants and the batch norm costs
// nothing at run time. Left alone: a producer with other users (it would be
// computed twice), a batch norm over another axis than the output channels,
// mixed element types, and biases that are not [F]. Upstream MLIR has no
// such pass (it has no batch-norm op at this level).
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"
#include "dl/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLFOLDBATCHNORM
#include "dl/Transforms/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

Type elementTypeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

/// s = gamma * rsqrt(var + eps) and the new bias (b - mean) * s + beta
/// (b = 0 when absent), as dl ops.
std::pair<Value, Value> scaleAndBias(PatternRewriter &rewriter, Location loc,
                                     BatchNormOp norm, Value bias) {
  auto scalarType = RankedTensorType::get({}, elementTypeOf(norm.getInput()));
  APFloat epsilon(norm.getEpsilon().convertToDouble());
  bool losesInfo;
  epsilon.convert(cast<FloatType>(scalarType.getElementType()).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &losesInfo);
  Value eps = ConstantOp::create(rewriter, loc,
                                 DenseElementsAttr::get(scalarType, epsilon));
  Value scale = MulOp::create(
      rewriter, loc, norm.getGamma(),
      RsqrtOp::create(rewriter, loc,
                      AddOp::create(rewriter, loc, norm.getVariance(), eps)));
  Value centered = bias ? Value(SubOp::create(rewriter, loc, bias, norm.getMean()))
                        : Value(NegOp::create(rewriter, loc, norm.getMean()));
  Value newBias = AddOp::create(rewriter, loc,
                                MulOp::create(rewriter, loc, centered, scale),
                                norm.getBeta());
  return {scale, newBias};
}

bool sameElementTypes(BatchNormOp norm, ArrayRef<Value> others) {
  Type element = elementTypeOf(norm.getInput());
  SmallVector<Value> values = {norm.getMean(), norm.getVariance(),
                               norm.getGamma(), norm.getBeta()};
  llvm::append_range(values, others);
  return llvm::all_of(values, [&](Value value) {
    return !value || elementTypeOf(value) == element;
  });
}

bool isVectorOf(Value value, int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getRank() == 1 && type.getDimSize(0) == size;
}

struct FoldIntoConv : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp norm,
                                PatternRewriter &rewriter) const override {
    auto conv = norm.getInput().getDefiningOp<Conv2dOp>();
    if (!conv)
      return rewriter.notifyMatchFailure(norm, "not fed by a conv2d");
    if (!conv->hasOneUse())
      return rewriter.notifyMatchFailure(norm, "the conv2d has other users");
    bool nchw = conv.getLayout() == "NCHW";
    if (norm.getAxis() != (nchw ? 1 : 3))
      return rewriter.notifyMatchFailure(norm, "not over the output channels");
    if (!sameElementTypes(norm, {conv.getFilter(), conv.getBias()}))
      return rewriter.notifyMatchFailure(norm, "mixed element types");
    auto filterType = cast<RankedTensorType>(conv.getFilter().getType());
    int64_t features = filterType.getDimSize(nchw ? 0 : 3);
    if (conv.getBias() && !isVectorOf(conv.getBias(), features))
      return rewriter.notifyMatchFailure(norm, "bias is not [F]");

    // The convolution's line first: a profile (dlc.profile) or a diagnostic
    // of the folded op names the layer, then its norm.
    Location loc = rewriter.getFusedLoc({conv.getLoc(), norm.getLoc()});
    auto [scale, bias] = scaleAndBias(rewriter, loc, norm, conv.getBias());
    // NCHW filters are [F, C, KH, KW]: the scale goes along dimension 0;
    // NHWC filters are [KH, KW, C, F]: it broadcasts along the last one.
    Value alongFeatures =
        nchw ? Value(ReshapeOp::create(rewriter, loc, scale,
                                       ArrayRef<int64_t>{features, 1, 1, 1}))
             : scale;
    Value filter = MulOp::create(rewriter, loc, conv.getFilter(), alongFeatures);
    rewriter.replaceOpWithNewOp<Conv2dOp>(
        norm, conv.getInput(), filter, bias, conv.getStridesAttr(),
        conv.getPaddingAttr(), conv.getDilationsAttr(), conv.getGroupsAttr(),
        conv.getLayoutAttr());
    rewriter.eraseOp(conv);
    return success();
  }
};

/// x @ w (+ b) followed by a batch norm over the last axis of a 2-D result.
struct FoldIntoMatmul : OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp norm,
                                PatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(norm.getType());
    if (resultType.getRank() != 2 || norm.getAxis() != 1)
      return rewriter.notifyMatchFailure(norm, "not over the features of a matrix");
    Value oldBias;
    Operation *producer = norm.getInput().getDefiningOp();
    auto add = dyn_cast_if_present<AddOp>(producer);
    MatmulOp matmul;
    if (add) {
      matmul = add.getLhs().getDefiningOp<MatmulOp>();
      oldBias = add.getRhs();
      if (!matmul) {
        matmul = add.getRhs().getDefiningOp<MatmulOp>();
        oldBias = add.getLhs();
      }
    } else {
      matmul = dyn_cast_if_present<MatmulOp>(producer);
    }
    if (!matmul)
      return rewriter.notifyMatchFailure(norm, "not fed by a matmul (+ bias)");
    if (!producer->hasOneUse() || (add && !matmul->hasOneUse()))
      return rewriter.notifyMatchFailure(norm, "the product has other users");
    int64_t features = resultType.getDimSize(1);
    if (cast<RankedTensorType>(matmul.getType()).getRank() != 2 ||
        (oldBias && !isVectorOf(oldBias, features)))
      return rewriter.notifyMatchFailure(norm, "bias is not [F]");
    if (!sameElementTypes(norm, {matmul.getLhs(), matmul.getRhs(), oldBias}))
      return rewriter.notifyMatchFailure(norm, "mixed element types");

    Location loc = rewriter.getFusedLoc({matmul.getLoc(), norm.getLoc()});
    auto [scale, bias] = scaleAndBias(rewriter, loc, norm, oldBias);
    // w is [K, F]: the [F] scale broadcasts along its rows.
    Value weights = MulOp::create(rewriter, loc, matmul.getRhs(), scale);
    Value product = MatmulOp::create(rewriter, loc, matmul.getLhs(), weights);
    rewriter.replaceOpWithNewOp<AddOp>(norm, product, bias);
    if (add)
      rewriter.eraseOp(add);
    rewriter.eraseOp(matmul);
    return success();
  }
};

struct DLFoldBatchNormPass
    : public dl::impl::DLFoldBatchNormBase<DLFoldBatchNormPass> {
  using DLFoldBatchNormBase::DLFoldBatchNormBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoConv, FoldIntoMatmul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
