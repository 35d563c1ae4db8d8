//===- CollapseBatchMatmul.cpp - dl-collapse-batch-matmul -----------------===//
//
// A matmul with several batch dimensions ([b1, b2, M, K] x [b1, b2, K, N],
// attention's shape) or a batch against a 2-D B ([b, M, K] x [K, N]) lowers
// to a linalg.generic contraction, which no matmul kernel recognizes. On
// memrefs with the identity layout, their batch dimensions are contiguous,
// so the same product is a linalg.batch_matmul over views collapsing the
// batch dimensions into one ([b1*b2, M, K] ...), or, when B has no batch, a
// linalg.matmul over views collapsing the batch into the rows of A and C
// ([b*M, K] x [K, N]). dl-gpu-pipeline runs this before its matmul kernels
// (shared-memory tiles, tensor cores). Upstream's linalg-specialize-generic-
// ops recognizes only the exact shapes of the named ops.
//
// Left alone: other generics, batch dimensions that broadcast (a size-1 or
// missing batch dimension of A, or a partial batch of B), transposed
// operands (maps other than (batch, m, k), (batch, k, n), (batch, m, n)),
// strided memrefs, integer products.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLCOLLAPSEBATCHMATMUL
#include "dl/Codegen/Common/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// `value` is the block argument `arg`, possibly widened by arith.extf.
bool isArgument(Value value, BlockArgument arg) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    value = ext.getIn();
  return value == arg;
}

/// Whether the body computes out + in0 * in1 (inputs possibly widened).
bool isMulAddBody(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = add.getLhs(), product = add.getRhs();
  if (acc != body.getArgument(2))
    std::swap(acc, product);
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (acc != body.getArgument(2) || !mul)
    return false;
  return (isArgument(mul.getLhs(), body.getArgument(0)) &&
          isArgument(mul.getRhs(), body.getArgument(1))) ||
         (isArgument(mul.getLhs(), body.getArgument(1)) &&
          isArgument(mul.getRhs(), body.getArgument(0)));
}

/// The map (d0, ..., d[batch-1], d[row], d[col]) over `loops` loops.
AffineMap batchedMap(MLIRContext *ctx, unsigned loops, unsigned batch,
                     unsigned row, unsigned col) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d = 0; d < batch; ++d)
    exprs.push_back(getAffineDimExpr(d, ctx));
  exprs.push_back(getAffineDimExpr(row, ctx));
  exprs.push_back(getAffineDimExpr(col, ctx));
  return AffineMap::get(loops, 0, exprs, ctx);
}

/// The collapsing views and named op for `op`, or failure if it is not a
/// batched matmul this pass handles.
LogicalResult collapse(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return failure();
  unsigned loops = op.getNumLoops();
  if (loops < 4)
    return failure();
  unsigned batch = loops - 3, m = batch, n = batch + 1, k = batch + 2;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < loops; ++d)
    if ((iterators[d] == utils::IteratorType::reduction) != (d == k))
      return failure();
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  for (Value v : {a, b, c}) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.getLayout().isIdentity() ||
        !isa<FloatType>(type.getElementType()))
      return failure();
  }
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool bBatched = cast<MemRefType>(b.getType()).getRank() == batch + 2;
  if (maps[0] != batchedMap(ctx, loops, batch, m, k) ||
      maps[1] != batchedMap(ctx, loops, bBatched ? batch : 0, k, n) ||
      maps[2] != batchedMap(ctx, loops, batch, m, n) || !isMulAddBody(op))
    return failure();
  // Equal batch sizes (both static or both dynamic: the verifier has
  // checked that the shapes agree with the loops).
  if (bBatched) {
    auto aShape = cast<MemRefType>(a.getType()).getShape();
    auto bShape = cast<MemRefType>(b.getType()).getShape();
    if (aShape.take_front(batch) != bShape.take_front(batch))
      return failure();
  }

  OpBuilder builder(op);
  Location loc = op.getLoc();
  // Groups of dimensions to merge: [[0..batch-1], [batch], [batch+1]] for a
  // batch_matmul; [[0..batch], [batch+1]] for a matmul (batch into rows).
  auto groups = [&](bool intoRows) {
    SmallVector<ReassociationIndices> all(1);
    for (unsigned d = 0; d < batch; ++d)
      all[0].push_back(d);
    if (intoRows)
      all[0].push_back(batch);
    else
      all.push_back({static_cast<int64_t>(batch)});
    all.push_back({static_cast<int64_t>(batch + 1)});
    return all;
  };
  auto view = [&](Value v, bool intoRows) -> Value {
    return memref::CollapseShapeOp::create(builder, loc, v, groups(intoRows));
  };
  bool intoRows = !bBatched;
  Value lhs = view(a, intoRows);
  Value rhs = bBatched ? view(b, false) : b;
  Value out = view(c, intoRows);
  if (bBatched)
    linalg::BatchMatmulOp::create(builder, loc, ValueRange{lhs, rhs},
                                  ValueRange{out});
  else
    linalg::MatmulOp::create(builder, loc, ValueRange{lhs, rhs},
                             ValueRange{out});
  op.erase();
  return success();
}

struct DLCollapseBatchMatmul
    : public dl::impl::DLCollapseBatchMatmulBase<DLCollapseBatchMatmul> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation()->walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      (void)collapse(op);
  }
};

} // namespace
