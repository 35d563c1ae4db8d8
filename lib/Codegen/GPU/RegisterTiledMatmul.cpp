//===- RegisterTiledMatmul.cpp - dl-gpu-shared-matmul's large kernel ------===//
//
// The register-tiled matmul kernel of dl-gpu-shared-matmul (C += A * B on
// memrefs, batched or not: A and B float32, or float16/bfloat16 widened to
// float32 as they are staged, C of their type or float32, accumulated in
// float32 and rounded once into C, as cuBLAS computes half matmuls without
// tensor cores), for matrices large enough to fill its tiles. Each block of 256 threads computes a 128 x 128 tile of C;
// each thread 8 x 8 of its elements, held in registers (16 vector<4>
// accumulators), so that every value read from shared memory feeds 8 FMAs
// instead of one (the one-output-per-thread kernel reached 8 of the 52
// TFLOP/s cuBLAS gives an H100 in float32):
//
//   blocks (ceil(N/128), ceil(M/128), batch), threads (16, 16, 1)
//   workgroup As : memref<8 x 132 x E>  (A's tile transposed: k-major, rows
//                                        padded by 4 against bank conflicts)
//             Bs : memref<8 x 128 x E>
//   for k0 in 0..K step 8:
//     stage: thread t copies A[row0 + t/2][k0 + 4(t%2) .. +4] into
//            As[4(t%2) .. +4][t/2] and B[k0 + t/32][col0 + 4(t%32) .. +4]
//            into Bs[t/32][4(t%32) .. +4] (one aligned vector load each
//            where K and N are multiples of 4 and A, B aligned: the host's
//            flag; element by element, zero outside, else)
//     barrier
//     for kk in 0..8 (unrolled): a = As[kk][4ty..+4], As[kk][64+4ty..+4];
//                                b = Bs[kk][4tx..+4], Bs[kk][64+4tx..+4];
//                                acc[i][j] += a[i] * b[j]
//     barrier
//   C[rows 4ty+i, 64+4ty+i][cols 4tx+j, 64+4tx+j] += acc  (inside C only)
//
// A thread's rows and columns come in two groups of 4, 64 apart, so that the
// 16 threads of a row of the block read 64 consecutive floats of Bs (no bank
// conflict) with 16-byte loads.
//
// Split K: where the tiles of C are too few to fill the GPU (ResNet-18's
// last layers: M = 49, N = 512, K = 4608 at batch 1 made 4 blocks, 0.76 ms
// each on an H100), K is cut into `splits` slices of at least 256, chosen
// on the host so that there are about `minBlocks` blocks; each block
// writes its slice's partial tile into a workspace W[batch * splits][M][N]
// and a second kernel adds the slices into C in order (no atomics: the
// same result at every run, whatever the split). With one slice the
// workspace is still written (one more pass over C: ~1% of a 4096³
// product). Ours: upstream builds such kernels only through the transform
// dialect's tiling and mapping.
//
//===----------------------------------------------------------------------===//

#include "RegisterTiledMatmul.h"

#include "dl/Codegen/GPU/GPUUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace {

constexpr int64_t kTile = 128;    // rows and columns of C per block
constexpr int64_t kDepth = 8;     // k per stage
constexpr int64_t kLanes = 4;     // elements per vector
constexpr int64_t kThreads = 16;  // threads per block edge
constexpr int64_t kPad = 4;       // elements after each row of As
constexpr int64_t kGroups = 2;    // row (and column) groups of a thread
constexpr int64_t kGroupStride = kTile / kGroups;
constexpr int64_t kMinSlice = 256;      // the least K of a split-K slice
constexpr int64_t kReduceThreads = 256; // threads per block of the sum
// The vector accesses to As and Bs assume 16-byte alignment: both buffers
// are whole multiples of 16 bytes (in float32), so each starts aligned.
static_assert(kDepth * (kTile + kPad) * 4 % 16 == 0 && kDepth * kTile * 4 % 16 == 0);

} // namespace

