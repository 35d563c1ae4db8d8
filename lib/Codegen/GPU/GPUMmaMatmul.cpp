//===- GPUMmaMatmul.cpp - dl-gpu-mma-matmul -------------------------------===//
//
// f16 and bf16 matmuls on tensor cores: each linalg.matmul and
// linalg.batch_matmul on memrefs with f16 (or bf16) A and B and an f32 C
// (dlc's form of a half-precision matmul: it accumulates in f32) becomes a
// gpu.launch whose warps issue nvgpu.mma.sync m16n8k16:
//
//   blocks (ceil(N/64), ceil(M/64), batch), threads (128): 4 warps in 2 x 2
//   workgroup As : 64 x (32+8) halfs, Bs : 32 x (64+8) halfs (the padding
//   spreads the fragment reads of a warp over the shared-memory banks)
//   acc[2][4] : vector<2x2xf32> per thread (each warp: 32 x 32 of C, as
//               2 x 4 mma tiles of 16 x 8: register blocking)
//   for k0 in 0..K step 32:
//     As = A[by*64 .., k0 ..], Bs = B[k0 .., bx*64 ..]   (0 outside A and B;
//          16-byte vector loads where the host found K and N multiples
//          of 8 and A and B aligned, else element by element)
//     gpu.barrier
//     for kk in 0, 16: fragments of As and Bs -> acc[i][j] = mma(a[i], b[j], acc[i][j])
//     gpu.barrier
//   C[row][col] += acc  (inside C only)
//
// Each thread's share of a fragment (which elements of the 16 x 16 A,
// 16 x 8 B and 16 x 8 C it holds) comes from upstream's
// nvgpu::getLaneIdAndValueIdToOperandCoord, the layout the PTX ISA gives
// for mma.m16n8k16; dl-gpu-to-cpu runs the kernel on the CPU with its own
// reading of that table, so the emulated numerics check the two against
// each other. Upstream has no pass that makes tensor-core kernels of a
// linalg.matmul outside the transform dialect, hence this one. The
// pipeline runs it for chips with m16n8k16 (sm_80 and newer).
//
// Left alone (with `report`, a remark says why; dl-gpu-shared-matmul or
// the parallel-loop path takes them): other element types (f32 stays f32:
// tf32 tensor cores would round its inputs), A and B of different types,
// a C that is not f32, user-defined indexing maps.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/GPUUtils.h"
#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Utils/MMAUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUMMAMATMUL
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

// The mma instruction: m16n8k16, f16/bf16 inputs, f32 accumulator.
constexpr int64_t kMmaM = 16, kMmaN = 8, kMmaK = 16;
constexpr int64_t kWarpSize = 32;
// A block: kWarpsM x kWarpsN warps, each computing kTilesM x kTilesN mma
// tiles of C; kBlockK columns of A (rows of B) staged per step.
constexpr int64_t kWarpsM = 2, kWarpsN = 2, kTilesM = 2, kTilesN = 4;
constexpr int64_t kBlockK = 32;
constexpr int64_t kWarpM = kTilesM * kMmaM, kWarpN = kTilesN * kMmaN;
constexpr int64_t kBlockM = kWarpsM * kWarpM, kBlockN = kWarpsN * kWarpN;
constexpr int64_t kThreads = kWarpsM * kWarpsN * kWarpSize;
// Shared-memory rows padded by 16 bytes: the 8 rows one fragment read
// touches then start in 8 different banks, and rows stay 16-byte aligned.
constexpr int64_t kPad = 8;
// Vectorized staging: 8 halfs, one 16-byte load (ld.global.v4.b32).
constexpr int64_t kVectorLanes = 8, kVectorBytes = 16;

/// Why `op` cannot run on tensor cores, or "" when it can.
std::string whyNotMma(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return "not on memrefs";
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation());
      matmul && matmul.hasUserDefinedMaps())
    return "user-defined indexing maps";
  if (auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
      bmm && bmm.hasUserDefinedMaps())
    return "user-defined indexing maps";
  auto element = [&](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  Type a = element(op.getDpsInputs()[0]), b = element(op.getDpsInputs()[1]);
  Type c = element(op.getDpsInits()[0]);
  if (a != b)
    return "A and B have different element types";
  if (!a.isF16() && !a.isBF16())
    return "tensor cores take f16 or bf16 inputs here";
  if (!c.isF32())
    return "the accumulator must be f32";
  return "";
}

