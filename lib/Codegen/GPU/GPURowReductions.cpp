//===- GPURowReductions.cpp - dl-gpu-row-reductions -----------------------===//
//
// A reduction along the contiguous dimension of its input (the mean and
// variance of a layer norm, a softmax's max and sum, the sum of a whole
// tensor) as a kernel of one block per output element: the block's threads
// stride along the reduced elements (consecutive threads, consecutive
// addresses), then combine their partial results in workgroup memory, a tree
// of log2(threads) steps between barriers:
//
//   blocks (rows), threads (T)        rows: product of the parallel extents
//   p = delinearize(block id)         T: 32..256, the power of two covering
//   acc_i = identity_i                   the reduced extent (256 if dynamic)
//   for k = tid; k < R; k += T:  acc_i = acc_i (+) x_i(p, delinearize(k))
//   s_i[tid] = acc_i; barrier
//   for h = T/2 .. 1: if tid < h: s_i[tid] = s_i[tid] (+) s_i[tid + h]; barrier
//   if tid == 0: out_i[p] = out_i[p] (+) s_i[0]
//
// convert-linalg-to-parallel-loops gives each output element one thread
// that reads its row alone (the threads of a warp 768 floats apart in a
// BERT-base layer norm: 4 layer-norm reductions took 0.56 of 1.48 ms on an
// H200 at batch 8); a full reduction ran on one thread of one block
// (dl-gpu-scalar-kernels).
//
// Taken: linalg ops on memrefs (named ops generalized), outside any
// scf.parallel, whose loops are the parallel ones then the reductions (as
// dl-gpu-parallel-outer leaves them), with one input read along the
// reductions, whose innermost loop is that input's last index, whose reduced extent is at least 32 (or dynamic),
// and whose every yielded value is `out_i (+) x_i` with (+) one of addf,
// maximumf, maxnumf, minimumf, minnumf on floats, `out_i` used by nothing
// else and `x_i` computed from the inputs and indices alone by ops without
// side effects. The result is the reduction reassociated (floating-point
// sums differ in the last bits, as cuBLAS's and PyTorch's do). Left to the
// parallel-loop path: everything else (a reduction across the contiguous
// dimension, such as a channels-last pool, maps its parallel dimension to
// consecutive threads there; so do contractions, which the matmul kernels
// take when they can).
//
// Ours: upstream's GPU path has no reduction strategy outside the transform
// dialect (and its vector-distribution patterns need subgroup shuffles,
// which dl-gpu-to-cpu does not emulate; workgroup memory and barriers it
// does).
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUROWREDUCTIONS
#include "dl/Codegen/GPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

constexpr int64_t kMinExtent = 32;
constexpr int64_t kMaxThreads = 256;

bool isCombiner(Operation *op) {
  return isa<arith::AddFOp, arith::MaximumFOp, arith::MaxNumFOp,
             arith::MinimumFOp, arith::MinNumFOp>(op);
}

/// The identity of a combiner on `type`.
TypedAttr identity(Operation *combiner, FloatType type) {
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  if (isa<arith::AddFOp>(combiner))
    return FloatAttr::get(type, llvm::APFloat::getZero(sem));
  bool max = isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner);
  return FloatAttr::get(type, llvm::APFloat::getInf(sem, /*Negative=*/max));
}

