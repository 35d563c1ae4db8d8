//===- GPUPipeline.cpp - dl-gpu-pipeline ----------------------------------===//
//
// dl to NVIDIA GPU kernels, built from upstream passes:
//
//   dl ─(dl-cpu-pipeline up to `bufferized`: graph passes, linalg, buffers)─>
//   linalg on memrefs ─dl-collapse-batch-matmul (ours: batched contractions
//   as named matmuls)─dl-gpu-mma-matmul (ours: f16/bf16 matmuls on tensor
//   cores)─dl-gpu-shared-matmul (ours: matmuls as kernels with
//   shared-memory tiles and barriers)─(ours: copies as linalg.copy, rank-0 ops in a
//   one-iteration loop)─convert-linalg-to-parallel-loops─> scf.parallel
//   ─tiled and mapped (ours, below: up to block-size threads over the
//   innermost dimensions, innermost to x for coalescing, constant inner
//   bounds)─> blocks x threads ─convert-parallel-loops-to-gpu─> gpu.launch
//   ─gpu-lower-to-nvvm-pipeline─> gpu.module outlined, NVVM, and
//   gpu-module-to-binary (format=isa: PTX text; bin: cubin via ptxas), with
//   the host side calling the GPU runtime (gpu-to-llvm).
//
// The chip is checked here: LLVM's NVPTX back end aborts the process on a
// PTX version the chip does not support, so only chips with a known PTX
// version are accepted (all of them get PTX 8.0).
//
// A parallel loop that cannot be mapped is an error (it would run on the
// host, on device buffers). `to=cpu` runs the outlined kernels on the CPU
// instead (dl-gpu-to-cpu, then the CPU pipeline's llvm stage), so that they
// can be checked without a GPU. Matmuls get shared-memory tiles and
// barriers (dl-gpu-shared-matmul); f16 and bf16 ones run on tensor cores
// where the chip has mma.sync m16n8k16 (dl-gpu-mma-matmul, sm_80 and newer;
// bf16 lowered by dl-gpu-bf16-mma-to-nvvm). For to=binary, the host's
// buffers are CUDA managed memory (dl-gpu-device-memory).
//
//===----------------------------------------------------------------------===//

#include "dl/Pipelines.h"
#include "dl/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::dl;

