//===- CPUPipeline.cpp - dl-cpu-pipeline ----------------------------------===//
//
// The whole CPU lowering, top to bottom, in one function. Each stage is a named
// phase; `from`/`to` run a slice, so Python can show the IR at every stage and
// `dl-opt` can replay any stage from printed IR.
//
//   dl ─graph─> dl ─linalg─> linalg on tensors ─bufferized─> linalg on memrefs
//      ─affine─> affine loops (+ tiling hook) ─vector─> affine + vector
//      ─llvm─> llvm dialect for the ExecutionEngine
//
// Upstream passes do every step except convert-dl-to-linalg, the dl-affine-*
// loop transformations and the dl-outline-parallel / dl-lower-parallel-launch
// pair with its runtime (see their header comments for why they are ours).
//
//===----------------------------------------------------------------------===//

#include "dl/Codegen/CPU/Passes.h"
#include "dl/Codegen/Common/Passes.h"
#include "dl/Conversion/Passes.h"
#include "dl/Pipelines/Pipelines.h"
#include "dl/Target/Passes.h"
#include "dl/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::dl;

namespace {

void addCleanups(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// dl -> dl: graph-level simplification (folding, dead code, CSE), batch
/// norms folded into their convolutions, convolutions and poolings in NHWC
/// (dl-layout), 3x3 convolutions by Winograd (dl-winograd), constant
/// weights of matrix-vector-like products packed (dl-pack-weights), then
/// the code-generation strategy of each op (dl-select-strategies).
void addGraphStage(OpPassManager &pm, const CPUPipelineOptions &options) {
  addCleanups(pm);
  if (options.foldBatchNorm) {
    pm.addPass(createDLFoldBatchNorm());
    addCleanups(pm);
  }
  if (options.layout) {
    DLLayoutOptions layout;
    layout.nchwMinFilterBytes = options.nchwMinFilterBytes;
    pm.addNestedPass<func::FuncOp>(createDLLayout(layout));
    addCleanups(pm);
  }
  if (options.winograd) {
    DLWinogradOptions winograd;
    winograd.minTiles = options.winogradMinTiles;
    winograd.minChannels = options.winogradMinChannels;
    pm.addPass(createDLWinograd(winograd));
  }
  if (options.packWeights)
    pm.addPass(createDLPackWeights());
  DLSelectStrategiesOptions strategies;
  strategies.maxDirectFilterBytes = options.maxDirectFilterBytes;
  pm.addPass(createDLSelectStrategies(strategies));
}

/// dl -> linalg on tensors; elementwise producers fused into consumers that
/// read each of their elements once (dl-linalg-fuse).
void addLinalgStage(OpPassManager &pm, const CPUPipelineOptions &options) {
  pm.addPass(createConvertDLToLinalg());
  if (options.fuse) {
    // The conversion asks each result for its dynamic sizes (tensor.dim):
    // folded first, or a producer would have two users and not fuse.
    addCleanups(pm);
    pm.addPass(createDLLinalgFuse());
  }
  addCleanups(pm);
  if (options.fuseAttention) {
    pm.addNestedPass<func::FuncOp>(createDLFuseAttention());
    addCleanups(pm);
  }
}

/// Tensors -> memrefs, function boundaries included (identity layouts, so the
/// caller passes plain contiguous buffers), then explicit deallocation of
/// every temporary: returned buffers are owned by the caller (a returned
/// argument or alias is cloned, and the clone becomes an alloc + copy);
/// temporaries with disjoint lifetimes then share one arena (dl-plan-memory).
void addBufferizedStage(OpPassManager &pm, const CPUPipelineOptions &options) {
  // Each accumulation's elementwise consumer next to it, so the memory plan
  // keeps them apart from what later products read (register-tile
  // epilogues).
  pm.addNestedPass<func::FuncOp>(createDLScheduleEpilogues());
  // Fewer copies: each accumulation its own filled buffer, producers
  // written straight into the interior of a padded buffer.
  pm.addNestedPass<func::FuncOp>(createDLUnshareFills());
  // Donated results computed in their arguments (dlc.jit's donate_argnums).
  pm.addNestedPass<func::FuncOp>(createDLDonateDestinations());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // ... and returned there, before deallocation would clone them.
  pm.addNestedPass<func::FuncOp>(createDLReturnDonated());
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  addCleanups(pm);
  // Disabled, the planner still measures the unplanned peak.
  DLPlanMemoryOptions plan;
  plan.apply = options.planMemory;
  pm.addNestedPass<func::FuncOp>(createDLPlanMemory(plan));
}

/// linalg on memrefs -> affine loop nests, reordered for locality where
/// legal; accumulation nests (matmul, convolution) become register-blocked
/// micro-kernels; nests that must stride through memory (transposes) get L2
/// and L1 tiles (dl-affine-tile). `tileSize` runs upstream's
/// affine-loop-tile with that size instead.
void addAffineStage(OpPassManager &pm, const CPUPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createDLMemRefCopyToLinalg());
  // Integer matmuls as VNNI micro-kernels, where the target has VNNI (scf
  // and vector ops the affine passes leave alone).
  if (options.vectorize && options.integerKernels) {
    DLIntegerMatmulOptions integer;
    integer.parallel = options.parallel;
    integer.epilogue = options.epilogue;
    pm.addPass(createDLIntegerMatmul(integer));
  }
  // Cut into parts here, the passes below run on the context's threads.
  if (options.earlySplitOps > 0) {
    DLSplitFunctionOptions split;
    split.maxOps = options.earlySplitOps;
    split.early = true;
    pm.addPass(createDLSplitFunction(split));
  }
  pm.addNestedPass<func::FuncOp>(createDLLinalgToAffineLoops());
  // Index arithmetic (a convolution's oh + kh) folded into the access maps,
  // where the loop transformations see it.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Transposes copied by vector squares (before interchange and cache
  // tiling, which then leave them alone).
  if (options.vectorize && options.transposeSquares)
    pm.addNestedPass<func::FuncOp>(createDLAffineTransposeSquares());
  if (options.interchange)
    pm.addNestedPass<func::FuncOp>(createDLAffineInterchange());
  if (options.registerTile && options.vectorize) {
    DLAffineRegisterTileOptions registerTile;
    registerTile.epilogue = options.epilogue;
    pm.addNestedPass<func::FuncOp>(createDLAffineRegisterTile(registerTile));
  }
  if (options.tileSize > 0) {
    std::unique_ptr<Pass> tiling = affine::createLoopTilingPass();
    std::string tilingOptions = "tile-size=" + std::to_string(options.tileSize);
    (void)tiling->initializeOptions(tilingOptions, [](const Twine &) {
      return failure();
    });
    pm.addNestedPass<func::FuncOp>(std::move(tiling));
  } else if (options.cacheTile) {
    DLAffineTileOptions tile;
    tile.onlyStrided = true;
    pm.addNestedPass<func::FuncOp>(createDLAffineTile(tile));
  }
  pm.addNestedPass<func::FuncOp>(affine::createAffineLoopInvariantCodeMotionPass());
  // What is left of fills, copies and elementwise nests over contiguous
  // memory: one loop each (after the register tiles, whose epilogues and
  // fills are matched dimension by dimension).
  if (options.collapseLoops)
    pm.addNestedPass<func::FuncOp>(createDLAffineCollapse());
  addCleanups(pm.nest<func::FuncOp>());
}

/// Reduction accumulators carried in iter_args (dl-affine-promote-accumulators);
/// parallel affine loops -> vector ops (dl-affine-vectorize: upstream's
/// super-vectorizer on the loops dependence analysis proves parallel, and
/// on reductions carried in iter_args); short
/// scalar reductions unrolled (dl-affine-unroll-reductions) and their
/// accumulators kept in registers (upstream's scalar replacement, which
/// that pass runs).
/// Then the outermost parallel loop of each nest with enough work becomes an
/// affine.parallel (dl-affine-parallelize).
void addVectorStage(OpPassManager &pm, const CPUPipelineOptions &options) {
  // Reductions' accumulators carried in iter_args: vectorizable, and in
  // registers where they are not.
  if (options.promoteAccumulators)
    pm.addNestedPass<func::FuncOp>(createDLAffinePromoteAccumulators());
  if (options.vectorize) {
    DLAffineVectorizeOptions vectorize;
    vectorize.vectorWidth = options.vectorWidth;
    pm.addNestedPass<func::FuncOp>(createDLAffineVectorize(vectorize));
    addCleanups(pm.nest<func::FuncOp>());
  }
  // Short reductions left scalar (an argmax over a pooling window): unrolled,
  // their accumulators forwarded in registers (upstream's scalar
  // replacement, run by the pass where it unrolled something).
  pm.addNestedPass<func::FuncOp>(createDLAffineUnrollReductions());
  if (options.parallel) {
    DLAffineParallelizeOptions parallelize;
    parallelize.minWork = options.parallelMinWork;
    pm.addNestedPass<func::FuncOp>(createDLAffineParallelize(parallelize));
  }
}

/// Everything -> llvm dialect.
void addLLVMStage(OpPassManager &pm, const CPUPipelineOptions &options) {
  // f32 tanh, erf, exp, log: vectorizable polynomials, not libm per lane.
  if (options.approximateMath)
    pm.addNestedPass<func::FuncOp>(createDLMathApproximation());
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass());
  // One function at a time, on the context's threads (over the module it
  // ran on one: 0.25 s of RegNetY-1.6GF's compile on Zen 3).
  pm.addNestedPass<func::FuncOp>(createLowerAffinePass());
  // Parallel loops -> outlined bodies, launched on dlc's thread pool.
  // Repeated loop nests (the same kernel in each layer) compiled once.
  DLOutlineParallelOptions outlineParallel;
  outlineParallel.merge = options.outlineLoops;
  pm.addPass(createDLOutlineParallel(outlineParallel));
  if (options.outlineLoops)
    pm.addPass(createDLOutlineLoops());
  // Functions of bounded size: LLVM's loop passes are quadratic in it.
  DLSplitFunctionOptions split;
  split.maxOps = options.maxFunctionOps;
  pm.addPass(createDLSplitFunction(split));
  // From here on the module holds many functions (the outlined parallel
  // bodies, the split parts: 212 in EfficientNet-B0): what converts one
  // function at a time runs nested, on the MLIR context's threads, rather
  // than over the module on one (upstream's passes, nested by us).
  {
    OpPassManager &fn = pm.nest<func::FuncOp>();
    fn.addPass(createSCFToControlFlowPass());
    addCleanups(fn);
  }
  // math: integer powers become outlined functions, what LLVM has intrinsics
  // for becomes intrinsics, the rest (erf, tanh) calls libm.
  pm.addPass(createConvertMathToFuncs());
  pm.addNestedPass<func::FuncOp>(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  {
    OpPassManager &fn = pm.nest<func::FuncOp>();
    // vector.transpose (the packing of a transposed GEMM input, by
    // squares) as the target's shuffles.
    fn.addPass(createDLLowerVectorTranspose());
    fn.addPass(createConvertVectorToLLVMPass());
    fn.addPass(memref::createExpandStridedMetadataPass());
    fn.addPass(createLowerAffinePass());
  }
  // Allocations call dlc's runtime (lib/Runtime/Memory.cpp): a failure
  // is reported to the caller instead of a store through NULL, and large
  // blocks are reused across calls.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertFuncToLLVMPass());
  {
    OpPassManager &fn = pm.nest<LLVM::LLVMFuncOp>();
    fn.addPass(createArithToLLVMConversionPass());
    fn.addPass(createConvertIndexToLLVMPass());
  }
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addNestedPass<LLVM::LLVMFuncOp>(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createDLLowerParallelLaunch());
  addCleanups(pm.nest<LLVM::LLVMFuncOp>());
  // LLVM compiles for the CPU the IR's decisions were made for.
  pm.addPass(createDLLLVMTargetAttributes());
}

} // namespace

