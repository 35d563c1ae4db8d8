//===- Layout.cpp - dl-layout ---------------------------------------------===//
//
// Runs convolutions and poolings in NHWC, the layout dlc's CPU code is
// fastest in (measured with `python -m dlc.bench`-style timings on the
// ResNet-18 layers at batch 1: NHWC 1.1x to 3.4x faster than NCHW, the
// gap growing with the channel count), and keeps the graph in NHWC between
// them:
//
//   1. every NCHW dl.conv2d / max_pool2d / avg_pool2d becomes
//        transpose(x, [0,2,3,1]) -> the op in NHWC -> transpose([0,3,1,2])
//      (conv filters [F,C,KH,KW] -> [KH,KW,C,F]; constant filters fold);
//   2. transposes sink through elementwise ops: u(T(x)) -> T(u(x)) for unary
//      ops and dl.quantize/dl.dequantize (a per-axis scale follows its
//      dimension), b(T(x), y) -> T(b(x, T^-1(y))) for broadcasting binary ops
//      (a lower-rank y is first reshaped to the full rank), so that the
//      conversion after one convolution meets the one before the next; and
//      through reductions, r(T(x)) -> T'(r(x)) over the permuted axes (a
//      squeeze-and-excitation block's mean over H and W); through
//      concatenations whose operands are all converted alike,
//      concat(T(x1), ..., T(xn)) -> T(concat(x1, ..., xn)) along the permuted
//      axis, and batch norms, whose statistics follow their axis (DenseNet's
//      blocks; a conversion moves past these only where all its users are ops
//      it moves past, so none is left behind for another user);
//   3. transpose(transpose(x)) folds to x (or one transpose), and identical
//      transposes of one value merge.
// Transposes a frontend marked `dl.layout_conversion` (the ONNX importer's
// integer convolutions compute in NHWC between two of them) take part in
// steps 2 and 3 too, whether or not the function has an NCHW convolution.
//
// What remains are the conversions at the graph's boundaries (and around
// ops transposes do not cross: reshapes, matmuls). The function
// gets `dl.layout_conversions = N`, the activation transposes this pass
// introduced that are left (filter transposes are not counted: constant
// filters fold), and `report` emits it as a remark. Upstream MLIR has no layout
// propagation for a tensor dialect of this level (linalg's pack/unpack
// propagation works on data tiling, not on NCHW/NHWC), hence ours.
//
//===----------------------------------------------------------------------===//

#include "dl/Target/Target.h"
#include "dl/IR/DLOps.h"
#include "dl/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLLAYOUT
#include "dl/Transforms/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;
using namespace mlir::dl;

namespace {

constexpr llvm::StringLiteral kConversion = "dl.layout_conversion";
constexpr int64_t kToNHWC[] = {0, 2, 3, 1};
constexpr int64_t kToNCHW[] = {0, 3, 1, 2};

RankedTensorType permuted(RankedTensorType type, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(type.getDimSize(d));
  return RankedTensorType::get(shape, type.getElementType());
}

SmallVector<int64_t> inverse(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> inv(perm.size());
  for (auto [i, d] : llvm::enumerate(perm))
    inv[d] = i;
  return inv;
}

/// A transpose marked as a layout conversion.
Value transpose(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> perm) {
  auto op = TransposeOp::create(b, loc, x, b.getDenseI64ArrayAttr(perm));
  op->setAttr(kConversion, b.getUnitAttr());
  return op.getResult();
}

/// Step 1: the op (conv2d or a pooling, NCHW) in NHWC between conversions.
void toNHWC(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value input = transpose(b, loc, op->getOperand(0), kToNHWC);
  Value filter;
  if (isa<Conv2dOp>(op)) // [F, C, KH, KW] -> [KH, KW, C, F]; not counted:
    // it folds for constant filters and is not an activation conversion.
    filter = TransposeOp::create(b, loc, op->getOperand(1),
                                 b.getDenseI64ArrayAttr({2, 3, 1, 0}));
  Operation *clone = b.clone(*op);
  clone->setOperand(0, input);
  if (filter)
    clone->setOperand(1, filter);
  clone->setAttr("layout", b.getStringAttr("NHWC"));
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  clone->getResult(0).setType(permuted(type, kToNHWC));
  op->getResult(0).replaceAllUsesWith(
      transpose(b, loc, clone->getResult(0), kToNCHW));
  op->erase();
}

bool isUnaryElementwise(Operation *op) {
  return isa<ReluOp, Relu6Op, AbsOp, NegOp, ExpOp, LogOp, SqrtOp, RsqrtOp,
             ErfOp, TanhOp, SigmoidOp, SiluOp, HardswishOp, LeakyReluOp,
             GeluOp, CastOp, SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp,
             SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, FloorOp, CeilOp,
             RoundOp, SignOp, IsNanOp, IsInfOp, LogicalNotOp, BitwiseNotOp>(op) &&
         op->getNumOperands() == 1 && op->getNumResults() == 1;
}

bool isBinaryElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp,
             LogicalAndOp, LogicalOrOp, LogicalXorOp, BitwiseAndOp, BitwiseOrOp,
             BitwiseXorOp, RemainderOp, FmodOp>(op);
}