namespace {

/// Makes nested scf.parallel loops sequential, then tiles every (now
/// outermost) scf.parallel into blocks of `blockSize` iterations
/// along its innermost dimension (1 along the others), with constant inner
/// bounds and a guard (no min/max bounds: convert-parallel-loops-to-gpu
/// needs launch sizes it can compute); upstream's scf-parallel-loop-tiling
/// takes one list of sizes for loops of every rank.
struct TileForBlocks
    : public PassWrapper<TileForBlocks, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TileForBlocks)
  explicit TileForBlocks(int64_t blockSize) : blockSize(blockSize) {}
  StringRef getArgument() const override { return "dl-gpu-tile-for-blocks"; }
  void runOnOperation() override {
    // A parallel loop inside another (below a sequential reduction loop,
    // say) runs sequentially within its thread: only the outermost ones
    // are mapped to blocks and threads.
    SmallVector<scf::ParallelOp> nested;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (loop->getParentOfType<scf::ParallelOp>())
        nested.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : nested) {
      rewriter.setInsertionPoint(loop);
      if (failed(scf::parallelForToNestedFors(rewriter, loop))) {
        loop.emitError("dl-gpu-pipeline: cannot run this nested parallel "
                       "loop sequentially");
        return signalPassFailure();
      }
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) { loops.push_back(loop); });
    for (scf::ParallelOp loop : loops)
      tileAndMap(loop);
  }

  /// Tiles `loop` into blocks of at most `blockSize` threads, spread over
  /// its innermost dimensions (innermost first: a dimension of known extent
  /// takes the power of two covering it, the next ones what is left), and
  /// maps the innermost dimension to x, the next to y and z (blocks and
  /// threads alike), so that consecutive threads of a warp touch
  /// consecutive elements. Other dimensions, and y/z block counts beyond
  /// the hardware's 65535, loop inside the kernel.
  void tileAndMap(scf::ParallelOp loop) {
    unsigned rank = loop.getNumLoops();
    SmallVector<std::optional<int64_t>> extents;
    for (unsigned d = 0; d < rank; ++d) {
      auto lb = getConstantIntValue(loop.getLowerBound()[d]);
      auto ub = getConstantIntValue(loop.getUpperBound()[d]);
      auto step = getConstantIntValue(loop.getStep()[d]);
      if (lb && ub && step && *step > 0)
        extents.push_back(llvm::divideCeil(std::max<int64_t>(*ub - *lb, 0), *step));
      else
        extents.push_back(std::nullopt);
    }
    SmallVector<int64_t> sizes(rank, 1);
    int64_t left = blockSize;
    for (unsigned level = 0; level < 3 && level < rank && left > 1; ++level) {
      unsigned d = rank - 1 - level;
      int64_t size = left;
      if (extents[d])
        size = std::min<int64_t>(size, llvm::PowerOf2Ceil(std::max<int64_t>(*extents[d], 1)));
      if (level == 2)
        size = std::min<int64_t>(size, 64); // blockDim.z <= 64
      sizes[d] = size;
      left /= size;
    }
    MLIRContext *ctx = loop.getContext();
    // (tileParallelLoop erases `loop`.)
    auto [outer, inner] =
        scf::tileParallelLoop(loop, sizes, /*noMinMaxBounds=*/true);
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, ctx);
    auto mapping = [&](bool threads) {
      SmallVector<gpu::ParallelLoopDimMappingAttr> dims(
          rank, gpu::ParallelLoopDimMappingAttr::get(
                    ctx, gpu::Processor::Sequential, identity, identity));
      for (unsigned level = 0; level < 3 && level < rank; ++level) {
        unsigned d = rank - 1 - level;
        if (threads && sizes[d] == 1)
          continue;
        // A y/z grid beyond the limit loops in the kernel (a dynamic
        // extent is assumed to fit).
        if (!threads && level > 0 && extents[d] &&
            llvm::divideCeil(*extents[d], sizes[d]) > 65535)
          continue;
        auto processor = static_cast<gpu::Processor>(
            (threads ? static_cast<unsigned>(gpu::Processor::ThreadX) : 0) +
            level);
        dims[d] = gpu::ParallelLoopDimMappingAttr::get(ctx, processor,
                                                       identity, identity);
      }
      return dims;
    };
    (void)gpu::setMappingAttr(outer, mapping(/*threads=*/false));
    (void)gpu::setMappingAttr(inner, mapping(/*threads=*/true));
  }

  int64_t blockSize;
};

/// Leaves nothing for the host to compute on device buffers: every
/// memref.copy becomes a linalg.copy (a kernel, not a host memcpy), and
/// every linalg op without loops (on rank-0 buffers) is put in a
/// one-iteration scf.parallel (a kernel of one thread).
struct DeviceOnly
    : public PassWrapper<DeviceOnly, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DeviceOnly)
  StringRef getArgument() const override { return "dl-gpu-device-only"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect, scf::SCFDialect>();
  }
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
    SmallVector<linalg::LinalgOp> scalar;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.getNumLoops() == 0 && !op->getParentOfType<scf::ParallelOp>())
        scalar.push_back(op);
    });
    for (linalg::LinalgOp op : scalar) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
      op->moveBefore(loop.getBody()->getTerminator());
    }
  }
};

/// Fails when a parallel loop was not turned into a kernel: it would run on
/// the host, on device buffers.
struct CheckMapped
    : public PassWrapper<CheckMapped, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckMapped)
  StringRef getArgument() const override { return "dl-gpu-check-mapped"; }
  void runOnOperation() override {
    getOperation().walk([&](scf::ParallelOp loop) {
      loop.emitError("dl-gpu-pipeline: this parallel loop could not be "
                     "mapped to GPU blocks and threads");
      signalPassFailure();
    });
  }
};

} // namespace