ArrayRef<StageInfo> mlir::dl::cpuStages() {
  static const StageInfo stages[] = {
      {"dl", "dl as traced from Python or written"},
      {"graph", "dl after graph-level optimization: folding, batch norms "
                "folded, NHWC layout, a #dl.strategy on each compute-heavy "
                "op"},
      {"linalg", "linalg, tensor, arith and math on tensors, elementwise "
                 "ops fused"},
      {"bufferized", "linalg on memrefs, deallocation explicit; temporaries "
                     "share one arena where their lifetimes allow"},
      {"affine", "affine loop nests: interchanged, matmuls and convolutions "
                 "as register-tiled micro-kernels"},
      {"vector", "affine loops with vector ops; affine.parallel marks the "
                 "loops run on threads"},
      {"llvm", "llvm dialect, as handed to the ExecutionEngine"},
  };
  return stages;
}

std::optional<CPUStage> mlir::dl::parseCPUStage(StringRef name) {
  ArrayRef<StageInfo> stages = cpuStages();
  const StageInfo *found = llvm::find_if(
      stages, [&](const StageInfo &stage) { return stage.name == name; });
  if (found == stages.end())
    return std::nullopt;
  return static_cast<CPUStage>(found - stages.begin());
}

/// "a, b, ..." of the stage names.
static std::string stageList(ArrayRef<StageInfo> stages) {
  std::string text;
  for (const StageInfo &stage : stages)
    text += (text.empty() ? "" : ", ") + stage.name.str();
  return text;
}

