//===- GPUUtils.h - helpers of the dl-gpu-* kernel builders -*- C++ -*-===//

#ifndef DL_GPUUTILS_H
#define DL_GPUUTILS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::dl {

/// On the host, before a matmul kernel's launch: whether every row of A
/// (M x K) and B (K x N) is made of whole, aligned vectors of `lanes`
/// elements (K and N multiples of `lanes`, both bases aligned to a vector's
/// bytes), so that the kernel may stage its tiles by vector loads. Null
/// where A or B has a layout other than the identity (its rows may start
/// anywhere).
inline Value wholeAlignedVectorRows(OpBuilder &b, Location loc, Value a,
                                    Value bMat, Value k, Value n,
                                    int64_t lanes) {
  auto type = [](Value v) { return cast<MemRefType>(v.getType()); };
  if (!type(a).getLayout().isIdentity() || !type(bMat).getLayout().isIdentity())
    return Value();
  int64_t bytes = lanes * type(a).getElementTypeBitWidth() / 8;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto divides = [&](Value x, int64_t by) -> Value {
    Value rest = arith::RemUIOp::create(
        b, loc, x, arith::ConstantIndexOp::create(b, loc, by));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rest, zero);
  };
  auto aligned = [&](Value memref) {
    return divides(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref),
                   bytes);
  };
  Value kWhole = divides(k, lanes);
  Value nWhole = divides(n, lanes);
  Value aAligned = aligned(a);
  Value bAligned = aligned(bMat);
  return arith::AndIOp::create(
      b, loc, arith::AndIOp::create(b, loc, kWhole, nWhole),
      arith::AndIOp::create(b, loc, aAligned, bAligned));
}

/// The operands of a matmul or batch matmul on memrefs (C += A * B) and its
/// sizes, read on the host before the kernel's launch: M, K, N, and the
/// batch (1 for a plain matmul).
struct MatmulOperands {
  Value a, b, c;
  Value m, k, n, batch;
  /// 1 for a batch matmul (its dimension 0 is the batch), else 0.
  unsigned first;

  MatmulOperands(OpBuilder &builder, Location loc, linalg::LinalgOp op,
                 bool batched)
      : a(op.getDpsInputs()[0]), b(op.getDpsInputs()[1]),
        c(op.getDpsInits()[0]), first(batched ? 1 : 0) {
    m = memref::DimOp::create(builder, loc, a, first);
    k = memref::DimOp::create(builder, loc, a, first + 1);
    n = memref::DimOp::create(builder, loc, this->b, first + 1);
    batch = batched ? memref::DimOp::create(builder, loc, a, 0).getResult()
                    : arith::ConstantIndexOp::create(builder, loc, 1).getResult();
  }
};

/// The indices of element (i, j) of a matmul operand: (batch, i, j) for a
/// batch matmul (`batch` non-null), else (i, j).
inline SmallVector<Value> matmulIndices(Value batch, Value i, Value j) {
  SmallVector<Value> indices;
  if (batch)
    indices.push_back(batch);
  indices.push_back(i);
  indices.push_back(j);
  return indices;
}

} // namespace mlir::dl

#endif // DL_GPUUTILS_H