LogicalResult
mlir::dl::buildGPUPipeline(OpPassManager &pm, const GPUPipelineOptions &options,
                           function_ref<LogicalResult(const Twine &)> error) {
  static const char *const chips[] = {"sm_70", "sm_75", "sm_80",
                                      "sm_86", "sm_89", "sm_90"};
  if (!llvm::is_contained(chips, StringRef(options.chip)))
    return error("dl-gpu-pipeline: unsupported chip '" + options.chip +
                 "'; supported: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90");
  if (options.matmulTile < 1 || options.matmulTile > 32)
    return error("dl-gpu-pipeline: matmul-tile must be in 1..32, but got " +
                 Twine(static_cast<int64_t>(options.matmulTile)));
  if (options.blockSize < 1 || options.blockSize > 1024)
    return error("dl-gpu-pipeline: block-size must be in 1..1024, but got " +
                 Twine(static_cast<int64_t>(options.blockSize)));
  if (options.format != "isa" && options.format != "bin" &&
      options.format != "fatbin")
    return error("dl-gpu-pipeline: format must be isa, bin or fatbin, but "
                 "got '" + options.format + "'");
  if (options.to != "gpu" && options.to != "binary" && options.to != "cpu")
    return error("dl-gpu-pipeline: to must be gpu, binary or cpu, but got '" +
                 options.to + "'");

  // Stages: the CPU pipeline's dl, graph, linalg, bufferized; then gpu
  // (kernels outlined); then binary or cpu.
  static const char *const starts[] = {"dl", "graph", "linalg", "bufferized",
                                       "gpu"};
  const auto *start = llvm::find(starts, StringRef(options.from));
  if (start == std::end(starts))
    return error("dl-gpu-pipeline: from must be dl, graph, linalg, "
                 "bufferized or gpu, but got '" + options.from + "'");
  if (options.from == "gpu" && options.to == "gpu")
    return error("dl-gpu-pipeline: from=gpu needs to=binary or to=cpu");

  if (options.from != "gpu") {
    CPUPipelineOptions front;
    front.from = static_cast<CPUStage>(start - std::begin(starts));
    front.to = CPUStage::Bufferized;
    front.foldBatchNorm = options.foldBatchNorm;
    front.fuse = options.fuse;
    front.layout = options.layout;
    front.planMemory = options.planMemory;
    // Dense convolutions as im2col + GEMM, which dl-gpu-shared-matmul stages
    // through shared memory; a direct convolution would be plain loops.
    front.maxDirectFilterBytes = -1;
    front.nchwMinFilterBytes = -1;
    buildCPUPipeline(pm, front);

    OpPassManager &func = pm.nest<func::FuncOp>();
    // Matmuls with several batch dimensions (attention) or a 2-D B reach
    // the matmul kernels as named ops.
    func.addPass(createDLCollapseBatchMatmul());
    // mma.sync m16n8k16 on f16 and bf16 needs sm_80.
    if (options.tensorCores && StringRef(options.chip) >= "sm_80")
      func.addPass(createDLGPUMmaMatmul());
    DLGPUSharedMatmulOptions sharedMatmul;
    sharedMatmul.tile = options.matmulTile;
    func.addPass(createDLGPUSharedMatmul(sharedMatmul));
    func.addPass(std::make_unique<DeviceOnly>());
    func.addPass(createConvertLinalgToParallelLoopsPass());
    func.addPass(std::make_unique<TileForBlocks>(options.blockSize));
    func.addPass(createConvertParallelLoopToGpuPass());
    func.addPass(std::make_unique<CheckMapped>());
    pm.addPass(createLowerAffinePass());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // Integer powers become functions, which outlining copies into the
    // gpu.module of each kernel that calls them (NVVM has no ipowi).
    pm.addPass(createConvertMathToFuncs());
    // Constants (hoisted out of the launches by canonicalization) and index
    // computations go back in: outlined, they would be kernel parameters
    // instead of immediates, and loop bounds would be unknown to NVPTX.
    pm.addPass(createGpuLaunchSinkIndexComputationsPass());
    pm.addPass(createGpuKernelOutliningPass());
  }
  if (options.to == "gpu")
    return success();
  if (options.to == "cpu") {
    // The same kernels, run on the CPU: the CPU pipeline's last stage.
    pm.addPass(createDLGPUToCPU());
    CPUPipelineOptions back;
    back.from = CPUStage::Vector;
    back.to = CPUStage::LLVM;
    buildCPUPipeline(pm, back);
    return success();
  }
  // Host buffers the kernels use in managed memory.
  pm.addPass(createDLGPUDeviceMemory());
  // bf16 tensor-core ops, which upstream's convert-nvgpu-to-nvvm leaves.
  pm.addPass(createDLGPUBF16MmaToNVVM());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = "+ptx80";
  nvvm.cubinFormat = options.format;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  return success();
}