/// A static shape with at most one dimension other than 1 (a scalar, a
/// bias broadcast along the other dimensions): moving it to the new layout
/// is a reshape in all but name.
bool isPerChannel(RankedTensorType type) {
  return type.hasStaticShape() &&
         llvm::count_if(type.getShape(), [](int64_t d) { return d != 1; }) <= 1;
}

/// A marked transpose feeding `value`, if it has no other use.
TransposeOp singleUseConversion(Value value) {
  auto t = value.getDefiningOp<TransposeOp>();
  if (!t || !t->hasAttr(kConversion) || !t->hasOneUse())
    return TransposeOp();
  return t;
}

/// After a rewrite moved `t` past one of its users: the others (a
/// concatenation or batch norm that waited for this one to move) are tried
/// again. The driver queues the users of new and changed values, not the
/// other users of an operand that lost one (a DenseNet's feature feeds every
/// later concatenation of its block: without this, one round per layer).
void retryUsers(PatternRewriter &rewriter, TransposeOp t) {
  if (!t)
    return;
  for (Operation *user : llvm::to_vector(t->getUsers()))
    rewriter.modifyOpInPlace(user, [] {});
}

/// u(T(x)) -> T(u(x)).
struct SinkThroughUnary : public RewritePattern {
  SinkThroughUnary(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isUnaryElementwise(op))
      return failure();
    TransposeOp t = singleUseConversion(op->getOperand(0));
    if (!t)
      return failure();
    auto inputType = cast<RankedTensorType>(t.getInput().getType());
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Operation *moved = rewriter.clone(*op);
    moved->setOperand(0, t.getInput());
    moved->getResult(0).setType(RankedTensorType::get(
        inputType.getShape(), resultType.getElementType()));
    rewriter.replaceOp(op, transpose(rewriter, op->getLoc(),
                                     moved->getResult(0), t.getPermutation()));
    rewriter.eraseOp(t);
    return success();
  }
};

/// q(T(x), scale, zero) -> T(q(x, scale, zero)) for dl.quantize and
/// dl.dequantize: elementwise in their input; a per-axis scale follows its
/// dimension (axis a of T(x) is axis perm[a] of x).
template <typename OpTy>
struct SinkThroughQuantization : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    TransposeOp t = singleUseConversion(op.getInput());
    if (!t)
      return failure();
    ArrayRef<int64_t> perm = t.getPermutation();
    int64_t axis = op.getAxis();
    bool perAxis = cast<RankedTensorType>(op.getScale().getType()).getRank() == 1;
    if (perAxis && (axis < 0 || axis >= static_cast<int64_t>(perm.size())))
      return failure();
    auto inputType = cast<RankedTensorType>(t.getInput().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    auto moved = OpTy::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(inputType.getShape(), resultType.getElementType()),
        t.getInput(), op.getScale(), op.getZeroPoint(),
        rewriter.getI64IntegerAttr(perAxis ? perm[axis] : axis));
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), moved.getResult(),
                                     perm));
    rewriter.eraseOp(t);
    return success();
  }
};