bool mlir::dl::fillsRegisterTiles(linalg::LinalgOp op, bool batched) {
  auto a = cast<MemRefType>(op.getDpsInputs()[0].getType());
  auto b = cast<MemRefType>(op.getDpsInputs()[1].getType());
  unsigned first = batched ? 1 : 0;
  int64_t m = a.getDimSize(first), n = b.getDimSize(first + 1);
  // Dynamic sizes (a batch) are taken to be large.
  auto large = [](int64_t size) {
    return ShapedType::isDynamic(size) || size >= kTile / 2;
  };
  // A and B of one type, float32 or half; C of theirs or float32 (dlc's
  // half matmuls accumulate into float32 and round after).
  auto c = cast<MemRefType>(op.getDpsInits()[0].getType());
  Type element = a.getElementType(), out = c.getElementType();
  bool types = b.getElementType() == element &&
               (element.isF32() || element.isF16() || element.isBF16()) &&
               (out == element || out.isF32());
  return types && large(m) && large(n);
}

void mlir::dl::buildRegisterTiledMatmul(linalg::LinalgOp op, bool batched,
                                        int64_t minBlocks) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = b.getContext();
  dl::MatmulOperands operands(b, loc, op, batched);
  Value a = operands.a, bMat = operands.b, c = operands.c;
  Value m = operands.m, k = operands.k, n = operands.n, batch = operands.batch;
  Type element = cast<MemRefType>(a.getType()).getElementType();
  Type out = cast<MemRefType>(c.getType()).getElementType();
  auto index = [&](OpBuilder &bb, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(bb, loc, value);
  };
  Value one = index(b, 1);
  Value tileSize = index(b, kTile);
  Value gridX = arith::CeilDivUIOp::create(b, loc, n, tileSize);
  Value gridY = arith::CeilDivUIOp::create(b, loc, m, tileSize);
  // splits = clamp(ceil(minBlocks / tiles), 1, max(1, K / 256)); each slice
  // a whole number of stages.
  Value tiles = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, gridX, gridY), batch);
  Value wanted = arith::CeilDivUIOp::create(b, loc, index(b, minBlocks), tiles);
  Value most = arith::MaxUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, k, index(b, kMinSlice)), one);
  Value splits = arith::MaxUIOp::create(
      b, loc, arith::MinUIOp::create(b, loc, wanted, most), one);
  Value slice = arith::MulIOp::create(
      b, loc,
      arith::CeilDivUIOp::create(
          b, loc, arith::CeilDivUIOp::create(b, loc, k, splits), index(b, kDepth)),
      index(b, kDepth));
  Value gridZ = arith::MulIOp::create(b, loc, batch, splits);
  Value slices = arith::MulIOp::create(b, loc, batch, splits);
  // Half-precision operands are widened as they are staged: shared memory,
  // the accumulators and the workspace are float32 whatever the element
  // type, and C is rounded once, when the slices are added into it.
  Type f32 = b.getF32Type();
  auto workspaceType = MemRefType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic}, f32);
  Value workspace = memref::AllocOp::create(b, loc, workspaceType,
                                            ValueRange{slices, m, n});
  Value threads = index(b, kThreads);
  Value vectorized = dl::wholeAlignedVectorRows(b, loc, a, bMat, k, n, kLanes);
  auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto sharedA = MemRefType::get({kDepth, kTile + kPad}, f32,
                                 MemRefLayoutAttrInterface(), workgroup);
  auto sharedB = MemRefType::get({kDepth, kTile}, f32,
                                 MemRefLayoutAttrInterface(), workgroup);
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, gridY, gridZ, threads, threads, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange{sharedA, sharedB});

  OpBuilder kb = OpBuilder::atBlockEnd(&launch.getBody().front());
  gpu::KernelDim3 bid = launch.getBlockIds(), tid = launch.getThreadIds();
  Value as = launch.getWorkgroupAttributions()[0];
  Value bs = launch.getWorkgroupAttributions()[1];
  auto vectorType = VectorType::get({kLanes}, element);
  auto wideType = VectorType::get({kLanes}, f32);
  uint64_t vectorBytes = kLanes * element.getIntOrFloatBitWidth() / 8;
  Value fzero = arith::ConstantOp::create(kb, loc, kb.getZeroAttr(element));
  Value vzero = arith::ConstantOp::create(
      kb, loc, DenseElementsAttr::get(vectorType, kb.getZeroAttr(element)));
  Value wideZero = arith::ConstantOp::create(
      kb, loc, DenseElementsAttr::get(wideType, kb.getZeroAttr(f32)));
  auto add = [&](OpBuilder &bb, Value x, Value y) -> Value {
    return arith::AddIOp::create(bb, loc, x, y);
  };
  auto mul = [&](OpBuilder &bb, Value x, Value y) -> Value {
    return arith::MulIOp::create(bb, loc, x, y);
  };
  auto below = [&](OpBuilder &bb, Value x, Value end) -> Value {
    return arith::CmpIOp::create(bb, loc, arith::CmpIPredicate::ult, x, end);
  };
  // Block z: batch bid.z / splits, slice bid.z % splits of K.
  Value batchIndex = arith::DivUIOp::create(kb, loc, bid.z, splits);
  Value kBegin = mul(kb, arith::RemUIOp::create(kb, loc, bid.z, splits), slice);
  Value kEnd = arith::MinUIOp::create(kb, loc, add(kb, kBegin, slice), k);
  auto indices = [&](Value i, Value j) {
    return dl::matmulIndices(batched ? batchIndex : Value(), i, j);
  };
  Value rowBase = mul(kb, bid.y, index(kb, kTile));
  Value colBase = mul(kb, bid.x, index(kb, kTile));
  Value linear = add(kb, mul(kb, tid.y, index(kb, kThreads)), tid.x);

  /// The 4 elements src[i][j .. j+4] (zero outside iEnd x jEnd): one vector
  /// load where the flag says rows are whole aligned vectors and all 4 are
  /// inside, else element by element.
  auto loadFour = [&](OpBuilder &bb, Value src, Value i, Value iEnd, Value j,
                      Value jEnd) -> Value {
    Value rowInside = below(bb, i, iEnd);
    Value lastInside = below(bb, add(bb, j, index(bb, kLanes - 1)), jEnd);
    Value whole = arith::AndIOp::create(bb, loc, rowInside, lastInside);
    if (vectorized)
      whole = arith::AndIOp::create(bb, loc, whole, vectorized);
    else
      whole = arith::ConstantOp::create(bb, loc, bb.getBoolAttr(false));
    auto ifWhole = scf::IfOp::create(bb, loc, TypeRange{vectorType}, whole,
                                     /*withElseRegion=*/true);
    OpBuilder tb = ifWhole.getThenBodyBuilder();
    Value vector = vector::LoadOp::create(tb, loc, vectorType, src, indices(i, j),
                                          /*nontemporal=*/false,
                                          llvm::MaybeAlign(vectorBytes));
    scf::YieldOp::create(tb, loc, vector);
    OpBuilder eb = ifWhole.getElseBodyBuilder();
    Value partial = vzero;
    for (int64_t q = 0; q < kLanes; ++q) {
      Value jq = add(eb, j, index(eb, q));
      Value inside = arith::AndIOp::create(eb, loc, rowInside, below(eb, jq, jEnd));
      auto ifInside = scf::IfOp::create(eb, loc, TypeRange{element}, inside,
                                        /*withElseRegion=*/true);
      OpBuilder ib = ifInside.getThenBodyBuilder();
      scf::YieldOp::create(
          ib, loc, ValueRange{memref::LoadOp::create(ib, loc, src, indices(i, jq))});
      OpBuilder ob = ifInside.getElseBodyBuilder();
      scf::YieldOp::create(ob, loc, ValueRange{fzero});
      partial = vector::InsertOp::create(eb, loc, ifInside.getResult(0), partial,
                                         ArrayRef<int64_t>{q});
    }
    scf::YieldOp::create(eb, loc, partial);
    Value values = ifWhole.getResult(0);
    if (element != f32)
      values = arith::ExtFOp::create(bb, loc, wideType, values);
    return values;
  };

  // The main loop over K, the 16 accumulators (2 x 2 groups of 4 x 4) as
  // vector<4> loop-carried values: accumulators[(rowGroup * 4 + i) * 2 +
  // columnGroup] holds row rowGroup*64 + 4ty + i, columns columnGroup*64 +
  // 4tx .. +4.
  constexpr int64_t kAccumulators = kGroups * kLanes * kGroups;
  SmallVector<Value> initial(kAccumulators, wideZero);
  auto loop = scf::ForOp::create(kb, loc, kBegin, kEnd, index(kb, kDepth),
                                 initial);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
    Value k0 = loop.getInductionVar();
    // Stage A transposed: thread t, row t/2, k 4(t%2) .. +4.
    Value aRow = arith::DivUIOp::create(lb, loc, linear, index(lb, 2));
    Value aK = mul(lb, arith::RemUIOp::create(lb, loc, linear, index(lb, 2)),
                   index(lb, kLanes));
    Value aValues = loadFour(lb, a, add(lb, rowBase, aRow), m, add(lb, k0, aK), kEnd);
    for (int64_t q = 0; q < kLanes; ++q) {
      Value value = vector::ExtractOp::create(lb, loc, aValues, ArrayRef<int64_t>{q});
      memref::StoreOp::create(lb, loc, value, as,
                              ValueRange{add(lb, aK, index(lb, q)), aRow});
    }
    // Stage B: thread t, k t/32, columns 4(t%32) .. +4.
    Value perRow = index(lb, kTile / kLanes);
    Value bK = arith::DivUIOp::create(lb, loc, linear, perRow);
    Value bColumn = mul(lb, arith::RemUIOp::create(lb, loc, linear, perRow),
                        index(lb, kLanes));
    Value bValues = loadFour(lb, bMat, add(lb, k0, bK), kEnd, add(lb, colBase, bColumn), n);
    vector::StoreOp::create(lb, loc, bValues, bs, ValueRange{bK, bColumn});
    gpu::BarrierOp::create(lb, loc);

    SmallVector<Value> accumulators(loop.getRegionIterArgs());
    Value rowOffset = mul(lb, tid.y, index(lb, kLanes));
    Value columnOffset = mul(lb, tid.x, index(lb, kLanes));
    for (int64_t kk = 0; kk < kDepth; ++kk) {
      Value depth = index(lb, kk);
      SmallVector<Value> rows, columns;
      for (int64_t g = 0; g < kGroups; ++g) {
        Value group = index(lb, g * kGroupStride);
        rows.push_back(vector::LoadOp::create(
            lb, loc, wideType, as, ValueRange{depth, add(lb, group, rowOffset)}));
        columns.push_back(vector::LoadOp::create(
            lb, loc, wideType, bs, ValueRange{depth, add(lb, group, columnOffset)}));
      }
      for (int64_t g = 0; g < kGroups; ++g)
        for (int64_t i = 0; i < kLanes; ++i) {
          Value x = vector::ExtractOp::create(lb, loc, rows[g], ArrayRef<int64_t>{i});
          Value splat = vector::BroadcastOp::create(lb, loc, wideType, x);
          for (int64_t h = 0; h < kGroups; ++h) {
            Value &acc = accumulators[(g * kLanes + i) * kGroups + h];
            acc = vector::FMAOp::create(lb, loc, splat, columns[h], acc);
          }
        }
    }
    gpu::BarrierOp::create(lb, loc);
    scf::YieldOp::create(lb, loc, accumulators);
  }

  // W[bid.z][row][col] = the accumulators, inside C only.
  Value rowOffset = mul(kb, tid.y, index(kb, kLanes));
  Value columnOffset = mul(kb, tid.x, index(kb, kLanes));
  for (int64_t g = 0; g < kGroups; ++g)
    for (int64_t i = 0; i < kLanes; ++i) {
      Value row = add(kb, add(kb, rowBase, index(kb, g * kGroupStride + i)), rowOffset);
      auto ifRow = scf::IfOp::create(kb, loc, below(kb, row, m), /*withElse=*/false);
      OpBuilder rb = ifRow.getThenBodyBuilder();
      for (int64_t h = 0; h < kGroups; ++h) {
        Value acc = loop.getResult((g * kLanes + i) * kGroups + h);
        Value column0 = add(rb, add(rb, colBase, index(rb, h * kGroupStride)),
                            columnOffset);
        for (int64_t j = 0; j < kLanes; ++j) {
          Value column = add(rb, column0, index(rb, j));
          auto ifColumn = scf::IfOp::create(rb, loc, below(rb, column, n),
                                            /*withElse=*/false);
          OpBuilder cb = ifColumn.getThenBodyBuilder();
          Value value = vector::ExtractOp::create(cb, loc, acc, ArrayRef<int64_t>{j});
          memref::StoreOp::create(cb, loc, value, workspace,
                                  ValueRange{bid.z, row, column});
        }
      }
    }
  gpu::TerminatorOp::create(kb, loc);

  // C[batch][i][j] += sum over the slices s of W[batch * splits + s][i][j],
  // in order: 256 threads per block along i * N + j, blocks y the batch.
  b.setInsertionPointAfter(launch);
  Value elements = arith::MulIOp::create(b, loc, m, n);
  Value reduceThreads = index(b, kReduceThreads);
  Value reduceBlocks = arith::CeilDivUIOp::create(b, loc, elements, reduceThreads);
  auto reduce = gpu::LaunchOp::create(b, loc, reduceBlocks, batch, one, reduceThreads,
                                      one, one);
  {
    OpBuilder rb = OpBuilder::atBlockEnd(&reduce.getBody().front());
    gpu::KernelDim3 rbid = reduce.getBlockIds(), rtid = reduce.getThreadIds();
    Value linear = add(rb, mul(rb, rbid.x, index(rb, kReduceThreads)), rtid.x);
    auto inside = scf::IfOp::create(rb, loc, below(rb, linear, elements),
                                    /*withElse=*/false);
    OpBuilder ib = inside.getThenBodyBuilder();
    Value i = arith::DivUIOp::create(ib, loc, linear, n);
    Value j = arith::RemUIOp::create(ib, loc, linear, n);
    Value first = mul(ib, rbid.y, splits);
    Value zero = arith::ConstantOp::create(ib, loc, ib.getZeroAttr(f32));
    auto sum = scf::ForOp::create(ib, loc, index(ib, 0), splits, index(ib, 1),
                                  ValueRange{zero});
    {
      OpBuilder sb = OpBuilder::atBlockBegin(sum.getBody());
      Value part = memref::LoadOp::create(
          sb, loc, workspace, ValueRange{add(sb, first, sum.getInductionVar()), i, j});
      scf::YieldOp::create(
          sb, loc, ValueRange{arith::AddFOp::create(sb, loc, sum.getRegionIterArgs()[0],
                                                    part)});
    }
    SmallVector<Value> at =
        dl::matmulIndices(batched ? rbid.y : Value(), i, j);
    Value old = memref::LoadOp::create(ib, loc, c, at);
    if (out != f32)
      old = arith::ExtFOp::create(ib, loc, f32, old);
    Value total = arith::AddFOp::create(ib, loc, old, sum.getResult(0));
    if (out != f32)
      total = arith::TruncFOp::create(ib, loc, out, total);
    memref::StoreOp::create(ib, loc, total, c, at);
    gpu::TerminatorOp::create(rb, loc);
  }
  memref::DeallocOp::create(b, loc, workspace);
  op->erase();
}
