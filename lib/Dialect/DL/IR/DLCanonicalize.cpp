//===- DLCanonicalize.cpp - dl canonicalization patterns ------------------===//
//
// Rewrites that create ops (the folders in DLFolds.cpp only return existing
// values or attributes):
// - reshape(reshape(x)) -> reshape(x): the inner reshape is skipped (kept
//   when only it knows the run-time sizes);
// - transpose(a) @ transpose(b) -> transpose(b @ a) when both transposes swap
//   the two matrix dimensions, feed only this matmul, and the one transpose
//   of the M x N result moves fewer elements than the two of the operands
//   (M*N <= M*K + K*N);
// - reshape(matmul(reshape(x), w)) -> matmul(x, w) where the inner reshape
//   only flattens x's leading dimensions into rows of a 2-D w and the outer
//   one restores them, and reshape(matmul(reshape(a), reshape(b))) ->
//   matmul(a, b) where both reshapes only regroup the same batch dimensions
//   and the outer one restores them: the forms torch.export gives
//   nn.Linear and batched attention products, written as one N-D matmul as
//   ONNX's MatMul gives them (one graph whatever the frontend); where the
//   two operands regroup their batches differently, the one whose input
//   already has the restored batch dimensions is taken as it is and the
//   other reshaped to them;
// - bitwise and/or/xor of bools -> logical and/or/xor (PyTorch's `&` on
//   masks, ONNX's And);
// - gather of one constant index -> slice + reshape (PyTorch's x[:, 0] is
//   a slice, ONNX's Gather of a scalar index the same view);
// - reshape(gather(x [N, 1], i)) -> gather(reshape(x, [N]), i), and
//   reshape(transpose(reshape(x))) that only merges and splits leading
//   batch dimensions -> transpose(x).
//
//===----------------------------------------------------------------------===//

#include "dl/IR/DLOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

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

