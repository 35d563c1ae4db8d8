//===- GPUToCPU.cpp - dl-gpu-to-cpu ---------------------------------------===//
//
// Runs outlined GPU kernels on the CPU: every gpu.launch_func becomes loops
// over the launch's blocks and threads executing the body of the kernel's
// gpu.func, so the very kernels dl-gpu-pipeline hands to NVVM can be run
// and checked against numpy on a machine without a GPU. Upstream MLIR has
// no such pass (it lowers GPU kernels only to GPU targets), hence ours.
//
//   gpu.launch_func @m::@k blocks in (gx, gy, gz) threads in (tx, ty, tz)
// becomes
//   scf.parallel (bx, by, bz) in (gx, gy, gz) {        // blocks: independent
//     workgroup memory and spill buffers, per block (heap)
//     for each barrier-free run of the kernel body:
//       scf.for tz, ty, tx { the run, for one thread }
//   }
//
// A gpu.barrier ends a run: every thread finishes the run before any starts
// the next, which is exactly the barrier's guarantee. A value computed in
// one run and used in a later one is kept per thread in a spill buffer
// indexed by (tz, ty, tx) (constants, and side-effect-free values of types
// a buffer cannot hold, are recomputed instead). An scf.for whose body holds
// a barrier is executed once per block, around the thread loops of its
// body: its bounds must not depend on the thread, and its loop-carried
// values live in spill buffers. Blocks run on dlc's thread pool
// when the CPU pipeline lowers the scf.parallel.
//
// A warp-wide nvgpu.mma.sync (tensor cores; m16n8k16 with 16-bit float
// inputs and f32 accumulators) ends a run like a barrier: in one thread
// loop every lane stores its fragments of A and B into its warp's 16 x 16
// and 16 x 8 matrices (per block, f32), in the next each lane computes its
// fragment of D = A * B + C, kept per thread.
//
// Refused, with a diagnostic naming the op: gpu ops other than the ids,
// dimensions and barrier (shuffles, subgroup ops, ...), nvgpu ops other than
// that mma.sync, an mma.sync in a block whose size is not a constant
// multiple of 32, a barrier or mma.sync inside any op but scf.for, loop bounds around a barrier that depend on the thread,
// private memory attributions, async launches, clusters, dynamic shared
// memory, kernels without a body (already serialized) and un-outlined
// gpu.launch ops.
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/GPUToCPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dl {
#define GEN_PASS_DEF_DLGPUTOCPU
#include "dl/Codegen/GPUToCPU/Passes.h.inc"
} // namespace mlir::dl

using namespace mlir;

namespace {

/// x, y, z as values.
using Dim3 = std::array<Value, 3>;

unsigned dimIndex(gpu::Dimension dim) { return static_cast<unsigned>(dim); }

/// Whether all threads of the block must reach `op` before any goes on:
/// a barrier, or a warp-wide mma.sync (run here as a barrier of the block).
bool isSyncPoint(Operation *op) {
  return isa<gpu::BarrierOp, nvgpu::MmaSyncOp>(op);
}

bool holdsSyncPoint(Operation *op) {
  return op->walk([&](Operation *nested) {
             return isSyncPoint(nested) ? WalkResult::interrupt()
                                        : WalkResult::advance();
           }).wasInterrupted();
}

/// The type with a gpu address space dropped (workgroup memory becomes
/// ordinary memory on the CPU).
Type withoutGPUAddressSpace(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !isa_and_nonnull<gpu::AddressSpaceAttr>(memref.getMemorySpace()))
    return type;
  return MemRefType::get(memref.getShape(), memref.getElementType(),
                         memref.getLayout());
}

/// The element type a spill buffer of `type` holds: integers narrower than
/// a byte (i1 conditions) are kept as i8, as the LLVM lowering of memrefs
/// wants whole bytes.
Type storageType(Type type) {
  auto integer = dyn_cast<IntegerType>(type);
  if (integer && integer.getWidth() < 8)
    return IntegerType::get(type.getContext(), 8);
  return type;
}

/// Stores `value` into a spill buffer at `index` (widened, see storageType).
void storeSpill(OpBuilder &b, Location loc, Value value, Value buffer,
                ValueRange index) {
  Type storage = cast<MemRefType>(buffer.getType()).getElementType();
  if (storage != value.getType())
    value = arith::ExtUIOp::create(b, loc, storage, value);
  memref::StoreOp::create(b, loc, value, buffer, index);
}