/// r(T(x), axes) -> T'(r(x, perm[axes])) for the reductions: axis a of T(x)
/// is axis perm[a] of x. With keepdims T' is T; without, T' orders the
/// dimensions left as T did (often the identity: a global pool's [N, C]).
/// A squeeze-and-excitation block's mean over H and W then reads the NHWC
/// activation itself instead of a converted copy of it.
template <typename OpTy>
struct SinkThroughReduction : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    // Other users may keep the conversion: the reduction reads as much
    // either way, and only its (smaller) result is converted after it.
    auto t = op.getInput().template getDefiningOp<TransposeOp>();
    if (!t || !t->hasAttr(kConversion))
      return failure();
    ArrayRef<int64_t> perm = t.getPermutation();
    auto inputType = cast<RankedTensorType>(t.getInput().getType());
    int64_t rank = inputType.getRank();
    SmallVector<bool> reduced(rank, false);
    for (int64_t a : op.getAxes()) {
      if (a < 0 || a >= rank)
        return failure();
      reduced[perm[a]] = true;
    }
    SmallVector<int64_t> axes, shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d])
        axes.push_back(d);
      if (!reduced[d])
        shape.push_back(inputType.getDimSize(d));
      else if (op.getKeepdims())
        shape.push_back(1);
    }
    SmallVector<int64_t> after;
    if (op.getKeepdims()) {
      after.assign(perm.begin(), perm.end());
    } else {
      // Position of x's dimension d among the dimensions left.
      SmallVector<int64_t> position(rank, -1);
      int64_t next = 0;
      for (int64_t d = 0; d < rank; ++d)
        if (!reduced[d])
          position[d] = next++;
      for (int64_t d : perm)
        if (!reduced[d])
          after.push_back(position[d]);
    }
    auto resultType = cast<RankedTensorType>(op.getType());
    auto moved = OpTy::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(shape, resultType.getElementType()),
        t.getInput(), rewriter.getDenseI64ArrayAttr(axes),
        op.getKeepdimsAttr());
    Value result = moved.getResult();
    if (!llvm::equal(after, llvm::seq<int64_t>(0, after.size())))
      result = transpose(rewriter, op.getLoc(), result, after);
    rewriter.replaceOp(op, result);
    if (t->use_empty())
      rewriter.eraseOp(t);
    else
      retryUsers(rewriter, t);
    return success();
  }
};

/// b(T(x), y) -> T(b(x, T^-1(y))), and symmetrically, when the other
/// operand has at most the rank of the result (broadcasting).
struct SinkThroughBinary : public RewritePattern {
  SinkThroughBinary(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isBinaryElementwise(op))
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    for (unsigned side = 0; side < 2; ++side) {
      TransposeOp t = singleUseConversion(op->getOperand(side));
      if (!t)
        continue;
      ArrayRef<int64_t> perm = t.getPermutation();
      if (cast<RankedTensorType>(t.getType()).getRank() != resultType.getRank())
        continue;
      Value other = op->getOperand(1 - side);
      auto otherType = cast<RankedTensorType>(other.getType());
      Location loc = op->getLoc();
      SmallVector<int64_t> back = inverse(perm);
      // The other operand in the new layout, where that costs nothing: the
      // same conversion (they cancel), a constant (it folds), a per-channel
      // operand (a bias, [1,C,1,1]: transposing it moves C elements), or a
      // value already converted for another user (a residual connection:
      // the block's input, converted for its first convolution). Anything
      // else would add a conversion, and could ping-pong between the
      // operands.
      Value otherInNew;
      if (auto o = other.getDefiningOp<TransposeOp>();
          o && o->hasAttr(kConversion) && o.getPermutation() == perm) {
        otherInNew = o.getInput();
      } else if (other.getDefiningOp<ConstantOp>() ||
                 isPerChannel(otherType)) {
        if (otherType.getRank() < resultType.getRank()) {
          if (!otherType.hasStaticShape())
            continue;
          SmallVector<int64_t> shape(
              resultType.getRank() - otherType.getRank(), 1);
          llvm::append_range(shape, otherType.getShape());
          other = ReshapeOp::create(rewriter, loc, other,
                                    rewriter.getDenseI64ArrayAttr(shape));
        }
        auto fullType = cast<RankedTensorType>(other.getType());
        if (isPerChannel(fullType)) // same element order: a reshape (a view)
          otherInNew = ReshapeOp::create(
              rewriter, loc, other,
              rewriter.getDenseI64ArrayAttr(
                  permuted(fullType, back).getShape()));
        else
          otherInNew = TransposeOp::create(rewriter, loc, other,
                                           rewriter.getDenseI64ArrayAttr(back));
      } else if (otherType.getRank() == resultType.getRank()) {
        for (Operation *user : other.getUsers())
          if (auto u = dyn_cast<TransposeOp>(user);
              u && u->hasAttr(kConversion) && u.getPermutation() == ArrayRef<int64_t>(back) &&
              u->getBlock() == op->getBlock() && u->isBeforeInBlock(op)) {
            otherInNew = u.getResult();
            break;
          }
      }
      if (!otherInNew)
        continue;
      Operation *moved = rewriter.clone(*op);
      moved->setOperand(side, t.getInput());
      moved->setOperand(1 - side, otherInNew);
      // The result in the new layout: the old result's shape permuted,
      // not the converted operand's (that one may be the broadcast side,
      // e.g. the [N,1,1,C] gate of a squeeze-and-excitation block).
      moved->getResult(0).setType(permuted(resultType, back));
      rewriter.replaceOp(op, transpose(rewriter, loc, moved->getResult(0),
                                       perm));
      rewriter.eraseOp(t);
      return success();
    }
    return failure();
  }
};