/// matmul(a, broadcast_to(w)) -> matmul(a, w) where the broadcast only adds
/// or widens batch dimensions that the product broadcasts anyway (and the
/// same for the lhs). What torch.export makes of a linear layer over a
/// non-contiguous input (`expand` of the weight, then `bmm`: BERT's
/// attention output at batch 8): without it the weight is copied per batch
/// element, a constant 8x its size, and the product is batched instead of
/// one GEMM over packed weights.
struct MatmulOfBatchBroadcast : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The broadcast's input if `value` is a broadcast_to (behind reshapes
  /// to its own shape) that keeps its last two dimensions.
  static Value batchBroadcastInput(Value value) {
    while (auto reshape = value.getDefiningOp<ReshapeOp>()) {
      if (reshape.getInput().getType() != reshape.getType())
        return {};
      value = reshape.getInput();
    }
    auto broadcast = value.getDefiningOp<BroadcastToOp>();
    if (!broadcast)
      return {};
    auto from = dyn_cast<RankedTensorType>(broadcast.getInput().getType());
    auto to = dyn_cast<RankedTensorType>(broadcast.getType());
    if (!from || !to || from.getRank() < 2 ||
        from.getShape().take_back(2) != to.getShape().take_back(2))
      return {};
    return broadcast.getInput();
  }

  /// The first matrix of `value` if it is a constant whose matrices (over
  /// its batch dimensions) are all equal: a broadcast already folded.
  static DenseElementsAttr sameMatrices(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    DenseElementsAttr data;
    if (!type || type.getRank() < 3 || !type.hasStaticShape() ||
        !matchPattern(value, m_Constant(&data)))
      return {};
    auto matrix = RankedTensorType::get(type.getShape().take_back(2),
                                        type.getElementType());
    if (data.isSplat())
      return data.resizeSplat(matrix);
    Type element = type.getElementType();
    if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
      return {};
    ArrayRef<char> raw = data.getRawData();
    size_t bytes = matrix.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
    if (bytes == 0 || raw.size() % bytes != 0)
      return {};
    for (size_t offset = bytes; offset < raw.size(); offset += bytes)
      if (std::memcmp(raw.data(), raw.data() + offset, bytes) != 0)
        return {};
    return DenseElementsAttr::getFromRawBuffer(matrix, raw.take_front(bytes));
  }

  /// Whether numpy's broadcast of batch shapes `lhs` and `rhs` is `result`.
  static bool broadcastsTo(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                           ArrayRef<int64_t> result) {
    size_t rank = std::max(lhs.size(), rhs.size());
    if (result.size() != rank)
      return false;
    for (size_t i = 0; i < rank; ++i) {
      int64_t a = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
      int64_t b = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
      int64_t d = a == b ? a : a == 1 ? b : b == 1 ? a : -2;
      if (d == -2 || d != result[i])
        return false;
    }
    return true;
  }

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto shapeOf = [](Type type) { return cast<RankedTensorType>(type).getShape(); };
    ArrayRef<int64_t> result = shapeOf(op.getType()).drop_back(2);
    ArrayRef<int64_t> lhsBatch = shapeOf(op.getLhs().getType()).drop_back(2);
    ArrayRef<int64_t> rhsBatch = shapeOf(op.getRhs().getType()).drop_back(2);
    // Each operand: a broadcast's input, or a folded broadcast (a constant
    // of equal matrices) made one matrix; kept where the product's batch
    // shape would change.
    Value lhsInput = batchBroadcastInput(op.getLhs());
    Value rhsInput = batchBroadcastInput(op.getRhs());
    DenseElementsAttr lhsMatrix = lhsInput ? nullptr : sameMatrices(op.getLhs());
    DenseElementsAttr rhsMatrix = rhsInput ? nullptr : sameMatrices(op.getRhs());
    auto batchOf = [&](Value input, DenseElementsAttr matrix) {
      return input ? shapeOf(input.getType()).drop_back(2) : ArrayRef<int64_t>();
    };
    bool lhsDrops = (lhsInput || lhsMatrix) &&
                    broadcastsTo(batchOf(lhsInput, lhsMatrix), rhsBatch, result);
    if (lhsDrops)
      lhsBatch = batchOf(lhsInput, lhsMatrix);
    bool rhsDrops = (rhsInput || rhsMatrix) &&
                    broadcastsTo(lhsBatch, batchOf(rhsInput, rhsMatrix), result);
    if (!lhsDrops && !rhsDrops)
      return rewriter.notifyMatchFailure(op, "no batch broadcast to drop");
    Value lhs = op.getLhs(), rhs = op.getRhs();
    if (lhsDrops)
      lhs = lhsInput ? lhsInput : ConstantOp::create(rewriter, op.getLoc(), lhsMatrix);
    if (rhsDrops)
      rhs = rhsInput ? rhsInput : ConstantOp::create(rewriter, op.getLoc(), rhsMatrix);
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), lhs, rhs);
    return success();
  }
};

/// The static shape of `value`, or an empty optional.
std::optional<SmallVector<int64_t>> staticShape(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return llvm::to_vector(type.getShape());
}

struct ReshapeOfMatmulOfReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !op.getSizes().empty())
      return rewriter.notifyMatchFailure(op, "not the only user of a matmul");
    if (!matmul->getDiscardableAttrDictionary().empty())
      return rewriter.notifyMatchFailure(op, "the matmul has a strategy already");
    auto lhs = matmul.getLhs().getDefiningOp<ReshapeOp>();
    auto out = staticShape(op.getResult());
    auto product = staticShape(matmul.getResult());
    if (!lhs || !lhs.getSizes().empty() || !out || !product)
      return rewriter.notifyMatchFailure(op, "lhs is not a static reshape");
    auto x = staticShape(lhs.getInput());
    auto rows = staticShape(lhs.getResult());
    auto rhsShape = staticShape(matmul.getRhs());
    if (!x || !rows || !rhsShape)
      return rewriter.notifyMatchFailure(op, "dynamic operands");
    int64_t n = product->back();
    // nn.Linear: x -> [P, K] @ [K, N] -> [P, N] -> [d..., N] is
    // reshape(x, [d..., K]) @ [K, N] (the rows keep their row-major order):
    // one reshape less, none where x is [d..., K] already.
    if (rows->size() == 2 && rhsShape->size() == 2) {
      if (out->size() < 2 || out->back() != n)
        return rewriter.notifyMatchFailure(op, "the outer reshape is another shape");
      SmallVector<int64_t> shape(out->begin(), out->end() - 1);
      shape.push_back(rows->back());
      Value input = lhs.getInput();
      if (ArrayRef<int64_t>(shape) != ArrayRef<int64_t>(*x))
        input = ReshapeOp::create(rewriter, lhs.getLoc(), input, shape);
      rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), input, matmul.getRhs());
      return success();
    }
    // Batched: both operands regroup the same batch dimensions, the
    // matrices untouched, and the outer reshape restores them.
    auto rhs = matmul.getRhs().getDefiningOp<ReshapeOp>();
    if (!rhs || !rhs.getSizes().empty())
      return rewriter.notifyMatchFailure(op, "rhs is not a static reshape");
    auto y = staticShape(rhs.getInput());
    auto cols = staticShape(rhs.getResult());
    // Every shape split into batch and matrix below has a matrix: a rank-1
    // outer reshape (flattening the product) is another rewrite.
    if (!y || !cols || rows->size() < 3 || cols->size() < 3 || y->size() < 3 ||
        x->size() < 2 || out->size() < 3)
      return rewriter.notifyMatchFailure(op, "dynamic or low-rank operands");
    auto last2 = [](ArrayRef<int64_t> shape) { return shape.take_back(2); };
    ArrayRef<int64_t> outBatch = ArrayRef<int64_t>(*out).drop_back(2);
    if (last2(*x) != last2(*rows) || last2(*y) != last2(*cols) ||
        last2(*out) != last2(*product) ||
        ArrayRef<int64_t>(*rows).drop_back(2) != ArrayRef<int64_t>(*cols).drop_back(2))
      return rewriter.notifyMatchFailure(op, "the reshapes do more than regroup batches");
    // Each operand with the outer batch dimensions: its input where it has
    // them, else the input reshaped to them (a reshape of a reshape, one).
    auto withBatch = [&](ReshapeOp reshape, ArrayRef<int64_t> input,
                         ArrayRef<int64_t> matrix) -> Value {
      SmallVector<int64_t> shape(outBatch);
      llvm::append_range(shape, matrix);
      if (ArrayRef<int64_t>(shape) == input)
        return reshape.getInput();
      return ReshapeOp::create(rewriter, reshape.getLoc(), reshape.getInput(), shape);
    };
    bool lhsFits = ArrayRef<int64_t>(*x).drop_back(2) == outBatch;
    bool rhsFits = ArrayRef<int64_t>(*y).drop_back(2) == outBatch;
    if (!lhsFits && !rhsFits)
      return rewriter.notifyMatchFailure(op, "no operand has the outer batches");
    Value a = withBatch(lhs, *x, last2(*rows));
    Value b = withBatch(rhs, *y, last2(*cols));
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), a, b);
    return success();
  }
};

template <typename BitwiseOp, typename LogicalOp>
struct BitwiseOfBools : OpRewritePattern<BitwiseOp> {
  using OpRewritePattern<BitwiseOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(BitwiseOp op,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    if (!type.getElementType().isInteger(1))
      return rewriter.notifyMatchFailure(op, "not bools");
    rewriter.replaceOpWithNewOp<LogicalOp>(op, type, op.getLhs(), op.getRhs());
    return success();
  }
};

struct GatherOfOneIndex : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op,
                                PatternRewriter &rewriter) const override {
    DenseIntElementsAttr indices;
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    auto type = cast<RankedTensorType>(op.getType());
    if (!matchPattern(op.getIndices(), m_Constant(&indices)) ||
        indices.getNumElements() != 1 || !inputType.hasStaticShape() ||
        !type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not one constant index of a static input");
    int64_t axis = op.getAxis();
    int64_t size = inputType.getDimSize(axis);
    if (size == 0)
      return rewriter.notifyMatchFailure(op, "empty axis");
    int64_t index = (*indices.begin()).getSExtValue();
    index = std::clamp<int64_t>(index < 0 ? index + size : index, 0, size - 1);
    SmallVector<int64_t> starts(inputType.getRank(), 0);
    SmallVector<int64_t> sizes(inputType.getShape());
    SmallVector<int64_t> strides(inputType.getRank(), 1);
    starts[axis] = index;
    sizes[axis] = 1;
    Value slice = SliceOp::create(rewriter, op.getLoc(), op.getInput(), starts, sizes,
                                  strides);
    if (slice.getType() == type)
      rewriter.replaceOp(op, slice);
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, slice, type.getShape());
    return success();
  }
};