/// Loads a value of `type` from a spill buffer at `index`.
Value loadSpill(OpBuilder &b, Location loc, Type type, Value buffer,
                ValueRange index) {
  Value value = memref::LoadOp::create(b, loc, buffer, index);
  if (value.getType() != type)
    value = arith::TruncIOp::create(b, loc, type, value);
  return value;
}

/// Emits the CPU loops of one launch.
class LaunchEmitter {
public:
  LaunchEmitter(gpu::LaunchFuncOp launch, gpu::GPUFuncOp kernel)
      : launch(launch), kernel(kernel), loc(launch.getLoc()) {}

  LogicalResult emit();

private:
  // Per block.
  LogicalResult emitBlock(Block &block, IRMapping uniform, OpBuilder &b);
  LogicalResult emitRun(ArrayRef<Operation *> run, const IRMapping &uniform,
                        OpBuilder &b);
  LogicalResult emitBarrierLoop(scf::ForOp loop, const IRMapping &uniform,
                                OpBuilder &b);
  LogicalResult emitMma(nvgpu::MmaSyncOp mma, const IRMapping &uniform,
                        OpBuilder &b);
  /// Thread loops around `body` (which gets the thread ids).
  void emitThreadLoops(OpBuilder &b,
                       function_ref<void(OpBuilder &, const Dim3 &)> body);

  // Values.
  FailureOr<Value> uniformValue(Value v, IRMapping &uniform, OpBuilder &b);
  FailureOr<Value> threadValue(Value v, IRMapping &local,
                               const IRMapping &uniform, const Dim3 &tid,
                               OpBuilder &b);
  LogicalResult cloneInThread(Operation *op, IRMapping &local,
                              const IRMapping &uniform, const Dim3 &tid,
                              OpBuilder &b);
  Value spillBuffer(Type type);
  /// The value of a gpu id or dimension op for thread `tid`, else null.
  Value idValue(Operation *op, const Dim3 &tid);

  gpu::LaunchFuncOp launch;
  gpu::GPUFuncOp kernel;
  Location loc;
  Dim3 grid, blockDim, bid;
  Block *blockBody = nullptr;  // the scf.parallel body (per GPU block)
  SmallVector<Value> toFree;   // buffers freed at the end of each block
  DenseMap<Value, Value> spills;
  // Per block, for mma.sync: the A and B of each warp as f32 matrices.
  Value mmaA, mmaB;
};

