//===- DLCanonicalize.cpp - dl canonicalization patterns ------------------===//
//
// Rewrites that create ops (the folders in DLFolds.cpp only return existing
// values or attributes):
// - reshape(reshape(x)) -> reshape(x): the inner reshape is skipped (kept
//   when only it knows the run-time sizes);
// - transpose(a) @ transpose(b) -> transpose(b @ a) when both transposes swap
//   the two matrix dimensions, feed only this matmul, and the one transpose
//   of the M x N result moves fewer elements than the two of the operands
//   (M*N <= M*K + K*N).
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::dl;

namespace {

struct ReshapeOfReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    // Element counts match along the chain. The outer reshape's size
    // operands, if any, give every dynamic size; without them the static
    // parts divide transitively when the inner one had none either, so the
    // single reshape is valid and has the outer result type. (An outer -1
    // after an inner reshape of run-time sizes need not divide the original
    // static part: [?, 6] -> [?, ?, 4] -> [-1, 4].)
    if (op.getSizes().empty() && !inner.getSizes().empty())
      return rewriter.notifyMatchFailure(op, "the inner sizes are needed");
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput(),
                                           op.getShapeAttr(), op.getSizes());
    return success();
  }
};

/// Whether `value` is a transpose swapping the last two dimensions (batch
/// dimensions unchanged) used only once.
TransposeOp matrixTranspose(Value value) {
  auto transpose = value.getDefiningOp<TransposeOp>();
  if (!transpose || !transpose->hasOneUse())
    return {};
  ArrayRef<int64_t> perm = transpose.getPermutation();
  int64_t rank = perm.size();
  if (rank < 2)
    return {};
  for (int64_t d = 0; d < rank - 2; ++d)
    if (perm[d] != d)
      return {};
  if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return {};
  return transpose;
}

struct MatmulOfTransposes : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    TransposeOp lhs = matrixTranspose(op.getLhs());
    TransposeOp rhs = matrixTranspose(op.getRhs());
    if (!lhs || !rhs || lhs == rhs)
      return rewriter.notifyMatchFailure(op, "operands are not both transposed");
    auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
    auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
    if (lhsType.getRank() != rhsType.getRank() ||
        lhsType.getShape().drop_back(2) != rhsType.getShape().drop_back(2))
      return rewriter.notifyMatchFailure(op, "batch dimensions differ");
    int64_t rank = lhsType.getRank();
    int64_t m = lhsType.getDimSize(rank - 2), k = lhsType.getDimSize(rank - 1),
            n = rhsType.getDimSize(rank - 1);
    if (ShapedType::isDynamic(m) || ShapedType::isDynamic(k) ||
        ShapedType::isDynamic(n) || m * n > m * k + k * n)
      return rewriter.notifyMatchFailure(op, "no work saved");
    Location loc = op.getLoc();
    Value product = MatmulOp::create(rewriter, loc, rhs.getInput(), lhs.getInput());
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(perm[rank - 2], perm[rank - 1]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, product, perm);
    return success();
  }
};

} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ReshapeOfReshape>(context);
}

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<MatmulOfTransposes>(context);
}
