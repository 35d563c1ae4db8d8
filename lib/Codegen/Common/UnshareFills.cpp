//===- UnshareFills.cpp - dl-unshare-fills --------------------------------===//
//
// Before one-shot bufferization: one fill or tensor.empty per destination,
// and pads as fill + insert_slice (see Passes.td). Ours for the fills and
// empties (upstream has no such rewrite: its bufferization resolves a shared
// fill with a copy, and a shared empty costs its analysis quadratic time);
// ours for static pads (only the border filled, then the source inserted:
// upstream's DecomposePadOpPattern fills the whole padded tensor before the
// source is written over its interior), upstream's for the others.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLUNSHAREFILLS
#include "dl/Codegen/Common/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// tensor.pad of static sizes with a constant value -> each border slab of
/// an empty tensor of the padded shape filled, then the source inserted:
/// for dimension d with padding, the slabs [0, low) and [low + size, end)
/// along d, over the interior along the dimensions before d and the whole
/// extent along those after (every border element once). Upstream's
/// decomposition fills the whole tensor first: at MobileNetV3's batch 8 its
/// depthwise convolutions' padded inputs were ~90 MB of fill per call, all
/// but the borders overwritten by the producer right after.
struct DecomposeStaticPadIntoBorderFills : OpRewritePattern<tensor::PadOp> {
  DecomposeStaticPadIntoBorderFills(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = pad.getResultType();
    RankedTensorType sourceType = pad.getSourceType();
    Value value = pad.getConstantPaddingValue();
    if (!type.hasStaticShape() || !sourceType.hasStaticShape() || !value)
      return rewriter.notifyMatchFailure(pad, "dynamic sizes or padding value");
    SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
    if (llvm::any_of(low, ShapedType::isDynamic) ||
        llvm::any_of(high, ShapedType::isDynamic) ||
        llvm::any_of(low, [](int64_t v) { return v < 0; }) ||
        llvm::any_of(high, [](int64_t v) { return v < 0; }))
      return rewriter.notifyMatchFailure(pad, "dynamic or negative padding");
    // A constant made inside the pad's body: moved before it (as upstream).
    if (value.getParentBlock() == &pad.getRegion().front())
      rewriter.moveOpBefore(value.getDefiningOp(), pad);
    Location loc = pad.getLoc();
    ArrayRef<int64_t> shape = type.getShape(), size = sourceType.getShape();
    int64_t rank = type.getRank();
    Type element = type.getElementType();
    auto attrs = [&](ArrayRef<int64_t> values) {
      return getAsIndexOpFoldResult(rewriter.getContext(), values);
    };
    SmallVector<int64_t> ones(rank, 1);
    // The borders first, the source last (as upstream's fill, then insert):
    // a border written after the interior, one-shot bufferization could not
    // tell from a write over the source's value while a later op (a
    // residual add) still read it, and copied the source out of place.
    Value result = tensor::EmptyOp::create(rewriter, loc, shape, element);
    for (int64_t d = 0; d < rank; ++d) {
      for (bool before : {true, false}) {
        int64_t extent = before ? low[d] : high[d];
        if (extent == 0)
          continue;
        SmallVector<int64_t> offsets(rank, 0), sizes(shape);
        for (int64_t j = 0; j < d; ++j) {
          offsets[j] = low[j];
          sizes[j] = size[j];
        }
        offsets[d] = before ? 0 : low[d] + size[d];
        sizes[d] = extent;
        if (llvm::is_contained(sizes, 0))
          continue;
        Value slab = tensor::EmptyOp::create(rewriter, loc, sizes, element);
        slab = linalg::FillOp::create(rewriter, loc, value, slab).getResult(0);
        result = tensor::InsertSliceOp::create(rewriter, loc, slab, result,
                                               attrs(offsets), attrs(sizes),
                                               attrs(ones));
      }
    }
    result = tensor::InsertSliceOp::create(rewriter, loc, pad.getSource(), result,
                                           attrs(low), attrs(size), attrs(ones));
    rewriter.replaceOp(pad, result);
    return success();
  }
};

struct DLUnshareFillsPass
    : public dl::impl::DLUnshareFillsBase<DLUnshareFillsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeStaticPadIntoBorderFills>(&getContext());
    linalg::populateDecomposePadPatterns(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();

    // Fills on tensors and empty tensors with several uses.
    SmallVector<Operation *> shared;
    func.walk([&](Operation *op) {
      auto fill = dyn_cast<linalg::FillOp>(op);
      if (!(fill && fill.hasPureTensorSemantics()) && !isa<tensor::EmptyOp>(op))
        return;
      if (!op->getResult(0).hasOneUse() && !op->getResult(0).use_empty())
        shared.push_back(op);
    });
    for (Operation *fill : shared) {
      Value result = fill->getResult(0);
      // Only destinations (a fill read as an input is not written over).
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : result.getUses())
        if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
            dps && dps.isDpsInit(&use))
          uses.push_back(&use);
      // A fill: in program order, the first destination keeps the original
      // (while nothing else reads it), each later one gets a clone just
      // before it. Kept for a late one (the use list is in no particular
      // order), the original's buffer lived from the fill to it: a training
      // step's backward convolution took the forward's zero fill, and its
      // buffer stayed alive across the whole step. (Empty tensors keep the
      // use-list order, which one-shot bufferization's in-place choices
      // were tuned with.)
      Block *block = fill->getBlock();
      auto at = [&](OpOperand *use) {
        Operation *top = block->findAncestorOpInBlock(*use->getOwner());
        return top ? top : use->getOwner();
      };
      if (isa<linalg::FillOp>(fill))
        llvm::stable_sort(uses, [&](OpOperand *a, OpOperand *b) {
        Operation *x = at(a), *y = at(b);
        return x != y && x->getBlock() == block && y->getBlock() == block &&
               x->isBeforeInBlock(y);
      });
      bool othersRead = uses.size() < static_cast<size_t>(std::distance(
                                          result.use_begin(), result.use_end()));
      for (OpOperand *use : othersRead ? ArrayRef<OpOperand *>(uses)
                                       : ArrayRef<OpOperand *>(uses).drop_front()) {
        OpBuilder b(use->getOwner());
        Operation *clone = b.clone(*fill);  // operands dominate the use
        // A fill of an empty tensor: its own empty too, just before it, so
        // that its buffer is allocated there and not where the first was.
        if (auto filled = dyn_cast<linalg::FillOp>(clone))
          if (auto empty = filled.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()) {
            b.setInsertionPoint(clone);
            filled.getOutputsMutable()[0].set(b.clone(*empty)->getResult(0));
          }
        use->set(clone->getResult(0));
      }
    }
  }
};

} // namespace