LogicalResult LaunchEmitter::emit() {
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitError("dl-gpu-to-cpu: async launches are not supported");
  if (launch.hasClusterSize())
    return launch.emitError("dl-gpu-to-cpu: thread block clusters are not "
                            "supported");
  if (Value dynamicShared = launch.getDynamicSharedMemorySize())
    if (!matchPattern(dynamicShared, m_Zero()))
      return launch.emitError("dl-gpu-to-cpu: dynamic shared memory is not "
                              "supported");
  if (!kernel.getPrivateAttributions().empty())
    return kernel.emitError("dl-gpu-to-cpu: private memory attributions are "
                            "not supported");
  if (!kernel.getBody().hasOneBlock())
    return kernel.emitError("dl-gpu-to-cpu: kernels with more than one block "
                            "(unstructured control flow) are not supported");

  // mma.sync is warp-wide: every warp of the block must be whole.
  bool hasMma = false;
  kernel.walk([&](nvgpu::MmaSyncOp) { hasMma = true; });
  if (hasMma) {
    auto sizes = launch.getBlockSizeOperandValues();
    int64_t threads = 1;
    for (Value size : {sizes.x, sizes.y, sizes.z}) {
      std::optional<int64_t> constant = getConstantIntValue(size);
      threads = constant ? threads * *constant : -1;
      if (!constant)
        break;
    }
    if (threads <= 0 || threads % 32 != 0)
      return launch.emitError("dl-gpu-to-cpu: kernel @")
             << kernel.getName()
             << " uses nvgpu.mma.sync, which needs whole warps: the block "
                "size must be a constant multiple of 32 threads";
  }

  OpBuilder b(launch);
  auto g = launch.getGridSizeOperandValues();
  auto t = launch.getBlockSizeOperandValues();
  grid = {g.x, g.y, g.z};
  blockDim = {t.x, t.y, t.z};
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto parallel = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero, zero}, ValueRange{g.x, g.y, g.z},
      ValueRange{one, one, one});
  Block &body = parallel.getRegion().front();
  blockBody = &body;
  bid = {body.getArgument(0), body.getArgument(1), body.getArgument(2)};
  OpBuilder inner = OpBuilder::atBlockBegin(&body);

  IRMapping uniform;
  Block &entry = kernel.getBody().front();
  for (auto [arg, operand] :
       llvm::zip_equal(entry.getArguments().take_front(
                           kernel.getNumArguments()),
                       launch.getKernelOperands()))
    uniform.map(arg, operand);
  for (BlockArgument attribution : kernel.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(withoutGPUAddressSpace(attribution.getType()));
    if (!type.hasStaticShape())
      return kernel.emitError("dl-gpu-to-cpu: workgroup memory of dynamic "
                              "shape is not supported");
    Value buffer = memref::AllocOp::create(inner, loc, type);
    toFree.push_back(buffer);
    uniform.map(attribution, buffer);
  }
  if (failed(emitBlock(entry, uniform, inner)))
    return failure();
  for (Value buffer : toFree)
    memref::DeallocOp::create(inner, loc, buffer);

  // Workgroup memory is plain memory here.
  parallel.walk([](Operation *op) {
    for (Value result : op->getResults())
      result.setType(withoutGPUAddressSpace(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(withoutGPUAddressSpace(arg.getType()));
  });
  WalkResult leftover = parallel.walk([&](Operation *op) {
    if (isa<gpu::GPUDialect, nvgpu::NVGPUDialect>(op->getDialect())) {
      op->emitError("dl-gpu-to-cpu: cannot run '")
          << op->getName() << "' on the CPU (in kernel @"
          << kernel.getName() << ")";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (leftover.wasInterrupted())
    return failure();
  launch.erase();
  return success();
}

LogicalResult LaunchEmitter::emitBlock(Block &block, IRMapping uniform,
                                       OpBuilder &b) {
  SmallVector<Operation *> run;
  auto flush = [&]() -> LogicalResult {
    LogicalResult result = success();
    if (!run.empty())
      result = emitRun(run, uniform, b);
    run.clear();
    return result;
  };
  for (Operation &op : block.without_terminator()) {
    if (isa<gpu::BarrierOp>(op)) {
      if (failed(flush()))
        return failure();
      continue;
    }
    if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
      if (failed(flush()) || failed(emitMma(mma, uniform, b)))
        return failure();
      continue;
    }
    if (!holdsSyncPoint(&op)) {
      run.push_back(&op);
      continue;
    }
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop)
      return op.emitError("dl-gpu-to-cpu: a gpu.barrier or nvgpu.mma.sync "
                          "inside '")
             << op.getName() << "' is not supported (only inside scf.for)";
    if (failed(flush()) || failed(emitBarrierLoop(loop, uniform, b)))
      return failure();
  }
  Operation *terminator = block.getTerminator();
  if (!isa<gpu::ReturnOp, scf::YieldOp>(terminator) ||
      (isa<gpu::ReturnOp>(terminator) && terminator->getNumOperands() != 0))
    return terminator->emitError("dl-gpu-to-cpu: unsupported terminator");
  return flush();
}

void LaunchEmitter::emitThreadLoops(
    OpBuilder &b, function_ref<void(OpBuilder &, const Dim3 &)> body) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Dim3 tid;
  OpBuilder::InsertionGuard guard(b);
  for (int d = 2; d >= 0; --d) {
    auto loop = scf::ForOp::create(b, loc, zero, blockDim[d], one);
    tid[d] = loop.getInductionVar();
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  body(b, tid);
}

Value LaunchEmitter::spillBuffer(Type type) {
  OpBuilder b = OpBuilder::atBlockBegin(blockBody);
  auto bufferType = MemRefType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic},
      storageType(type));
  Value buffer = memref::AllocOp::create(
      b, loc, bufferType, ValueRange{blockDim[2], blockDim[1], blockDim[0]});
  toFree.push_back(buffer);
  return buffer;
}