/// The number of leading parallel loops of `op` when it is a reduction this
/// pass takes, else -1.
int64_t rowReduction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0 ||
      op->getParentOfType<scf::ParallelOp>() ||
      op->getParentOfType<gpu::LaunchOp>())
    return -1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t numLoops = iterators.size();
  int64_t parallel = 0;
  while (parallel < numLoops &&
         iterators[parallel] == utils::IteratorType::parallel)
    ++parallel;
  if (parallel == numLoops)
    return -1;
  // One input read along the reduction: contractions (a broadcast batch
  // matmul the matmul kernels refused) reuse each element of A and B across
  // outputs, which a block per output would read once per output.
  int64_t streamed = llvm::count_if(op.getDpsInputOperands(), [&](OpOperand *in) {
    AffineMap map = op.getMatchingIndexingMap(in);
    for (int64_t d = parallel; d < numLoops; ++d)
      if (map.isFunctionOfDim(d))
        return true;
    return false;
  });
  if (streamed > 1)
    return -1;
  for (int64_t d = parallel; d < numLoops; ++d)
    if (iterators[d] != utils::IteratorType::reduction)
      return -1;
  // The reduced extent.
  int64_t extent = 1;
  for (int64_t size : ArrayRef(op.getStaticLoopRanges()).drop_front(parallel)) {
    if (ShapedType::isDynamic(size)) {
      extent = ShapedType::kDynamic;
      break;
    }
    extent *= size;
  }
  if (!ShapedType::isDynamic(extent) && extent < kMinExtent)
    return -1;
  // Consecutive threads must read consecutive elements of some input.
  bool contiguous = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto memref = dyn_cast<MemRefType>(input->get().getType());
    if (!memref || !memref.getLayout().isIdentity() || map.getNumResults() == 0)
      continue;
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    contiguous |= last && last.getPosition() == numLoops - 1;
  }
  if (!contiguous)
    return -1;
  // The outputs: indexed by the parallel loops alone, each yielded value
  // out_i (+) x_i.
  Block &body = op->getRegion(0).front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (int64_t d = parallel; d < numLoops; ++d)
      if (map.isFunctionOfDim(d))
        return -1;
    if (!isa<FloatType>(getElementTypeOrSelf(init.get().getType())))
      return -1;
    BlockArgument out = op.getMatchingBlockArgument(&init);
    Value yielded = yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs());
    Operation *combiner = yielded.getDefiningOp();
    if (!combiner || !isCombiner(combiner) || combiner->getBlock() != &body ||
        !out.hasOneUse() || out.getUses().begin()->getOwner() != combiner ||
        combiner->getOperand(0) == combiner->getOperand(1) ||
        !yielded.hasOneUse())
      return -1;
  }
  // Everything but the combiners reads no output and has no side effect.
  for (Operation &inner : body.without_terminator()) {
    if (!isMemoryEffectFree(&inner) || inner.getNumRegions() != 0)
      return -1;
    if (isCombiner(&inner) && llvm::any_of(inner.getUsers(), [&](Operation *u) {
          return u == yield;
        }))
      continue;
    for (Value operand : inner.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand))
        if (arg.getOwner() == &body &&
            arg.getArgNumber() >= op.getNumDpsInputs())
          return -1;
  }
  return parallel;
}

/// Row-major indices of `linear` in `sizes`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> sizes) {
  SmallVector<Value> indices(sizes.size());
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    if (d == 0) {
      indices[d] = linear;
      break;
    }
    indices[d] = arith::RemUIOp::create(b, loc, linear, sizes[d]);
    linear = arith::DivUIOp::create(b, loc, linear, sizes[d]);
  }
  return indices;
}

/// `map` applied to the loop indices `loops`.
SmallVector<Value> apply(OpBuilder &b, Location loc, AffineMap map,
                         ArrayRef<Value> loops) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(loops[dim.getPosition()]);
    else
      indices.push_back(affine::AffineApplyOp::create(
          b, loc, AffineMap::get(map.getNumDims(), 0, expr), loops));
  }
  return indices;
}

