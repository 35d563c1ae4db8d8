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
//   ─gpu-kernel-outlining, dl-gpu-name-kernels (ours: each kernel named
//   after its module)─gpu-lower-to-nvvm-pipeline─> gpu.module outlined, NVVM, and
//   gpu-module-to-binary (format=isa: PTX text; bin: cubin via ptxas), with
//   the host side calling the GPU runtime (gpu-to-llvm).
//
// The chip is checked here: LLVM's NVPTX back end aborts the process on a
// PTX version the chip does not support, so only the chips of gpuChips() are
// accepted (all of them get PTX 8.0).
//
// A parallel loop that cannot be mapped is an error (it would run on the
// host, on device buffers). `to=emulated` runs the outlined kernels on the CPU
// instead (dl-gpu-to-cpu, then the CPU pipeline's llvm stage), so that they
// can be checked without a GPU. Matmuls get shared-memory tiles and
// barriers (dl-gpu-shared-matmul); f16 and bf16 ones run on tensor cores
// where the chip has mma.sync m16n8k16 (dl-gpu-mma-matmul, sm_80 and newer;
// bf16 lowered by dl-gpu-bf16-mma-to-nvvm). For to=binary, the host's
// buffers are device memory (dl-gpu-device-memory; the caller copies at the
// function boundary), the launches are chained on streams by async tokens
// (gpu-async-region), and float
// remainders in kernels call libdevice's fmod
// (dl-gpu-float-remainder-to-libdevice).
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/Common/Passes.h"
#include "dl/Codegen/GPU/Passes.h"
#include "dl/Codegen/GPUToCPU/Passes.h"
#include "dl/Pipelines/Pipelines.h"
#include "dl/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::dl;

ArrayRef<StageInfo> mlir::dl::gpuStages() {
  static const StageInfo stages[] = {
      cpuStages()[0], cpuStages()[1], cpuStages()[2], cpuStages()[3],
      {"gpu", "GPU kernels: parallel loops mapped to blocks and threads, "
              "outlined into a gpu.module launched by the host function"},
      {"binary", "the kernels compiled to PTX (in a gpu.binary), the host "
                 "side calling the CUDA runtime, in the llvm dialect"},
      {"emulated", "the kernels of the gpu stage run as loops over blocks "
                   "and threads on the CPU (dl-gpu-to-cpu), in the llvm "
                   "dialect"},
  };
  return stages;
}

ArrayRef<StringRef> mlir::dl::gpuChips() {
  // Chips with a known PTX version: LLVM's NVPTX back end aborts the
  // process on a PTX version the chip does not support.
  static const StringRef chips[] = {"sm_70", "sm_75", "sm_80",
                                    "sm_86", "sm_89", "sm_90"};
  return chips;
}

LogicalResult
mlir::dl::buildGPUPipeline(OpPassManager &pm, const GPUPipelineOptions &options,
                           function_ref<LogicalResult(const Twine &)> error) {
  if (!llvm::is_contained(gpuChips(), StringRef(options.chip)))
    return error("dl-gpu-pipeline: unsupported chip '" + options.chip +
                 "'; supported: " + llvm::join(gpuChips(), ", "));
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
  StringRef to = options.to;
  bool emulated = to == "emulated" || to == "cpu";
  if (to != "gpu" && to != "binary" && !emulated)
    return error("dl-gpu-pipeline: to must be gpu, binary or emulated, but "
                 "got '" + to + "'");

  // Stages: the CPU pipeline's dl, graph, linalg, bufferized; then gpu
  // (kernels outlined); then binary or emulated.
  ArrayRef<StageInfo> starts = gpuStages().take_front(5);
  if (llvm::none_of(starts, [&](const StageInfo &stage) {
        return stage.name == options.from;
      }))
    return error("dl-gpu-pipeline: from must be dl, graph, linalg, "
                 "bufferized or gpu, but got '" + options.from + "'");
  if (options.from == "gpu" && to == "gpu")
    return error("dl-gpu-pipeline: from=gpu needs to=binary or to=emulated");

  if (options.from == "gpu")
    pm.addPass(createDLCheckSizes()); // as the CPU pipeline's front does
  else {
    CPUPipelineOptions front;
    front.from = options.from;
    front.to = "bufferized";
    front.targetCPU = options.targetCPU;
    front.targetFeatures = options.targetFeatures;
    front.targetThreads = options.targetThreads;
    front.foldBatchNorm = options.foldBatchNorm;
    front.fuse = options.fuse;
    front.layout = options.layout;
    front.planMemory = options.planMemory;
    // Panels are a CPU micro-kernel's layout; the GPU kernels stage tiles.
    front.packWeights = false;
    // Dense convolutions as im2col + GEMM, which dl-gpu-shared-matmul stages
    // through shared memory; a direct convolution would be plain loops.
    front.maxDirectFilterBytes = -1;
    front.nchwMinFilterBytes = -1;
    if (failed(buildCPUPipeline(pm, front, error)))
      return failure();

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
    // Nothing left for the host to compute on device buffers: copies and
    // rank-0 ops become kernels too.
    DLMemRefCopyToLinalgOptions copies;
    copies.all = true;
    func.addPass(createDLMemRefCopyToLinalg(copies));
    // Loops parallel first, then reductions along contiguous rows as one
    // block per output element; what is left (full reductions of fewer
    // than 32 elements among it) goes through the parallel-loop path.
    func.addPass(createDLGPUParallelOuter());
    func.addPass(createDLGPURowReductions());
    func.addPass(createDLGPUScalarKernels());
    func.addPass(createConvertLinalgToParallelLoopsPass());
    DLGPUTileForBlocksOptions blocks;
    blocks.blockSize = options.blockSize;
    func.addPass(createDLGPUTileForBlocks(blocks));
    func.addPass(createConvertParallelLoopToGpuPass());
    func.addPass(createDLGPUCheckMapped());
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
    // One name per kernel (its module's), for profilers.
    pm.addPass(createDLGPUNameKernels());
  }
  if (to == "gpu")
    return success();
  if (emulated) {
    // The same kernels, run on the CPU: the CPU pipeline's last stage.
    pm.addPass(createDLGPUToCPU());
    CPUPipelineOptions back;
    back.from = "vector";
    back.to = "llvm";
    back.targetCPU = options.targetCPU;
    back.targetFeatures = options.targetFeatures;
    back.targetThreads = options.targetThreads;
    return buildCPUPipeline(pm, back, error);
  }
  // Host buffers the kernels use in device memory.
  pm.addPass(createDLGPUDeviceMemory());
  // Launches chained on one stream by tokens (upstream's gpu-async-region)
  // instead of each on a stream of its own, created, waited for and destroyed
  // around it; the host waits where it must (allocations, before returning).
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // bf16 tensor-core ops, which upstream's convert-nvgpu-to-nvvm leaves.
  pm.addPass(createDLGPUBF16MmaToNVVM());
  // Float remainders (fmod), which upstream's pipeline cannot lower.
  pm.addNestedPass<gpu::GPUModuleOp>(createDLGPUFloatRemainderToLibdevice());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = "+ptx80";
  nvvm.cubinFormat = options.format;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  return success();
}