LogicalResult LaunchEmitter::emitRun(ArrayRef<Operation *> run,
                                     const IRMapping &uniform, OpBuilder &b) {
  // Results used after the run (by a later run, a barrier loop or beyond)
  // go to spill buffers, unless recomputing them is cheap or the only way.
  llvm::SmallPtrSet<Operation *, 16> inRun(run.begin(), run.end());
  Block *block = run.front()->getBlock();
  SmallVector<std::pair<Value, Value>> stores; // value, buffer
  for (Operation *op : run) {
    // Constants and ids are cheaper to recompute than to keep.
    bool constant = op->hasTrait<OpTrait::ConstantLike>() ||
                    isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp,
                        gpu::GridDimOp>(op);
    for (Value result : op->getResults()) {
      bool escapes = llvm::any_of(result.getUsers(), [&](Operation *user) {
        Operation *ancestor = block->findAncestorOpInBlock(*user);
        return !ancestor || !inRun.contains(ancestor);
      });
      if (!escapes || constant)
        continue;
      if (!MemRefType::isValidElementType(result.getType())) {
        if (isMemoryEffectFree(op) && op->getNumRegions() == 0)
          continue; // recomputed where used
        return op->emitError("dl-gpu-to-cpu: a value of type ")
               << result.getType()
               << " computed before a gpu.barrier and used after it cannot "
                  "be kept per thread";
      }
      Value buffer = spillBuffer(result.getType());
      spills[result] = buffer;
      stores.push_back({result, buffer});
    }
  }
  LogicalResult status = success();
  emitThreadLoops(b, [&](OpBuilder &tb, const Dim3 &tid) {
    IRMapping local;
    for (Operation *op : run)
      if (failed(cloneInThread(op, local, uniform, tid, tb))) {
        status = failure();
        return;
      }
    for (auto [value, buffer] : stores)
      storeSpill(tb, loc, local.lookup(value), buffer,
                 ValueRange{tid[2], tid[1], tid[0]});
  });
  return status;
}

LogicalResult LaunchEmitter::cloneInThread(Operation *op, IRMapping &local,
                                           const IRMapping &uniform,
                                           const Dim3 &tid, OpBuilder &b) {
  if (Value id = idValue(op, tid)) {
    local.map(op->getResult(0), id);
    return success();
  }
  // Every value the op, or an op nested in it, uses from outside it.
  SmallVector<Value> outside;
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      Operation *owner = operand.getParentRegion()->getParentOp();
      if (owner != op && !op->isProperAncestor(owner))
        outside.push_back(operand);
    }
  });
  for (Value operand : outside)
    if (failed(threadValue(operand, local, uniform, tid, b)))
      return failure();
  Operation *clone = b.clone(*op, local);
  SmallVector<Operation *> ids;
  clone->walk([&](Operation *nested) {
    if (nested != clone && idValue(nested, tid))
      ids.push_back(nested);
  });
  for (Operation *id : ids) {
    id->getResult(0).replaceAllUsesWith(idValue(id, tid));
    id->erase();
  }
  return success();
}

Value LaunchEmitter::idValue(Operation *op, const Dim3 &tid) {
  if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
    return tid[dimIndex(id.getDimension())];
  if (auto id = dyn_cast<gpu::BlockIdOp>(op))
    return bid[dimIndex(id.getDimension())];
  if (auto id = dyn_cast<gpu::BlockDimOp>(op))
    return blockDim[dimIndex(id.getDimension())];
  if (auto id = dyn_cast<gpu::GridDimOp>(op))
    return grid[dimIndex(id.getDimension())];
  return Value();
}

FailureOr<Value> LaunchEmitter::threadValue(Value v, IRMapping &local,
                                            const IRMapping &uniform,
                                            const Dim3 &tid, OpBuilder &b) {
  if (Value mapped = local.lookupOrNull(v))
    return mapped;
  if (Value buffer = spills.lookup(v)) {
    Value loaded = loadSpill(b, loc, v.getType(), buffer,
                             ValueRange{tid[2], tid[1], tid[0]});
    local.map(v, loaded);
    return loaded;
  }
  if (Value mapped = uniform.lookupOrNull(v)) {
    local.map(v, mapped); // b.clone looks values up in `local` only
    return mapped;
  }
  Operation *def = v.getDefiningOp();
  if (def && isMemoryEffectFree(def) && def->getNumRegions() == 0) {
    if (failed(cloneInThread(def, local, uniform, tid, b)))
      return failure();
    return local.lookup(v);
  }
  if (def)
    def->emitError("dl-gpu-to-cpu: the value of this op is used across a "
                   "gpu.barrier but cannot be kept per thread");
  else
    kernel.emitError("dl-gpu-to-cpu: a block argument is used where it is "
                     "not defined");
  return failure();
}