/// Whether the pass moves conversions through `op` (so a conversion all of
/// whose users are such ops dies once they have all been rewritten).
bool sinksConversions(Operation *op) {
  return isUnaryElementwise(op) || isBinaryElementwise(op) ||
         isa<ConcatOp, BatchNormOp, QuantizeOp, DequantizeOp, ReduceSumOp,
             ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(op);
}

/// A marked transpose feeding `value` whose users the pass all moves it
/// through: moving it past one of them leaves it to the others, and it
/// goes once they have all moved.
TransposeOp sinkableConversion(Value value) {
  auto t = value.getDefiningOp<TransposeOp>();
  if (!t || !t->hasAttr(kConversion) ||
      !llvm::all_of(t->getUsers(), sinksConversions))
    return TransposeOp();
  return t;
}

/// concat(T(x1), ..., T(xn), axis) -> T(concat(x1, ..., xn, perm[axis])),
/// every operand converted with the same permutation: DenseNet's blocks
/// concatenate every earlier layer's NHWC output, and in NCHW each layer
/// paid a conversion of its own output and one of the whole concatenation
/// (DenseNet-121: 116 of its 124 conversions).
struct SinkThroughConcat : public OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<TransposeOp> conversions;
    SmallVector<Value> inputs;
    for (Value input : op.getInputs()) {
      TransposeOp t = sinkableConversion(input);
      if (!t || (!conversions.empty() &&
                 t.getPermutation() != conversions.front().getPermutation()))
        return failure();
      if (!llvm::is_contained(conversions, t)) // concat(T(x), T(x))
        conversions.push_back(t);
      inputs.push_back(t.getInput());
    }
    if (conversions.empty())
      return failure();
    ArrayRef<int64_t> perm = conversions.front().getPermutation();
    int64_t axis = op.getAxis();
    if (axis < 0 || axis >= static_cast<int64_t>(perm.size()))
      return failure();
    auto moved = ConcatOp::create(rewriter, op.getLoc(), inputs,
                                  rewriter.getI64IntegerAttr(perm[axis]));
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), moved.getResult(),
                                     perm));
    for (TransposeOp t : conversions) {
      if (t->use_empty())
        rewriter.eraseOp(t);
      else
        retryUsers(rewriter, t);
    }
    return success();
  }
};

/// batch_norm(T(x), axis) -> T(batch_norm(x, perm[axis])): the statistics
/// follow their dimension (DenseNet's norm before each layer's first
/// convolution, on the concatenation: it cannot fold into a convolution).
struct SinkThroughBatchNorm : public OpRewritePattern<BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    TransposeOp t = sinkableConversion(op.getInput());
    if (!t)
      return failure();
    ArrayRef<int64_t> perm = t.getPermutation();
    int64_t axis = op.getAxis();
    if (axis < 0 || axis >= static_cast<int64_t>(perm.size()))
      return failure();
    auto moved = BatchNormOp::create(
        rewriter, op.getLoc(), t.getInput(), op.getMean(), op.getVariance(),
        op.getGamma(), op.getBeta(), op.getEpsilonAttr(),
        rewriter.getI64IntegerAttr(perm[axis]));
    rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), moved.getResult(),
                                     perm));
    if (t->use_empty())
      rewriter.eraseOp(t);
    else
      retryUsers(rewriter, t);
    return success();
  }
};

/// T2(T1(x)): one transpose (the folder makes identity go away).
struct MergeTransposes : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner || !(op->hasAttr(kConversion) || inner->hasAttr(kConversion)))
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t d : op.getPermutation())
      perm.push_back(inner.getPermutation()[d]);
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      rewriter.replaceOp(op, inner.getInput());
    else
      rewriter.replaceOp(op, transpose(rewriter, op.getLoc(), inner.getInput(),
                                       perm));
    // inner lost a user: the ones left may move past now
    retryUsers(rewriter, inner);
    return success();
  }
};

