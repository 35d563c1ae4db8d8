//===- GPUSharedMatmul.cpp - dl-gpu-shared-matmul -------------------------===//
//
// The classic shared-memory matmul kernel for linalg.matmul and
// linalg.batch_matmul on memrefs (C += A * B), as a gpu.launch:
//
//   blocks (ceil(N/T), ceil(M/T), batch), threads (T, T, 1),
//   workgroup As, Bs : memref<TxTxE, #gpu.address_space<workgroup>>
//   row = by*T + ty, col = bx*T + tx
//   acc = for k0 in 0..K step T:
//           As[ty][tx] = A[row][k0+tx]   (0 outside A)
//           Bs[ty][tx] = B[k0+ty][col]   (0 outside B)
//           gpu.barrier
//           acc += sum_k As[ty][k] * Bs[k][tx]
//           gpu.barrier
//   if row < M and col < N: C[row][col] += acc
//
// Each element of A and B is read from global memory once per tile instead
// of T times, and the loads of a warp are coalesced (tx runs along the
// contiguous dimension of A and B). Where K and N are multiples of 4 and A
// and B are aligned to 4 elements (a flag computed on the host; T must be a
// multiple of 4), the first T*T/4 threads stage each tile instead, 4
// consecutive elements per thread with one aligned vector load
// (ld.global.v4.f32), and element by element where the 4 cross the edge. Upstream's GPU path has no such
// promotion outside the transform dialect (linalg promote + mapping), hence
// this pass for dl-gpu-pipeline; with dl-gpu-to-cpu the same kernel runs
// on the CPU.
//
// Float32, float16 and bfloat16 matmuls whose M and N are at least 64 (or
// dynamic) get the register-tiled kernel instead (RegisterTiledMatmul.cpp:
// 128 x 128 tiles of C per block, 8 x 8 per thread, accumulated in float32;
// C float32 or of A's type); `register-tiles=false` turns it off. Half
// matmuls (f16 x f16 into f32, as dlc lowers them) reach it where tensor
// cores are off or missing (before sm_80): left to the parallel-loop path,
// they ran at 1.6 TFLOP/s on an H100, 0.3 to 1% of cuBLAS.
//
// Left alone (the generic parallel-loop path handles them): matmuls with
// user-defined indexing maps, non-float types, or mixed element types the
// register-tiled kernel does not take (small ones among them).
//
//===----------------------------------------------------------------------===//

#include "RegisterTiledMatmul.h"
#include "dl/Codegen/GPU/GPUUtils.h"
#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUSHAREDMATMUL
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// The element type when A, B and C share one float type, else null.
Type sharedFloatType(linalg::LinalgOp op) {
  Type type;
  for (OpOperand &operand : op->getOpOperands()) {
    auto memref = dyn_cast<MemRefType>(operand.get().getType());
    if (!memref || !isa<FloatType>(memref.getElementType()))
      return Type();
    if (type && type != memref.getElementType())
      return Type();
    type = memref.getElementType();
  }
  return type;
}