FailureOr<Value> LaunchEmitter::uniformValue(Value v, IRMapping &uniform,
                                             OpBuilder &b) {
  if (Value mapped = uniform.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  // Block ids and dimensions are the same for every thread of the block.
  // Mapped, so that an op computed from them (a bound of block z's slice of
  // a loop) is cloned onto the block's value, not onto the kernel's op: an
  // unmapped id left the clone using an op of the erased kernel (an abort).
  if (def && !isa<gpu::ThreadIdOp>(def))
    if (Value id = idValue(def, Dim3{})) {
      uniform.map(v, id);
      return id;
    }
  if (!def || isa<gpu::ThreadIdOp>(def) || !isMemoryEffectFree(def) ||
      def->getNumRegions() != 0) {
    Operation *at = def ? def : kernel.getOperation();
    at->emitError("dl-gpu-to-cpu: the bounds of a loop holding a gpu.barrier "
                  "must be the same for every thread of the block");
    return failure();
  }
  for (Value operand : def->getOperands())
    if (failed(uniformValue(operand, uniform, b)))
      return failure();
  Operation *clone = b.clone(*def, uniform);
  return clone->getResult(cast<OpResult>(v).getResultNumber());
}

LogicalResult LaunchEmitter::emitBarrierLoop(scf::ForOp loop,
                                             const IRMapping &uniformIn,
                                             OpBuilder &b) {
  IRMapping uniform = uniformIn;
  FailureOr<Value> lb = uniformValue(loop.getLowerBound(), uniform, b);
  if (failed(lb))
    return loop.emitError("dl-gpu-to-cpu: (the loop is here)");
  FailureOr<Value> ub = uniformValue(loop.getUpperBound(), uniform, b);
  if (failed(ub))
    return loop.emitError("dl-gpu-to-cpu: (the loop is here)");
  FailureOr<Value> step = uniformValue(loop.getStep(), uniform, b);
  if (failed(step))
    return loop.emitError("dl-gpu-to-cpu: (the loop is here)");

  // Loop-carried values: one buffer each, per thread, holding the value of
  // the current iteration (and, after the loop, the result).
  SmallVector<Value> buffers;
  for (Value init : loop.getInitArgs()) {
    if (!MemRefType::isValidElementType(init.getType()))
      return loop.emitError("dl-gpu-to-cpu: a loop around a gpu.barrier "
                            "cannot carry a value of type ")
             << init.getType();
    buffers.push_back(spillBuffer(init.getType()));
  }
  LogicalResult status = success();
  auto storeAll = [&](OpBuilder &at, const IRMapping &scope,
                      ValueRange values) {
    emitThreadLoops(at, [&](OpBuilder &tb, const Dim3 &tid) {
      IRMapping local;
      SmallVector<Value> mapped;
      for (Value value : values) {
        FailureOr<Value> v = threadValue(value, local, scope, tid, tb);
        if (failed(v)) {
          status = failure();
          return;
        }
        mapped.push_back(*v);
      }
      for (auto [value, buffer] : llvm::zip_equal(mapped, buffers))
        storeSpill(tb, loc, value, buffer, ValueRange{tid[2], tid[1], tid[0]});
    });
    return status;
  };
  if (!buffers.empty() && failed(storeAll(b, uniform, loop.getInitArgs())))
    return failure();

  auto cpuLoop = scf::ForOp::create(b, loc, *lb, *ub, *step);
  OpBuilder inner(cpuLoop.getBody()->getTerminator());
  IRMapping bodyUniform = uniform;
  bodyUniform.map(loop.getInductionVar(), cpuLoop.getInductionVar());
  for (auto [arg, buffer] : llvm::zip_equal(loop.getRegionIterArgs(), buffers))
    spills[arg] = buffer;
  if (failed(emitBlock(*loop.getBody(), bodyUniform, inner)))
    return failure();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!buffers.empty() &&
      failed(storeAll(inner, bodyUniform, yield.getOperands())))
    return failure();
  for (auto [result, buffer] : llvm::zip_equal(loop.getResults(), buffers))
    spills[result] = buffer;
  return success();
}