/// The (row, column) of value `valueId` of the fragment a lane holds, for
/// the operand `role` of an m16n8k16 mma (B as its transpose, n x k: the
/// layout mma.sync reads B in), as affine maps of the lane.
std::pair<AffineMap, AffineMap> fragmentCoord(OpBuilder &b, Location loc,
                                              nvgpu::MatMulOperandRole role,
                                              int64_t valueId) {
  // Upstream describes the layout for f16; bf16 has the same (16-bit).
  Type f16 = b.getF16Type();
  nvgpu::WarpMatrixInfo info;
  info.operandRole = role;
  switch (role) {
  case nvgpu::MatMulOperandRole::A:
    info.vectorType = VectorType::get({kMmaM, kMmaK}, f16);
    break;
  case nvgpu::MatMulOperandRole::B:
    info.vectorType = VectorType::get({kMmaN, kMmaK}, f16);
    break;
  case nvgpu::MatMulOperandRole::C:
    info.vectorType = VectorType::get({kMmaM, kMmaN}, b.getF32Type());
    break;
  }
  FailureOr<AffineMap> map =
      nvgpu::getLaneIdAndValueIdToOperandCoord(b, loc, info);
  assert(succeeded(map) && "mma.m16n8k16 layouts are known upstream");
  AffineExpr lane = getAffineDimExpr(0, b.getContext());
  AffineExpr value = getAffineConstantExpr(valueId, b.getContext());
  AffineMap ofLane = map->replaceDimsAndSymbols({lane, value}, {}, 1, 0);
  return {ofLane.getSubMap({0}), ofLane.getSubMap({1})};
}