/// Replaces `op` (a matmul or batch matmul on memrefs) by the kernel.
void buildKernel(linalg::LinalgOp op, bool batched, int64_t tile) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  dl::MatmulOperands operands(b, loc, op, batched);
  Value a = operands.a, bMat = operands.b, c = operands.c;
  Value m = operands.m, k = operands.k, n = operands.n, batch = operands.batch;
  Type element = cast<MemRefType>(c.getType()).getElementType();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value t = arith::ConstantIndexOp::create(b, loc, tile);
  auto ceilDiv = [&](Value x) -> Value {
    return arith::CeilDivUIOp::create(b, loc, x, t);
  };
  auto shared = MemRefType::get(
      {tile, tile}, element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
  Value gridX = ceilDiv(n);
  Value gridY = ceilDiv(m);
  // The flag of the vectorized staging (null: tiles of a width 4 does not
  // divide, or A/B with a layout other than the identity).
  Value vectorized;
  if (tile % 4 == 0)
    vectorized = dl::wholeAlignedVectorRows(b, loc, a, bMat, k, n, 4);
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, gridY, batch, t, t, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{shared, shared});
  Block &body = launch.getBody().front();
  OpBuilder kb = OpBuilder::atBlockEnd(&body);
  gpu::KernelDim3 bid = launch.getBlockIds(), tid = launch.getThreadIds();
  Value as = launch.getWorkgroupAttributions()[0];
  Value bs = launch.getWorkgroupAttributions()[1];
  Value zero = arith::ConstantIndexOp::create(kb, loc, 0);
  Value tileSize = arith::ConstantIndexOp::create(kb, loc, tile);
  Value step = arith::ConstantIndexOp::create(kb, loc, 1);
  Value fzero = arith::ConstantOp::create(kb, loc, kb.getZeroAttr(element));
  auto mulAdd = [&](OpBuilder &bb, Value x, Value y, Value z) -> Value {
    return arith::AddIOp::create(bb, loc,
                                 arith::MulIOp::create(bb, loc, x, y), z);
  };
  Value row = mulAdd(kb, bid.y, tileSize, tid.y);
  Value col = mulAdd(kb, bid.x, tileSize, tid.x);
  // A batch matmul's blocks z run its batch.
  auto indices = [&](Value i, Value j) {
    return dl::matmulIndices(batched ? bid.z : Value(), i, j);
  };
  auto inBounds = [&](OpBuilder &bb, Value i, Value iEnd, Value j,
                      Value jEnd) -> Value {
    Value ci = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ult, i,
                                     iEnd);
    Value cj = arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ult, j,
                                     jEnd);
    return arith::AndIOp::create(bb, loc, ci, cj);
  };
  /// src[i][j] where inside (iEnd, jEnd), else 0.
  auto guardedLoad = [&](OpBuilder &bb, Value src, Value i, Value iEnd,
                         Value j, Value jEnd) -> Value {
    auto ifOp = scf::IfOp::create(bb, loc, TypeRange{element},
                                  inBounds(bb, i, iEnd, j, jEnd),
                                  /*withElseRegion=*/true);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    scf::YieldOp::create(tb, loc,
                         ValueRange{memref::LoadOp::create(tb, loc, src,
                                                           indices(i, j))});
    OpBuilder eb = ifOp.getElseBodyBuilder();
    scf::YieldOp::create(eb, loc, ValueRange{fzero});
    return ifOp.getResult(0);
  };

  // Vectorized staging: each of the first T*T/4 threads copies 4
  // consecutive elements of a tile row with one 16-byte (for f32) load, where
  // the rows of A and B start aligned (K and N multiples of 4, 4-element
  // aligned bases: checked on the host, one uniform flag) and the 4 lie
  // inside the matrix; else element by element as above.
  auto stageVectors = [&](OpBuilder &sb, Value k0) {
    constexpr int64_t lanes = 4;
    int64_t perRow = tile / lanes;
    Value quarter = arith::ConstantIndexOp::create(sb, loc, perRow);
    Value four = arith::ConstantIndexOp::create(sb, loc, lanes);
    Value linear = mulAdd(sb, tid.y, tileSize, tid.x);
    Value r = arith::DivUIOp::create(sb, loc, linear, quarter);
    Value c = arith::MulIOp::create(
        sb, loc, arith::RemUIOp::create(sb, loc, linear, quarter), four);
    Value active = arith::CmpIOp::create(
        sb, loc, arith::CmpIPredicate::ult, linear,
        arith::ConstantIndexOp::create(sb, loc, tile * perRow));
    auto vectorType = VectorType::get({lanes}, element);
    uint64_t bytes = lanes * element.getIntOrFloatBitWidth() / 8;
    // dst[r][c..c+3] = src[i][j..j+3]
    auto copy = [&](OpBuilder &cb, Value src, Value dst, Value i, Value iEnd,
                    Value j, Value jEnd) {
      Value last = arith::AddIOp::create(
          cb, loc, j, arith::ConstantIndexOp::create(cb, loc, lanes - 1));
      auto whole = scf::IfOp::create(cb, loc, inBounds(cb, i, iEnd, last, jEnd),
                                     /*withElse=*/true);
      OpBuilder tb = whole.getThenBodyBuilder();
      Value v = vector::LoadOp::create(tb, loc, vectorType, src, indices(i, j),
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(bytes));
      vector::StoreOp::create(tb, loc, v, dst, ValueRange{r, c});
      OpBuilder eb = whole.getElseBodyBuilder();
      for (int64_t q = 0; q < lanes; ++q) {
        Value offset = arith::ConstantIndexOp::create(eb, loc, q);
        Value jq = arith::AddIOp::create(eb, loc, j, offset);
        Value cq = arith::AddIOp::create(eb, loc, c, offset);
        memref::StoreOp::create(eb, loc, guardedLoad(eb, src, i, iEnd, jq, jEnd),
                                dst, ValueRange{r, cq});
      }
    };
    auto ifActive = scf::IfOp::create(sb, loc, active, /*withElse=*/false);
    OpBuilder ab = ifActive.getThenBodyBuilder();
    Value rowBase = arith::MulIOp::create(ab, loc, bid.y, tileSize);
    Value colBase = arith::MulIOp::create(ab, loc, bid.x, tileSize);
    // As[r][c..] = A[by*T + r][k0 + c..];  Bs[r][c..] = B[k0 + r][bx*T + c..]
    copy(ab, a, as, arith::AddIOp::create(ab, loc, rowBase, r), m,
         arith::AddIOp::create(ab, loc, k0, c), k);
    copy(ab, bMat, bs, arith::AddIOp::create(ab, loc, k0, r), k,
         arith::AddIOp::create(ab, loc, colBase, c), n);
  };

  auto tiles = scf::ForOp::create(kb, loc, zero, k, tileSize, ValueRange{fzero});
  {
    OpBuilder lb = OpBuilder::atBlockBegin(tiles.getBody());
    Value k0 = tiles.getInductionVar();
    Value acc = tiles.getRegionIterArgs()[0];
    // One element of each tile per thread.
    auto stageScalar = [&](OpBuilder &sb) {
      Value ka = arith::AddIOp::create(sb, loc, k0, tid.x);
      Value va = guardedLoad(sb, a, row, m, ka, k);
      memref::StoreOp::create(sb, loc, va, as, ValueRange{tid.y, tid.x});
      Value kbIndex = arith::AddIOp::create(sb, loc, k0, tid.y);
      Value vb = guardedLoad(sb, bMat, kbIndex, k, col, n);
      memref::StoreOp::create(sb, loc, vb, bs, ValueRange{tid.y, tid.x});
    };
    if (!vectorized) {
      stageScalar(lb);
    } else {
      auto branch = scf::IfOp::create(lb, loc, vectorized, /*withElse=*/true);
      OpBuilder vb = branch.getThenBodyBuilder();
      stageVectors(vb, k0);
      OpBuilder eb = branch.getElseBodyBuilder();
      stageScalar(eb);
    }
    gpu::BarrierOp::create(lb, loc);
    auto inner =
        scf::ForOp::create(lb, loc, zero, tileSize, step, ValueRange{acc});
    {
      OpBuilder ib = OpBuilder::atBlockBegin(inner.getBody());
      Value kk = inner.getInductionVar();
      Value x = memref::LoadOp::create(ib, loc, as, ValueRange{tid.y, kk});
      Value y = memref::LoadOp::create(ib, loc, bs, ValueRange{kk, tid.x});
      Value prod = arith::MulFOp::create(ib, loc, x, y);
      Value sum = arith::AddFOp::create(ib, loc, inner.getRegionIterArgs()[0],
                                        prod);
      scf::YieldOp::create(ib, loc, ValueRange{sum});
    }
    gpu::BarrierOp::create(lb, loc);
    scf::YieldOp::create(lb, loc, inner.getResults());
  }
  auto store = scf::IfOp::create(kb, loc, inBounds(kb, row, m, col, n),
                                 /*withElseRegion=*/false);
  {
    OpBuilder sb = store.getThenBodyBuilder();
    Value old = memref::LoadOp::create(sb, loc, c, indices(row, col));
    Value sum = arith::AddFOp::create(sb, loc, old, tiles.getResult(0));
    memref::StoreOp::create(sb, loc, sum, c, indices(row, col));
  }
  gpu::TerminatorOp::create(kb, loc);
  op->erase();
}

struct DLGPUSharedMatmul
    : public dl::impl::DLGPUSharedMatmulBase<DLGPUSharedMatmul> {
  using DLGPUSharedMatmulBase::DLGPUSharedMatmulBase;

  void runOnOperation() override {
    if (tile < 1 || tile > 32) {
      getOperation()->emitError("dl-gpu-shared-matmul: tile must be in "
                                "1..32 (tile x tile threads per block), but "
                                "got ")
          << static_cast<int64_t>(tile);
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, bool>> matmuls;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
        if (!matmul.hasUserDefinedMaps())
          matmuls.push_back({op, false});
      } else if (auto bmm =
                     dyn_cast<linalg::BatchMatmulOp>(op.getOperation())) {
        if (!bmm.hasUserDefinedMaps())
          matmuls.push_back({op, true});
      }
    });
    for (auto [op, batched] : matmuls) {
      if (registerTiles && dl::fillsRegisterTiles(op, batched))
        dl::buildRegisterTiledMatmul(op, batched, minBlocks);
      else if (sharedFloatType(op))
        buildKernel(op, batched, tile);
    }
  }
};

} // namespace