void buildKernel(linalg::GenericOp op, int64_t parallel) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  int64_t numLoops = op.getNumLoops();
  SmallVector<Value> sizes;
  for (Range range : cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  ArrayRef<Value> rowSizes = ArrayRef(sizes).take_front(parallel);
  ArrayRef<Value> reducedSizes = ArrayRef(sizes).drop_front(parallel);
  int64_t extent = 1;
  for (int64_t size : ArrayRef(op.getStaticLoopRanges()).drop_front(parallel))
    extent = ShapedType::isDynamic(size) || ShapedType::isDynamic(extent)
                 ? ShapedType::kDynamic
                 : extent * size;
  int64_t threads = ShapedType::isDynamic(extent)
                        ? kMaxThreads
                        : std::min<int64_t>(kMaxThreads,
                                            llvm::PowerOf2Ceil(extent));
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rows = one, reduced = one;
  for (Value size : rowSizes)
    rows = arith::MulIOp::create(b, loc, rows, size);
  for (Value size : reducedSizes)
    reduced = arith::MulIOp::create(b, loc, reduced, size);

  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<Operation *> combiners;
  SmallVector<Type> sharedTypes;
  for (Value yielded : yield.getOperands()) {
    combiners.push_back(yielded.getDefiningOp());
    sharedTypes.push_back(MemRefType::get(
        {threads}, yielded.getType(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(b.getContext(),
                                   gpu::AddressSpace::Workgroup)));
  }
  Value t = arith::ConstantIndexOp::create(b, loc, threads);
  auto launch = gpu::LaunchOp::create(
      b, loc, rows, one, one, t, one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{}, TypeRange(sharedTypes));
  OpBuilder kb = OpBuilder::atBlockEnd(&launch.getBody().front());
  Value tid = launch.getThreadIds().x;
  SmallVector<Value> loops =
      delinearize(kb, loc, launch.getBlockIds().x, rowSizes);
  int64_t numInputs = op.getNumDpsInputs();

  // Each thread's partial results, along the reduced elements tid, tid + T, ...
  SmallVector<Value> inits;
  for (Operation *combiner : combiners) {
    auto type = cast<FloatType>(combiner->getResult(0).getType());
    inits.push_back(arith::ConstantOp::create(kb, loc, identity(combiner, type)));
  }
  auto strided = scf::ForOp::create(kb, loc, tid, reduced, t, inits);
  {
    OpBuilder lb = OpBuilder::atBlockBegin(strided.getBody());
    SmallVector<Value> all(loops);
    llvm::append_range(all, delinearize(lb, loc, strided.getInductionVar(),
                                        reducedSizes));
    IRMapping mapping;
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(input);
      Value value = input->get();
      if (isa<MemRefType>(value.getType()))
        value = memref::LoadOp::create(
            lb, loc, value,
            apply(lb, loc, op.getMatchingIndexingMap(input), all));
      mapping.map(arg, value);
    }
    for (auto [i, acc] : llvm::enumerate(strided.getRegionIterArgs()))
      mapping.map(body.getArgument(numInputs + i), acc);
    for (Operation &inner : body.without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), all[index.getDim()]);
        continue;
      }
      lb.clone(inner, mapping);
    }
    SmallVector<Value> next;
    for (Value yielded : yield.getOperands())
      next.push_back(mapping.lookup(yielded));
    scf::YieldOp::create(lb, loc, next);
  }
  // a (+) b, with the combiner of output i.
  auto combine = [&](OpBuilder &cb, size_t i, Value a, Value c) -> Value {
    Operation *combiner = combiners[i];
    OperationState state(loc, combiner->getName());
    state.addOperands({a, c});
    state.addTypes(a.getType());
    state.addAttributes(combiner->getAttrs());
    return cb.create(state)->getResult(0);
  };
  ValueRange shared = launch.getWorkgroupAttributions();
  for (auto [i, partial] : llvm::enumerate(strided.getResults()))
    memref::StoreOp::create(kb, loc, partial, shared[i], ValueRange{tid});
  gpu::BarrierOp::create(kb, loc);
  for (int64_t half = threads / 2; half >= 1; half /= 2) {
    Value h = arith::ConstantIndexOp::create(kb, loc, half);
    Value active =
        arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, tid, h);
    auto ifOp = scf::IfOp::create(kb, loc, active, /*withElse=*/false);
    OpBuilder ib = ifOp.getThenBodyBuilder();
    Value other = arith::AddIOp::create(ib, loc, tid, h);
    for (size_t i = 0; i < combiners.size(); ++i) {
      Value mine = memref::LoadOp::create(ib, loc, shared[i], ValueRange{tid});
      Value theirs =
          memref::LoadOp::create(ib, loc, shared[i], ValueRange{other});
      memref::StoreOp::create(ib, loc, combine(ib, i, mine, theirs), shared[i],
                              ValueRange{tid});
    }
    gpu::BarrierOp::create(kb, loc);
  }
  Value zero = arith::ConstantIndexOp::create(kb, loc, 0);
  Value first =
      arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::eq, tid, zero);
  auto store = scf::IfOp::create(kb, loc, first, /*withElse=*/false);
  {
    OpBuilder sb = store.getThenBodyBuilder();
    SmallVector<Value> all(loops);
    all.append(numLoops - parallel, zero); // outputs do not read them
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      SmallVector<Value> at =
          apply(sb, loc, op.getMatchingIndexingMap(&init), all);
      Value old = memref::LoadOp::create(sb, loc, init.get(), at);
      Value total = memref::LoadOp::create(sb, loc, shared[i], ValueRange{zero});
      memref::StoreOp::create(sb, loc, combine(sb, i, old, total), init.get(),
                              at);
    }
  }
  gpu::TerminatorOp::create(kb, loc);
  op->erase();
}

struct DLGPURowReductionsPass
    : public dl::impl::DLGPURowReductionsBase<DLGPURowReductionsPass> {
  using DLGPURowReductionsBase::DLGPURowReductionsBase;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, int64_t>> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      int64_t parallel = rowReduction(op);
      if (parallel >= 0)
        ops.push_back({op, parallel});
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, parallel] : ops) {
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> general =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(general))
          continue; // the parallel-loop path takes it as it is
        generic = *general;
      }
      buildKernel(generic, parallel);
    }
  }
};

} // namespace