/// Replaces `op` (a matmul or batch matmul on memrefs) by the kernel.
void buildKernel(linalg::LinalgOp op, bool batched) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  dl::MatmulOperands operands(b, loc, op, batched);
  Value a = operands.a, bMat = operands.b, c = operands.c;
  Value m = operands.m, k = operands.k, n = operands.n, batch = operands.batch;
  Type element = cast<MemRefType>(a.getType()).getElementType();
  Type f32 = b.getF32Type();
  auto index = [&](OpBuilder &bb, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, v);
  };
  Value one = index(b, 1);
  Value gridX = arith::CeilDivUIOp::create(b, loc, n, index(b, kBlockN));
  Value gridY = arith::CeilDivUIOp::create(b, loc, m, index(b, kBlockM));
  // Null where A or B has a layout other than the identity: no vectors.
  Value vectorized =
      dl::wholeAlignedVectorRows(b, loc, a, bMat, k, n, kVectorLanes);
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto sharedA = MemRefType::get({kBlockM, kBlockK + kPad}, element,
                                 MemRefLayoutAttrInterface(), workgroup);
  auto sharedB = MemRefType::get({kBlockK, kBlockN + kPad}, element,
                                 MemRefLayoutAttrInterface(), workgroup);
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, gridY, batch, index(b, kThreads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{sharedA, sharedB});
  Block &body = launch.getBody().front();
  OpBuilder kb = OpBuilder::atBlockEnd(&body);
  gpu::KernelDim3 bid = launch.getBlockIds(), tid = launch.getThreadIds();
  Value as = launch.getWorkgroupAttributions()[0];
  Value bs = launch.getWorkgroupAttributions()[1];

  auto add = [&](OpBuilder &bb, Value x, Value y) -> Value {
    return arith::AddIOp::create(bb, loc, x, y);
  };
  auto mul = [&](OpBuilder &bb, Value x, int64_t y) -> Value {
    return arith::MulIOp::create(bb, loc, x, index(bb, y));
  };
  auto lessThan = [&](OpBuilder &bb, Value x, Value y) -> Value {
    return arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ult, x, y);
  };
  // A batch matmul's blocks z run its batch.
  auto indices = [&](Value i, Value j) {
    return dl::matmulIndices(batched ? bid.z : Value(), i, j);
  };
  Value thread = tid.x;
  Value rowBase = mul(kb, bid.y, kBlockM);
  Value colBase = mul(kb, bid.x, kBlockN);
  // This thread's lane, and where its warp's 32 x 32 tile of C lies in the
  // block's (warps in row-major order over the 2 x 2 grid of warp tiles).
  Value warp = arith::DivUIOp::create(kb, loc, thread, index(kb, kWarpSize));
  Value lane = arith::RemUIOp::create(kb, loc, thread, index(kb, kWarpSize));
  Value warpRow = mul(
      kb, arith::DivUIOp::create(kb, loc, warp, index(kb, kWarpsN)), kWarpM);
  Value warpCol = mul(
      kb, arith::RemUIOp::create(kb, loc, warp, index(kb, kWarpsN)), kWarpN);

  // Stages the rows x cols tile of `src` at (i0, j0) into `dst`, 0 outside
  // (iEnd, jEnd): each thread copies every kThreads-th group of `lanes`
  // elements of a row, one element or one 16-byte vector at a time (rows
  // are whole vectors then, so a vector lies inside or wholly outside).
  auto stage = [&](OpBuilder &sb, int64_t lanes, Value src, Value dst,
                   int64_t rows, int64_t cols, Value i0, Value iEnd, Value j0,
                   Value jEnd) {
    int64_t perRow = cols / lanes;
    Type type = lanes == 1 ? element : VectorType::get({lanes}, element);
    auto loop = scf::ForOp::create(sb, loc, index(sb, 0),
                                   index(sb, rows * perRow / kThreads),
                                   index(sb, 1));
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value linear = add(lb, mul(lb, loop.getInductionVar(), kThreads), thread);
    Value r = arith::DivUIOp::create(lb, loc, linear, index(lb, perRow));
    Value col = arith::RemUIOp::create(lb, loc, linear, index(lb, perRow));
    if (lanes != 1)
      col = mul(lb, col, lanes);
    Value i = add(lb, i0, r), j = add(lb, j0, col);
    Value inside = arith::AndIOp::create(lb, loc, lessThan(lb, i, iEnd),
                                         lessThan(lb, j, jEnd));
    auto ifOp = scf::IfOp::create(lb, loc, TypeRange{type}, inside,
                                  /*withElseRegion=*/true);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    Value loaded =
        lanes == 1
            ? memref::LoadOp::create(tb, loc, src, indices(i, j)).getResult()
            : vector::LoadOp::create(tb, loc, type, src, indices(i, j),
                                     /*nontemporal=*/false,
                                     llvm::MaybeAlign(kVectorBytes))
                  .getResult();
    scf::YieldOp::create(tb, loc, loaded);
    OpBuilder eb = ifOp.getElseBodyBuilder();
    scf::YieldOp::create(
        eb, loc, arith::ConstantOp::create(eb, loc, eb.getZeroAttr(type)).getResult());
    if (lanes == 1)
      memref::StoreOp::create(lb, loc, ifOp.getResult(0), dst, ValueRange{r, col});
    else
      vector::StoreOp::create(lb, loc, ifOp.getResult(0), dst, ValueRange{r, col});
  };

  auto accType = VectorType::get({2, 2}, f32);
  Value zeroAcc = arith::ConstantOp::create(
      kb, loc, DenseElementsAttr::get(accType, kb.getF32FloatAttr(0.0f)));
  SmallVector<Value> inits(kTilesM * kTilesN, zeroAcc);
  auto steps = scf::ForOp::create(kb, loc, index(kb, 0), k, index(kb, kBlockK),
                                  inits);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(steps.getBody());
    Value k0 = steps.getInductionVar();
    auto stageBoth = [&](OpBuilder &sb, int64_t lanes) {
      stage(sb, lanes, a, as, kBlockM, kBlockK, rowBase, m, k0, k);
      stage(sb, lanes, bMat, bs, kBlockK, kBlockN, k0, k, colBase, n);
    };
    if (!vectorized) {
      stageBoth(lb, 1);
    } else {
      auto branch = scf::IfOp::create(lb, loc, vectorized, /*withElse=*/true);
      OpBuilder vb = branch.getThenBodyBuilder();
      stageBoth(vb, kVectorLanes);
      OpBuilder sb = branch.getElseBodyBuilder();
      stageBoth(sb, 1);
    }
    gpu::BarrierOp::create(lb, loc);

    auto coord = [&](AffineMap map) -> Value {
      return affine::AffineApplyOp::create(lb, loc, map, ValueRange{lane});
    };
    // A fragment: vector<4x2>, value v = 2 * register + half; B: vector<2x2>.
    auto fragment = [&](Value src, nvgpu::MatMulOperandRole role,
                        int64_t registers, Value rowOffset, Value colOffset,
                        bool transposed) -> Value {
      auto rowType = VectorType::get({2}, element);
      Value result = arith::ConstantOp::create(
          lb, loc,
          DenseElementsAttr::get(VectorType::get({registers, 2}, element),
                                 lb.getZeroAttr(element)));
      for (int64_t reg = 0; reg < registers; ++reg) {
        SmallVector<Value> halves;
        for (int64_t half = 0; half < 2; ++half) {
          auto [rowMap, colMap] = fragmentCoord(lb, loc, role, 2 * reg + half);
          Value row = coord(rowMap), col = coord(colMap);
          // B's layout is given transposed (n x k); Bs is k x n.
          if (transposed)
            std::swap(row, col);
          halves.push_back(memref::LoadOp::create(
              lb, loc, src,
              ValueRange{add(lb, rowOffset, row), add(lb, colOffset, col)}));
        }
        Value pair = vector::FromElementsOp::create(lb, loc, rowType, halves);
        result = vector::InsertOp::create(lb, loc, pair, result,
                                          ArrayRef<int64_t>{reg});
      }
      return result;
    };
    SmallVector<Value> acc(steps.getRegionIterArgs());
    for (int64_t kk = 0; kk < kBlockK; kk += kMmaK) {
      Value kOffset = index(lb, kk);
      SmallVector<Value> fragA, fragB;
      for (int64_t i = 0; i < kTilesM; ++i)
        fragA.push_back(fragment(as, nvgpu::MatMulOperandRole::A, 4,
                                 add(lb, warpRow, index(lb, i * kMmaM)),
                                 kOffset, /*transposed=*/false));
      for (int64_t j = 0; j < kTilesN; ++j)
        fragB.push_back(fragment(bs, nvgpu::MatMulOperandRole::B, 2, kOffset,
                                 add(lb, warpCol, index(lb, j * kMmaN)),
                                 /*transposed=*/true));
      for (int64_t i = 0; i < kTilesM; ++i)
        for (int64_t j = 0; j < kTilesN; ++j) {
          Value &tile = acc[i * kTilesN + j];
          tile = nvgpu::MmaSyncOp::create(lb, loc, fragA[i], fragB[j], tile,
                                          ArrayRef<int64_t>{kMmaM, kMmaN, kMmaK});
        }
    }
    gpu::BarrierOp::create(lb, loc);
    scf::YieldOp::create(lb, loc, acc);
  }

  // C += acc, element by element inside C.
  for (int64_t reg = 0; reg < 2; ++reg)
    for (int64_t half = 0; half < 2; ++half) {
      auto [rowMap, colMap] = fragmentCoord(
          kb, loc, nvgpu::MatMulOperandRole::C, 2 * reg + half);
      Value fragRow = affine::AffineApplyOp::create(kb, loc, rowMap, lane);
      Value fragCol = affine::AffineApplyOp::create(kb, loc, colMap, lane);
      for (int64_t i = 0; i < kTilesM; ++i)
        for (int64_t j = 0; j < kTilesN; ++j) {
          Value row = add(kb, add(kb, rowBase, warpRow),
                          add(kb, fragRow, index(kb, i * kMmaM)));
          Value col = add(kb, add(kb, colBase, warpCol),
                          add(kb, fragCol, index(kb, j * kMmaN)));
          Value inside = arith::AndIOp::create(kb, loc, lessThan(kb, row, m),
                                               lessThan(kb, col, n));
          auto store = scf::IfOp::create(kb, loc, inside,
                                         /*withElseRegion=*/false);
          OpBuilder sb = store.getThenBodyBuilder();
          Value v = vector::ExtractOp::create(
              sb, loc, steps.getResult(i * kTilesN + j),
              ArrayRef<int64_t>{reg, half});
          Value old = memref::LoadOp::create(sb, loc, c, indices(row, col));
          memref::StoreOp::create(sb, loc, arith::AddFOp::create(sb, loc, old, v),
                                  c, indices(row, col));
        }
    }
  gpu::TerminatorOp::create(kb, loc);
  op->erase();
}

struct DLGPUMmaMatmul : public dl::impl::DLGPUMmaMatmulBase<DLGPUMmaMatmul> {
  using DLGPUMmaMatmulBase::DLGPUMmaMatmulBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, bool>> matmuls;
    getOperation()->walk([&](linalg::LinalgOp op) {
      bool batched = isa<linalg::BatchMatmulOp>(op.getOperation());
      if (!batched && !isa<linalg::MatmulOp>(op.getOperation()))
        return;
      std::string why = whyNotMma(op);
      if (why.empty())
        matmuls.push_back({op, batched});
      else if (report)
        op.emitRemark("dl-gpu-mma-matmul: left alone (") << why << ")";
    });
    for (auto [op, batched] : matmuls)
      buildKernel(op, batched);
  }
};

} // namespace