/// Where value `i` of a lane's fragment lies in the warp's matrix, for
/// mma.m16n8k16 with 16-bit inputs, as the PTX ISA's tables give it
/// ("Matrix Fragments for mma.m16n8k16 with floating point type";
/// nvgpu's vector<Rx2> operands hold value i at [i / 2][i % 2]):
///   group = lane / 4, t = lane % 4
///   A (16 x 16), a0..a7: row = group + 8 * (i / 2 % 2),
///                        col = 2 * t + i % 2 + 8 * (i / 4)
///   B (16 x 8),  b0..b3: row = 2 * t + i % 2 + 8 * (i / 2), col = group
///   C (16 x 8),  c0..c3: row = group + 8 * (i / 2), col = 2 * t + i % 2
/// Written from the PTX tables, independently of the kernel builder
/// (which takes upstream's nvgpu layout), so that running a kernel here
/// checks the two against each other.
std::pair<Value, Value> mmaFragmentCoord(OpBuilder &b, Location loc,
                                         char operand, int64_t i, Value lane) {
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto plus = [&](Value x, int64_t v) -> Value {
    return v ? arith::AddIOp::create(b, loc, x, index(v)).getResult() : x;
  };
  Value group = arith::DivUIOp::create(b, loc, lane, index(4));
  Value pair = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, index(4)), index(2));
  switch (operand) {
  case 'A':
    return {plus(group, 8 * (i / 2 % 2)), plus(pair, i % 2 + 8 * (i / 4))};
  case 'B':
    return {plus(pair, i % 2 + 8 * (i / 2)), group};
  default:
    return {plus(group, 8 * (i / 2)), plus(pair, i % 2)};
  }
}