/// reshape(gather(x, i, axis 0)) that drops the unit dimensions x has after
/// its first -> gather(reshape(x, [N]), i): ONNX exporters gather rows of
/// an [N, 1] column (GatherND's spelling), PyTorch an element of [N].
struct ReshapeOfColumnGather : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto gather = op.getInput().getDefiningOp<GatherOp>();
    if (!gather || !gather->hasOneUse() || gather.getAxis() != 0 ||
        !op.getSizes().empty())
      return rewriter.notifyMatchFailure(op, "not the only user of a row gather");
    auto input = staticShape(gather.getInput());
    auto indices = staticShape(gather.getIndices());
    auto out = staticShape(op.getResult());
    if (!input || !indices || !out || input->size() < 2 || *indices != *out ||
        llvm::any_of(ArrayRef<int64_t>(*input).drop_front(),
                     [](int64_t d) { return d != 1; }))
      return rewriter.notifyMatchFailure(op, "not a gather of a column");
    Value flat = ReshapeOp::create(rewriter, op.getLoc(), gather.getInput(),
                                   ArrayRef<int64_t>{input->front()});
    rewriter.replaceOpWithNewOp<GatherOp>(op, op.getType(), flat, gather.getIndices(),
                                          gather.getAxisAttr());
    return success();
  }
};

/// reshape(transpose(reshape(x))) where the inner reshape merges x's
/// leading dimensions into the first one, the transpose keeps that one in
/// place and the outer reshape splits it back -> one transpose of x (the
/// ONNX exporters' [B, H, S, D] -> [B*H, S, D] -> swap -> [B, H, D, S]).
struct ReshapeOfBatchTranspose : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getInput().getDefiningOp<TransposeOp>();
    if (!transpose || !transpose->hasOneUse() || !op.getSizes().empty())
      return rewriter.notifyMatchFailure(op, "not the only user of a transpose");
    auto inner = transpose.getInput().getDefiningOp<ReshapeOp>();
    if (!inner || !inner.getSizes().empty())
      return rewriter.notifyMatchFailure(op, "the transpose's input is not a reshape");
    auto x = staticShape(inner.getInput());
    auto merged = staticShape(inner.getResult());
    auto out = staticShape(op.getResult());
    ArrayRef<int64_t> perm = transpose.getPermutation();
    if (!x || !merged || !out || perm.empty() || perm[0] != 0 ||
        x->size() <= merged->size())
      return rewriter.notifyMatchFailure(op, "not a merge of leading dimensions");
    int64_t lead = x->size() - merged->size() + 1;
    ArrayRef<int64_t> batch = ArrayRef<int64_t>(*x).take_front(lead);
    if (ArrayRef<int64_t>(*x).drop_front(lead) != ArrayRef<int64_t>(*merged).drop_front())
      return rewriter.notifyMatchFailure(op, "the inner reshape does more than merge");
    auto transposed = staticShape(transpose.getResult());
    SmallVector<int64_t> want(batch);
    llvm::append_range(want, ArrayRef<int64_t>(*transposed).drop_front());
    if (want != *out)
      return rewriter.notifyMatchFailure(op, "the outer reshape does not split it back");
    SmallVector<int64_t> newPerm = llvm::to_vector(llvm::seq<int64_t>(0, lead));
    for (int64_t d : perm.drop_front())
      newPerm.push_back(d + lead - 1);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, inner.getInput(), newPerm);
    return success();
  }
};

} // namespace

void BitwiseAndOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                               MLIRContext *context) {
  patterns.add<BitwiseOfBools<BitwiseAndOp, LogicalAndOp>>(context);
}

void BitwiseOrOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<BitwiseOfBools<BitwiseOrOp, LogicalOrOp>>(context);
}

void BitwiseXorOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                               MLIRContext *context) {
  patterns.add<BitwiseOfBools<BitwiseXorOp, LogicalXorOp>>(context);
}

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<GatherOfOneIndex>(context);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<ReshapeOfReshape, ReshapeOfMatmulOfReshapes, ReshapeOfColumnGather,
               ReshapeOfBatchTranspose>(context);
}

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<MatmulOfTransposes, MatmulOfBatchBroadcast>(context);
}