LogicalResult
mlir::dl::buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options,
                           function_ref<LogicalResult(const Twine &)> error) {
  std::optional<CPUStage> from = parseCPUStage(options.from);
  std::optional<CPUStage> to = parseCPUStage(options.to);
  for (auto [name, stage] : {std::make_pair(StringRef("from"), from),
                             std::make_pair(StringRef("to"), to)})
    if (!stage)
      return error("dl-cpu-pipeline: unknown stage '" +
                   (name == "from" ? options.from : options.to) + "' for `" +
                   name + "`; the stages are, in order: " +
                   stageList(cpuStages()));
  if (*from > *to)
    return error("dl-cpu-pipeline: `from` must not come after `to` in the "
                 "stage order " +
                 stageList(cpuStages()));
  auto runs = [&](CPUStage stage) { return *from < stage && stage <= *to; };
  // The target every later decision is made for, resolved once and carried
  // by the module (kept as it is where the IR already has a complete one).
  DLResolveTargetOptions target;
  target.cpu = options.targetCPU;
  target.features = options.targetFeatures;
  target.threads = options.targetThreads;
  pm.addPass(createDLResolveTarget(target));
  // No pass below sees a type whose size overflows int64_t.
  pm.addPass(createDLCheckSizes());
  if (runs(CPUStage::Graph))
    addGraphStage(pm, options);
  if (runs(CPUStage::Linalg))
    addLinalgStage(pm, options);
  if (runs(CPUStage::Bufferized))
    addBufferizedStage(pm, options);
  if (runs(CPUStage::Affine))
    addAffineStage(pm, options);
  if (runs(CPUStage::Vector))
    addVectorStage(pm, options);
  if (runs(CPUStage::LLVM))
    addLLVMStage(pm, options);
  return success();
}

void mlir::dl::registerPipelines() {
  registerPassPipeline(
      "dl-cpu-pipeline",
      "Lower dl to the llvm dialect for CPU execution, through linalg, "
      "bufferization, affine and vector; `from`/`to` select stages",
      [](OpPassManager &pm, StringRef optionsText,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        CPUPipelineOptions options;
        if (failed(options.parseFromString(optionsText)))
          return failure();
        return buildCPUPipeline(pm, options, errorHandler);
      },
      [](function_ref<void(const detail::PassOptions &)> printOptions) {
        printOptions(CPUPipelineOptions());
      });
  registerPassPipeline(
      "dl-gpu-pipeline",
      "Lower dl to NVIDIA GPU kernels (gpu.module, NVVM, PTX or cubin) with "
      "a host side for the GPU runtime; `to=gpu` stops before NVVM",
      [](OpPassManager &pm, StringRef optionsText,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        GPUPipelineOptions options;
        if (failed(options.parseFromString(optionsText)))
          return failure();
        return buildGPUPipeline(pm, options, errorHandler);
      },
      [](function_ref<void(const detail::PassOptions &)> printOptions) {
        printOptions(GPUPipelineOptions());
      });
}
