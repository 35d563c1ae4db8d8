//===- AsyncParallel.cpp - dl-async-parallel ------------------------------===//
//
// Runs each outermost scf.parallel on the threads of MLIR's async runtime
// (libmlir_async_runtime, shipped with the MLIR wheels), with a thread count
// read at run time. Ours: upstream's async-parallel-for computes its block
// count from a compile-time worker count (or the pool size) with an
// over-sharding factor, so a caller cannot ask for, say, one thread. Here:
//
//   threads = @dlc_num_threads > 0 ? @dlc_num_threads : num_worker_threads
//   tasks   = min(max(threads, 1), tripCount)
//   chunk   = ceil(tripCount / tasks)
//   if tasks <= 1:  the loop, inline
//   else:           group of tasks - 1;  for t in 1..tasks:
//                     async.execute { iterations [t*chunk, (t+1)*chunk) }
//                   iterations [0, chunk) on the calling thread; await all
//
// Only the first dimension is split; further dimensions stay an scf.parallel
// inside each chunk (lowered to sequential loops later). Loops with
// reductions are left alone. async.execute captures the values it uses; the
// async-to-async-runtime pass outlines each task into a coroutine.
//
//===----------------------------------------------------------------------===//

#include "dl/Passes.h"

#include "mlir/Dialect/Async/IR/Async.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLASYNCPARALLEL
#include "dl/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kThreadsSymbol = "dlc_num_threads";

/// The public i64 global holding the requested thread count (0: all).
memref::GlobalOp getOrCreateThreadsGlobal(ModuleOp module) {
  if (auto global = module.lookupSymbol<memref::GlobalOp>(kThreadsSymbol))
    return global;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type i64 = b.getI64Type();
  auto type = MemRefType::get({}, i64);
  return memref::GlobalOp::create(
      b, module.getLoc(), kThreadsSymbol, b.getStringAttr("public"), type,
      DenseElementsAttr::get(RankedTensorType::get({}, i64),
                             b.getI64IntegerAttr(0).getValue()),
      /*constant=*/false, /*alignment=*/IntegerAttr());
}

/// Iterations [begin, end) (step of dimension 0) of `loop`, as an scf.for
/// over dimension 0 around an scf.parallel over the others, if any.
void emitChunk(OpBuilder &b, Location loc, scf::ParallelOp loop, Value begin,
               Value end) {
  Value step = loop.getStep()[0];
  auto outer = scf::ForOp::create(b, loc, begin, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(outer.getBody()->getTerminator());
  IRMapping mapping;
  mapping.map(loop.getInductionVars()[0], outer.getInductionVar());
  auto cloneBody = [&](OpBuilder &inner) {
    for (Operation &op : loop.getBody()->without_terminator())
      inner.clone(op, mapping);
  };
  if (loop.getNumLoops() == 1) {
    cloneBody(b);
    return;
  }
  auto rest = scf::ParallelOp::create(
      b, loc, loop.getLowerBound().drop_front(),
      loop.getUpperBound().drop_front(), loop.getStep().drop_front(),
      [&](OpBuilder &inner, Location, ValueRange ivs) {
        SmallVector<Value> oldIvs = loop.getInductionVars();
        for (auto [old, fresh] : llvm::zip(ArrayRef(oldIvs).drop_front(), ivs))
          mapping.map(old, fresh);
        cloneBody(inner);
      });
  (void)rest;
}

void lower(scf::ParallelOp loop, memref::GlobalOp threadsGlobal) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value lower = loop.getLowerBound()[0];
  Value upper = loop.getUpperBound()[0];
  Value step = loop.getStep()[0];
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);

  // tripCount = max(ceil((upper - lower) / step), 0)
  Value range = arith::SubIOp::create(b, loc, upper, lower);
  Value trips = arith::CeilDivSIOp::create(b, loc, range, step);
  trips = arith::MaxSIOp::create(b, loc, trips, zero);

  Value global = memref::GetGlobalOp::create(b, loc, threadsGlobal.getType(),
                                             threadsGlobal.getSymName());
  Value requested = memref::LoadOp::create(b, loc, global, ValueRange{});
  requested = arith::IndexCastOp::create(b, loc, b.getIndexType(), requested);
  Value workers = async::RuntimeNumWorkerThreadsOp::create(b, loc);
  Value positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                         requested, zero);
  Value threads = arith::SelectOp::create(b, loc, positive, requested, workers);
  threads = arith::MaxSIOp::create(b, loc, threads, one);
  Value tasks = arith::MinSIOp::create(b, loc, threads, trips);
  Value atLeastOne = arith::MaxSIOp::create(b, loc, tasks, one);
  Value chunk = arith::CeilDivSIOp::create(b, loc, trips, atLeastOne);
  Value chunkSpan = arith::MulIOp::create(b, loc, chunk, step);

  // [lower + t * chunkSpan, min(upper, lower + (t + 1) * chunkSpan))
  auto chunkBounds = [&](OpBuilder &builder, Value task) {
    Value offset = arith::MulIOp::create(builder, loc, task, chunkSpan);
    Value begin = arith::AddIOp::create(builder, loc, lower, offset);
    Value next = arith::AddIOp::create(builder, loc, begin, chunkSpan);
    Value end = arith::MinSIOp::create(builder, loc, next, upper);
    return std::make_pair(begin, end);
  };

  Value inline_ = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                        tasks, one);
  auto branch = scf::IfOp::create(b, loc, inline_, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    emitChunk(b, loc, loop, lower, upper);

    b.setInsertionPointToStart(branch.elseBlock());
    Value others = arith::SubIOp::create(b, loc, tasks, one);
    Value group = async::CreateGroupOp::create(b, loc, others);
    auto spawn = scf::ForOp::create(b, loc, one, tasks, one);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(spawn.getBody()->getTerminator());
      Value task = spawn.getInductionVar();
      auto execute = async::ExecuteOp::create(
          b, loc, TypeRange{}, ValueRange{}, ValueRange{},
          [&](OpBuilder &body, Location, ValueRange) {
            auto [begin, end] = chunkBounds(body, task);
            emitChunk(body, loc, loop, begin, end);
            async::YieldOp::create(body, loc, ValueRange{});
          });
      async::AddToGroupOp::create(b, loc, b.getIndexType(), execute.getToken(),
                                  group);
    }
    auto [begin, end] = chunkBounds(b, zero);
    emitChunk(b, loc, loop, begin, end);
    async::AwaitAllOp::create(b, loc, group);
  }
  loop.erase();
}

struct DLAsyncParallelPass
    : public dl::impl::DLAsyncParallelBase<DLAsyncParallelPass> {
  using DLAsyncParallelBase::DLAsyncParallelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      if (loop.getNumReductions() == 0 &&
          !loop->getParentOfType<scf::ParallelOp>() &&
          !loop->getParentOfType<async::ExecuteOp>())
        loops.push_back(loop);
    });
    if (loops.empty())
      return;
    memref::GlobalOp threads = getOrCreateThreadsGlobal(module);
    for (scf::ParallelOp loop : loops)
      lower(loop, threads);
  }
};

} // namespace
