//===- Pipelines.h - dlc's named pass pipelines -----------------*- C++ -*-===//
//
// Each pipeline is built in ONE place (lib/Pipelines/CPUPipeline.cpp,
// GPUPipeline.cpp) as a sequence of named stages; `from`/`to` select a slice
// of it so that any stage can be replayed from the printed IR of the
// previous one. The stage and chip names are listed here once; the Python
// package reads them from these tables (dlc.STAGES, dlc.GPU_STAGES).
//
//===----------------------------------------------------------------------===//
#ifndef DL_PIPELINES_H
#define DL_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <optional>

namespace mlir {
class OpPassManager;
namespace dl {

/// A stage of a pipeline: its name (as `from`/`to` spell it) and what the
/// IR at it is.
struct StageInfo {
  llvm::StringLiteral name;
  llvm::StringLiteral description;
};

/// The stages of dl-cpu-pipeline, in order. The IR "at" a stage is the IR
/// after the passes that produce it.
ArrayRef<StageInfo> cpuStages();

/// The stages of dl-gpu-pipeline: the CPU pipeline's first four, then
/// `gpu`, then `binary` or `emulated`, each lowered from `gpu`.
ArrayRef<StageInfo> gpuStages();

/// The NVIDIA chips dl-gpu-pipeline compiles for.
ArrayRef<StringRef> gpuChips();

/// The stages of the CPU pipeline, as positions in cpuStages().
enum class CPUStage { DL, Graph, Linalg, Bufferized, Affine, Vector, LLVM };

/// The CPU stage called `name`, if any.
std::optional<CPUStage> parseCPUStage(StringRef name);

/// Options both pipelines share: the target of the host code and the graph
/// passes that may be turned off. (CRTP: PassPipelineOptions needs the
/// final type.)
template <typename Derived>
struct CommonPipelineOptions : public PassPipelineOptions<Derived> {
  template <typename T>
  using Option = typename PassPipelineOptions<Derived>::template Option<T>;

  Option<std::string> targetCPU{
      *this, "target-cpu",
      llvm::cl::desc("CPU to compile for: an LLVM CPU name (znver4, haswell, "
                     "neoverse-v1, ...) or host; empty: the module's "
                     "#dl.target, else the host (dl-resolve-target)"),
      llvm::cl::init("")};
  Option<std::string> targetFeatures{
      *this, "target-features",
      llvm::cl::desc("ISA features added (+name) or removed (-name) "
                     "relative to the CPU's"),
      llvm::cl::init("")};
  Option<int64_t> targetThreads{
      *this, "target-threads",
      llvm::cl::desc("Hardware threads the code is sized for (0: the "
                     "target's; the thread count at run time is "
                     "dlc.set_num_threads)"),
      llvm::cl::init(0)};
  Option<bool> foldBatchNorm{
      *this, "fold-batchnorm",
      llvm::cl::desc("Fold inference batch norms into the conv2d/matmul "
                     "before them (dl-fold-batchnorm)"),
      llvm::cl::init(true)};
  Option<bool> layout{
      *this, "layout",
      llvm::cl::desc("Run NCHW convolutions and poolings in NHWC, "
                     "converting only at the graph's edges (dl-layout)"),
      llvm::cl::init(true)};
  Option<bool> planMemory{
      *this, "plan-memory",
      llvm::cl::desc("Share memory between temporaries with disjoint "
                     "lifetimes (dl-plan-memory)"),
      llvm::cl::init(true)};
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Fuse elementwise producers into their consumers "
                     "(dl-linalg-fuse)"),
      llvm::cl::init(true)};
};