LogicalResult LaunchEmitter::emitMma(nvgpu::MmaSyncOp mma,
                                     const IRMapping &uniform, OpBuilder &b) {
  VectorType aType = mma.getMatrixA().getType();
  VectorType bType = mma.getMatrixB().getType();
  VectorType cType = mma.getMatrixC().getType();
  Type input = aType.getElementType();
  if (mma.getMmaShapeAsArray() != std::array<int64_t, 3>{16, 8, 16} ||
      !(input.isF16() || input.isBF16()) ||
      bType.getElementType() != input || !cType.getElementType().isF32() ||
      mma.getTf32Enabled())
    return mma.emitError("dl-gpu-to-cpu: cannot run this nvgpu.mma.sync on "
                         "the CPU (supported: m16n8k16 with f16 or bf16 A "
                         "and B and an f32 accumulator)");

  // Per block: each warp's A (16 x 16) and B (16 x 8), as f32 (exact for
  // 16-bit floats, whose products the tensor cores also form exactly).
  auto f32 = Float32Type::get(mma.getContext());
  if (!mmaA) {
    OpBuilder ab = OpBuilder::atBlockBegin(blockBody);
    Value threads = arith::MulIOp::create(
        ab, loc, arith::MulIOp::create(ab, loc, blockDim[0], blockDim[1]),
        blockDim[2]);
    Value warps = arith::DivUIOp::create(
        ab, loc, threads, arith::ConstantIndexOp::create(ab, loc, 32));
    mmaA = memref::AllocOp::create(
        ab, loc, MemRefType::get({ShapedType::kDynamic, 16, 16}, f32), warps);
    mmaB = memref::AllocOp::create(
        ab, loc, MemRefType::get({ShapedType::kDynamic, 16, 8}, f32), warps);
    toFree.push_back(mmaA);
    toFree.push_back(mmaB);
  }
  auto warpAndLane = [&](OpBuilder &tb, const Dim3 &tid) {
    Value linear = arith::AddIOp::create(
        tb, loc, tid[0],
        arith::MulIOp::create(
            tb, loc, blockDim[0],
            arith::AddIOp::create(
                tb, loc, tid[1],
                arith::MulIOp::create(tb, loc, blockDim[1], tid[2]))));
    Value size = arith::ConstantIndexOp::create(tb, loc, 32);
    return std::pair<Value, Value>{
        arith::DivUIOp::create(tb, loc, linear, size),
        arith::RemUIOp::create(tb, loc, linear, size)};
  };
  auto element = [&](OpBuilder &tb, Value vector, int64_t i) -> Value {
    return vector::ExtractOp::create(tb, loc, vector,
                                     ArrayRef<int64_t>{i / 2, i % 2});
  };

  // An operand of the mma for thread `tid` (null, and `status` failed, if
  // it cannot be had).
  LogicalResult status = success();
  auto operandOf = [&](Value v, IRMapping &local, const Dim3 &tid,
                       OpBuilder &tb) -> Value {
    FailureOr<Value> value = threadValue(v, local, uniform, tid, tb);
    if (succeeded(value))
      return *value;
    status = failure();
    return Value();
  };

  // Every lane writes its values of A and B where they lie in its warp's
  // matrices...
  emitThreadLoops(b, [&](OpBuilder &tb, const Dim3 &tid) {
    IRMapping local;
    Value a = operandOf(mma.getMatrixA(), local, tid, tb);
    Value bValue = a ? operandOf(mma.getMatrixB(), local, tid, tb) : Value();
    if (!bValue)
      return;
    auto [warp, lane] = warpAndLane(tb, tid);
    for (auto [operand, value, buffer, count] :
         {std::tuple<char, Value, Value, int64_t>{'A', a, mmaA, 8},
          {'B', bValue, mmaB, 4}})
      for (int64_t i = 0; i < count; ++i) {
        auto [row, col] = mmaFragmentCoord(tb, loc, operand, i, lane);
        Value wide = arith::ExtFOp::create(tb, loc, f32, element(tb, value, i));
        memref::StoreOp::create(tb, loc, wide, buffer,
                                ValueRange{warp, row, col});
      }
  });
  if (failed(status))
    return failure();

  // ... then (all lanes done: a barrier) each computes its values of
  // D = A * B + C, kept per thread like any value used after a barrier.
  Value result = spillBuffer(cType);
  spills[mma.getResult()] = result;
  emitThreadLoops(b, [&](OpBuilder &tb, const Dim3 &tid) {
    IRMapping local;
    Value c = operandOf(mma.getMatrixC(), local, tid, tb);
    if (!c)
      return;
    auto [warp, lane] = warpAndLane(tb, tid);
    Value d = c;
    for (int64_t i = 0; i < 4; ++i) {
      auto [row, col] = mmaFragmentCoord(tb, loc, 'C', i, lane);
      auto loop = scf::ForOp::create(
          tb, loc, arith::ConstantIndexOp::create(tb, loc, 0),
          arith::ConstantIndexOp::create(tb, loc, 16),
          arith::ConstantIndexOp::create(tb, loc, 1),
          ValueRange{element(tb, c, i)});
      OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
      Value k = loop.getInductionVar();
      Value x = memref::LoadOp::create(lb, loc, mmaA, ValueRange{warp, row, k});
      Value y = memref::LoadOp::create(lb, loc, mmaB, ValueRange{warp, k, col});
      Value sum = arith::AddFOp::create(lb, loc, loop.getRegionIterArgs()[0],
                                        arith::MulFOp::create(lb, loc, x, y));
      scf::YieldOp::create(lb, loc, sum);
      d = vector::InsertOp::create(tb, loc, loop.getResult(0), d,
                                   ArrayRef<int64_t>{i / 2, i % 2});
    }
    storeSpill(tb, loc, d, result, ValueRange{tid[2], tid[1], tid[0]});
  });
  return status;
}

struct DLGPUToCPU : public dl::impl::DLGPUToCPUBase<DLGPUToCPU> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult outlined = module.walk([](gpu::LaunchOp launch) {
      launch.emitError("dl-gpu-to-cpu: outline the kernels first "
                       "(gpu-kernel-outlining)");
      return WalkResult::interrupt();
    });
    if (outlined.wasInterrupted())
      return signalPassFailure();
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches) {
      auto kernel = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (!kernel) {
        launch.emitError("dl-gpu-to-cpu: no gpu.func ")
            << launch.getKernel()
            << " to run (kernels serialized to a gpu.binary cannot be "
               "emulated)";
        return signalPassFailure();
      }
      if (failed(LaunchEmitter(launch, kernel).emit()))
        return signalPassFailure();
    }
    for (auto gpuModule :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>()))
      gpuModule.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