struct DLLayout : public dl::impl::DLLayoutBase<DLLayout> {
  using DLLayoutBase::DLLayoutBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> ops;
    int64_t kept = 0;
    func.walk([&](Operation *op) {
      if (!isa<Conv2dOp, MaxPool2dOp, AvgPool2dOp>(op))
        return;
      auto layout = op->getAttrOfType<StringAttr>("layout");
      if (!layout || layout.getValue() != "NCHW")
        return;
      // A strategy written in the IR with a layout decides.
      auto strategy = op->getAttrOfType<StrategyAttr>(kStrategyAttrName);
      if (strategy && !strategy.getLayout().empty()) {
        if (strategy.getLayout() == "NCHW")
          ++kept;
        else
          ops.push_back(op);
        return;
      }
      if (auto conv = dyn_cast<Conv2dOp>(op); conv && staysNCHW(conv)) {
        ++kept;
        return;
      }
      ops.push_back(op);
    });
    // Conversions a frontend wrote (the ONNX importer's integer
    // convolutions, NHWC inside) sink and cancel like this pass's own.
    bool marked = false;
    func.walk([&](TransposeOp t) {
      marked |= t->hasAttr(kConversion);
    });
    if (ops.empty() && !marked) {
      if (report && kept)
        func.emitRemark("dl-layout: ")
            << kept << " convolution(s) kept in NCHW (large filters, or by "
                       "their strategy)";
      return; // nothing converted: no attribute
    }
    for (Operation *op : ops)
      toNHWC(op);
    {
      RewritePatternSet patterns(&getContext());
      patterns.add<SinkThroughUnary, SinkThroughBinary, MergeTransposes,
                   SinkThroughConcat, SinkThroughBatchNorm,
                   SinkThroughQuantization<QuantizeOp>,
                   SinkThroughQuantization<DequantizeOp>,
                   SinkThroughReduction<ReduceSumOp>,
                   SinkThroughReduction<ReduceMeanOp>,
                   SinkThroughReduction<ReduceMaxOp>,
                   SinkThroughReduction<ReduceMinOp>>(&getContext());
      ReshapeOp::getCanonicalizationPatterns(patterns, &getContext());
      // Not settling within the driver's rounds leaves valid IR with some
      // conversions unmoved: slower code, never wrong code, so no failure.
      if (failed(applyPatternsGreedily(func, std::move(patterns))) && report)
        func.emitRemark("dl-layout: the rewrites did not settle");
      mergeDuplicates(func);
    }
    int64_t count = 0;
    func.walk([&](TransposeOp t) {
      if (t->hasAttr(kConversion))
        ++count;
    });
    func->setAttr("dl.layout_conversions",
                  IntegerAttr::get(IntegerType::get(&getContext(), 64), count));
    if (report)
      func.emitRemark("dl-layout: ")
          << ops.size() << " convolution/pooling op(s) in NHWC, " << count
          << " layout conversion(s) left"
          << (kept ? ", " + std::to_string(kept) +
                         " convolution(s) kept in NCHW (large filters, or by "
                         "their strategy)"
                   : std::string());
  }

  /// An f32 dense convolution whose filter is over the limit: its NCHW
  /// im2col GEMM reads the filter as it lies.
  bool staysNCHW(Conv2dOp conv) {
    if (nchwMinFilterBytes < 0 || conv.getGroups() != 1)
      return false;
    auto input = cast<RankedTensorType>(conv.getInput().getType());
    auto filter = cast<RankedTensorType>(conv.getFilter().getType());
    if (!input.getElementType().isF32() || !filter.hasStaticShape())
      return false;
    // A constant filter is transposed to HWIO once, by the folders, at
    // compile time: NHWC costs nothing per call, and saves the conversions
    // around the convolution (ResNet-18 b1 on Zen 4: 24.3 ms with its 3x3
    // filters over the limit in NCHW, 21.2-22.1 ms in NHWC).
    if (matchPattern(conv.getFilter(), m_Constant()))
      return false;
    int64_t limit = nchwMinFilterBytes > 0
                        ? nchwMinFilterBytes
                        : TargetInfo::of(conv).getL2ResidentBytes();
    return filter.getNumElements() * 4 > limit;
  }

  /// Identical conversions of one value become one.
  void mergeDuplicates(func::FuncOp func) {
    DenseMap<std::pair<Value, Attribute>, TransposeOp> seen;
    SmallVector<TransposeOp> dead;
    func.walk([&](TransposeOp t) {
      if (!t->hasAttr(kConversion))
        return;
      auto key = std::make_pair(t.getInput(), t.getPermutationAttr());
      auto [it, inserted] = seen.try_emplace(key, t);
      if (inserted)
        return;
      TransposeOp first = it->second;
      if (first->getBlock() == t->getBlock() && first->isBeforeInBlock(t)) {
        t.getResult().replaceAllUsesWith(first.getResult());
        dead.push_back(t);
      }
    });
    for (TransposeOp t : dead)
      t.erase();
  }
};

} // namespace