struct CPUPipelineOptions : public CommonPipelineOptions<CPUPipelineOptions> {
  Option<std::string> from{*this, "from",
                           llvm::cl::desc("Stage the input IR is at (see "
                                          "cpuStages: dl, graph, linalg, "
                                          "bufferized, affine, vector, llvm)"),
                           llvm::cl::init("dl")};
  Option<std::string> to{*this, "to",
                         llvm::cl::desc("Stage to stop at (inclusive)"),
                         llvm::cl::init("llvm")};
  Option<bool> packWeights{
      *this, "pack-weights",
      llvm::cl::desc("Pack the constant weights of matrix-vector-like "
                     "products into column panels (dl-pack-weights)"),
      llvm::cl::init(true)};
  Option<bool> winograd{
      *this, "winograd",
      llvm::cl::desc("3x3 convolutions of stride 1 with enough tiles and "
                     "channels by Winograd's F(2x2, 3x3) (dl-winograd)"),
      llvm::cl::init(true)};
  Option<int64_t> winogradMinTiles{
      *this, "winograd-min-tiles",
      llvm::cl::desc("dl-winograd's min-tiles: fewest 2x2 output tiles of a "
                     "convolution it transforms"),
      llvm::cl::init(32)};
  Option<int64_t> winogradMinChannels{
      *this, "winograd-min-channels",
      llvm::cl::desc("dl-winograd's min-channels: fewest input and output "
                     "channels of a convolution it transforms"),
      llvm::cl::init(64)};
  Option<int64_t> maxDirectFilterBytes{
      *this, "max-direct-filter-bytes",
      llvm::cl::desc("Largest filter (bytes) of an NHWC f32 convolution run "
                     "as a direct convolution rather than im2col + GEMM (0: "
                     "half of the target's L2; -1: never, and f16/bf16 "
                     "convolutions are im2col + GEMM too)"),
      llvm::cl::init(0)};
  Option<int64_t> nchwMinFilterBytes{
      *this, "nchw-min-filter-bytes",
      llvm::cl::desc("An f32 NCHW convolution whose filter has more bytes "
                     "stays NCHW in dl-layout: its im2col GEMM reads the "
                     "filter as it lies (0: half of the target's L2; -1: "
                     "every convolution goes to NHWC)"),
      llvm::cl::init(0)};
  Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("f32 tanh, erf, exp, expm1, log, log1p, log2 as "
                     "vectorizable polynomial approximations "
                     "(dl-math-approximation) rather than libm calls"),
      llvm::cl::init(true)};
  Option<bool> epilogue{
      *this, "epilogue",
      llvm::cl::desc("Compute the elementwise op that follows a matmul or "
                     "convolution (bias, activation, residual add) in its "
                     "register tiles (dl-affine-register-tile epilogue)"),
      llvm::cl::init(true)};
  Option<bool> transposeSquares{
      *this, "transpose-squares",
      llvm::cl::desc("Copy transposes by vector squares transposed in "
                     "registers (dl-affine-transpose-squares)"),
      llvm::cl::init(true)};
  Option<bool> promoteAccumulators{
      *this, "promote-accumulators",
      llvm::cl::desc("Carry reductions' accumulators in iter_args, so that "
                     "they vectorize or stay in registers "
                     "(dl-affine-promote-accumulators)"),
      llvm::cl::init(true)};
  Option<bool> interchange{
      *this, "interchange",
      llvm::cl::desc("Reorder affine loop nests for locality "
                     "(dl-affine-interchange)"),
      llvm::cl::init(true)};
  Option<bool> registerTile{
      *this, "register-tile",
      llvm::cl::desc("Register-blocked micro-kernels for accumulation nests "
                     "(dl-affine-register-tile)"),
      llvm::cl::init(true)};
  Option<bool> integerKernels{
      *this, "integer-kernels",
      llvm::cl::desc("8-bit integer matmuls as the target's dot-product "
                     "micro-kernels, VNNI's vpdpbusd (dl-integer-matmul)"),
      llvm::cl::init(true)};
  Option<bool> fuseAttention{
      *this, "fuse-attention",
      llvm::cl::desc("Attention (a contraction of a softmax of a contraction) "
                     "as one loop over blocks of query rows "
                     "(dl-fuse-attention)"),
      llvm::cl::init(true)};
  Option<bool> cacheTile{
      *this, "cache-tile",
      llvm::cl::desc("L2/L1 tiles for nests that stride through memory "
                     "(dl-affine-tile{only-strided})"),
      llvm::cl::init(true)};
  Option<bool> collapseLoops{
      *this, "collapse-loops",
      llvm::cl::desc("Merge the loops of nests that walk contiguous memory "
                     "into one (dl-affine-collapse)"),
      llvm::cl::init(true)};
  Option<unsigned> tileSize{
      *this, "tile-size",
      llvm::cl::desc("Tile affine loop nests with this tile size (0: no "
                     "tiling). The hook where dependence-driven tiling goes."),
      llvm::cl::init(0)};
  Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Vector code at all: vectorized loops and the register-"
                     "tiled micro-kernels (false: scalar loops only)"),
      llvm::cl::init(true)};
  Option<unsigned> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Lanes of the vectorized loops (0: per loop from the "
                     "target's vector registers)"),
      llvm::cl::init(0)};
  Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run the outermost parallel loop of each nest on the "
                     "threads of dlc's runtime (dl-affine-parallelize, "
                     "dl-outline-parallel); the thread count is read at run "
                     "time from @dlc_num_threads"),
      llvm::cl::init(true)};
  Option<int64_t> parallelMinWork{
      *this, "parallel-min-work",
      llvm::cl::desc("Least estimated operations of a loop run on threads"),
      // A fork/join on dlc's spinning pool costs a few us (on MLIR's
      // async runtime it was ~60 us, and this was 2^20). 2^16 was the best
      // of 2^14..2^20 when the pool was new (2^14 lost on an MLP b64 and
      // convolutions); with today's pool and kernels (Zen 5, 2 threads,
      // interleaved medians) 2^13 wins or ties everywhere measured:
      // MobileNetV3-Large b1 1.86 -> 1.73 ms, EfficientNet-B0 3.72 -> 3.55,
      // ResNet-50 19.37 -> 19.04, ViT-S 22.83 -> 22.21, DistilBERT 25.68 ->
      // 25.33, softmax 64x1000 66 -> 43 us; an MLP b64/b8 and 16-channel
      // convolutions at 16x16 and 32x32 unchanged (within 1 us).
      llvm::cl::init(8192)};
  Option<bool> outlineLoops{
      *this, "outline-loops",
      llvm::cl::desc("Compile repeated loop nests (the same kernel in each "
                     "layer) once, as one function (dl-outline-loops, and "
                     "dl-outline-parallel{merge})"),
      llvm::cl::init(true)};
  Option<int64_t> maxFunctionOps{
      *this, "max-function-ops",
      llvm::cl::desc("Operations above which a function is cut into calls of "
                     "parts of about this size before LLVM (dl-split-function; "
                     "0: never)"),
      // LLVM's loop passes are quadratic in a function's size. opt -O2 +
      // llc of an 800-nest chain of `x * a + b` (fusion off), by this
      // option: unsplit 7.5 s, 4000: 5.8 s, 2000: 3.6 s, 1000: 3.1 s,
      // 500: 2.9 s, 250: 2.7 s; EfficientNet-B0's LLVM time in the JIT:
      // unsplit 13.5 s, 2000: 6.2 s, 1000: 6.7 s, 500: 6.4 s (Zen 4).
      llvm::cl::init(1000)};
  Option<int64_t> earlySplitOps{
      *this, "early-split-ops",
      llvm::cl::desc("Operations of linalg on memrefs above which a function "
                     "is cut into parts of about this size before the affine "
                     "stage, so that the affine and vector passes run on the "
                     "context's threads (dl-split-function{early}; 0: never)"),
      llvm::cl::init(150)};
};

/// Adds the passes that take IR at `options.from` to IR at `options.to`;
/// fails (with `error`) on unknown stages or `from` after `to`.
LogicalResult buildCPUPipeline(OpPassManager &pm,
                               const CPUPipelineOptions &options,
                               function_ref<LogicalResult(const Twine &)> error);

/// Options of dl-gpu-pipeline (lib/Pipelines/GPUPipeline.cpp).
struct GPUPipelineOptions : public CommonPipelineOptions<GPUPipelineOptions> {
  Option<std::string> from{*this, "from",
                           llvm::cl::desc("Stage the input IR is at: dl, "
                                          "graph, linalg, bufferized (CPU "
                                          "pipeline stages) or gpu (the "
                                          "output of to=gpu)"),
                           llvm::cl::init("dl")};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("NVIDIA target (see gpuChips: "
                                          "sm_70 ... sm_90)"),
                           llvm::cl::init("sm_90")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block along the "
                                           "innermost parallel loop"),
                            llvm::cl::init(256)};
  Option<int64_t> matmulTile{*this, "matmul-tile",
                             llvm::cl::desc("Edge of the shared-memory tiles "
                                            "of matmul kernels (tile x tile "
                                            "threads per block, 1..32)"),
                             llvm::cl::init(16)};
  Option<bool> tensorCores{*this, "tensor-cores",
                           llvm::cl::desc("f16/bf16 matmuls (f32 accumulator) "
                                          "on tensor cores with mma.sync "
                                          "(dl-gpu-mma-matmul), where the "
                                          "chip has m16n8k16 (sm_80 and "
                                          "newer)"),
                           llvm::cl::init(true)};
  Option<std::string> format{*this, "format",
                             llvm::cl::desc("What gpu-module-to-binary "
                                            "produces: isa (PTX text, no GPU "
                                            "or ptxas needed), bin (cubin, "
                                            "needs ptxas) or fatbin"),
                             llvm::cl::init("isa")};
  Option<std::string> to{*this, "to",
                         llvm::cl::desc("Stop after: gpu (kernels outlined "
                                        "into gpu.module, before NVVM), "
                                        "binary (the whole pipeline) or "
                                        "emulated (the gpu kernels run as "
                                        "loops on the CPU by dl-gpu-to-cpu, "
                                        "lowered to the llvm dialect; `cpu` "
                                        "says the same)"),
                         llvm::cl::init("binary")};
};

/// Appends dl-gpu-pipeline to `pm`; fails (with `error`) on bad options.
LogicalResult buildGPUPipeline(OpPassManager &pm,
                               const GPUPipelineOptions &options,
                               function_ref<LogicalResult(const Twine &)> error);

/// Registers `dl-cpu-pipeline` and `dl-gpu-pipeline`.
void registerPipelines();

} // namespace dl
} // namespace mlir

#endif // DL_PIPELINES_H
