//===- Pipelines.h - dlc's named pass pipelines -----------------*- C++ -*-===//
//
// The CPU pipeline is built in ONE place (lib/Pipelines/CPUPipeline.cpp) as a
// sequence of named stages; `from`/`to` select a slice of it so that any stage
// can be replayed from the printed IR of the previous one.
//
//===----------------------------------------------------------------------===//
#ifndef DL_PIPELINES_H
#define DL_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace dl {

/// The stages of the CPU pipeline, in order. The IR "at" a stage is the IR
/// after the passes that produce it.
enum class CPUStage {
  DL,         // dl as traced / written
  Graph,      // dl after graph-level simplification
  Linalg,     // linalg on tensors
  Bufferized, // linalg on memrefs, deallocation explicit
  Affine,     // affine loops (tiled when tile-size > 0)
  Vector,     // affine loops with vector ops
  LLVM,       // llvm dialect, ready for the ExecutionEngine
};

/// The `cl::values` naming every stage (for the `from`/`to` options).
inline auto cpuStageValues() {
  return llvm::cl::values(
      clEnumValN(CPUStage::DL, "dl", "dl as written"),
      clEnumValN(CPUStage::Graph, "graph", "dl after graph simplification"),
      clEnumValN(CPUStage::Linalg, "linalg", "linalg on tensors"),
      clEnumValN(CPUStage::Bufferized, "bufferized", "linalg on memrefs"),
      clEnumValN(CPUStage::Affine, "affine", "affine loops"),
      clEnumValN(CPUStage::Vector, "vector", "affine loops with vectors"),
      clEnumValN(CPUStage::LLVM, "llvm", "llvm dialect"));
}

struct CPUPipelineOptions : public PassPipelineOptions<CPUPipelineOptions> {
  Option<CPUStage> from{*this, "from",
                        llvm::cl::desc("Stage the input IR is at"),
                        llvm::cl::init(CPUStage::DL), cpuStageValues()};
  Option<CPUStage> to{*this, "to",
                      llvm::cl::desc("Stage to stop at (inclusive)"),
                      llvm::cl::init(CPUStage::LLVM), cpuStageValues()};
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
  Option<int64_t> maxDirectFilterBytes{
      *this, "max-direct-filter-bytes",
      llvm::cl::desc("Largest filter (bytes) of an NHWC f32 convolution run "
                     "as a direct convolution rather than im2col + GEMM (0: "
                     "half of this machine's L2; -1: never, and f16/bf16 "
                     "convolutions are im2col + GEMM too)"),
      llvm::cl::init(0)};
  Option<int64_t> nchwMinFilterBytes{
      *this, "nchw-min-filter-bytes",
      llvm::cl::desc("An f32 NCHW convolution whose filter has more bytes "
                     "stays NCHW in dl-layout: its im2col GEMM reads the "
                     "filter as it lies (0: half of this machine's L2; -1: "
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
  Option<unsigned> registerBits{
      *this, "register-bits",
      llvm::cl::desc("Width of the target's vector registers in bits (512 "
                     "for AVX-512, 256 for AVX2)"),
      llvm::cl::init(512)};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads the GEMM column blocks are sized for (0: this "
                     "machine's hardware threads; the thread count at run "
                     "time is dlc.set_num_threads)"),
      llvm::cl::init(0)};
  Option<bool> cacheTile{
      *this, "cache-tile",
      llvm::cl::desc("L2/L1 tiles for nests that stride through memory "
                     "(dl-affine-tile{only-strided})"),
      llvm::cl::init(true)};
  Option<unsigned> tileSize{
      *this, "tile-size",
      llvm::cl::desc("Tile affine loop nests with this tile size (0: no "
                     "tiling). The hook where dependence-driven tiling goes."),
      llvm::cl::init(0)};
  Option<unsigned> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Vectorize innermost affine loops with this many lanes "
                     "(0: no vector code at all, register tiling included)"),
      llvm::cl::init(8)};
  Option<int64_t> l1Bytes{
      *this, "l1-bytes",
      llvm::cl::desc("L1 data cache size in bytes the loop transformations "
                     "size blocks by (0: read from this machine)"),
      llvm::cl::init(0)};
  Option<int64_t> l2Bytes{
      *this, "l2-bytes",
      llvm::cl::desc("L2 cache size in bytes (0: read from this machine)"),
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
      // async runtime it was ~60 us, and this was 2^20). Measured with
      // /tmp scripts over 2^14..2^20 (medians, 2 threads): 2^16 is the
      // best or tied everywhere: MLP b64 0.097-0.102 ms (0.135 at 2^20),
      // matmul 128 0.038 ms (0.045); 2^14 loses (MLP b64 0.14-0.16 ms,
      // convolutions 1.5-2x slower: nests too small to split).
      llvm::cl::init(65536)};
};

/// Adds the passes that take IR at `options.from` to IR at `options.to`.
void buildCPUPipeline(OpPassManager &pm, const CPUPipelineOptions &options);

/// Registers `dl-cpu-pipeline`.
/// Options of dl-gpu-pipeline (lib/Pipelines/GPUPipeline.cpp).
struct GPUPipelineOptions : public PassPipelineOptions<GPUPipelineOptions> {
  Option<std::string> from{*this, "from",
                           llvm::cl::desc("Stage the input IR is at: dl, "
                                          "graph, linalg, bufferized (CPU "
                                          "pipeline stages) or gpu (the "
                                          "output of to=gpu)"),
                           llvm::cl::init("dl")};
  Option<bool> foldBatchNorm{*this, "fold-batchnorm",
                             llvm::cl::desc("As in dl-cpu-pipeline"),
                             llvm::cl::init(true)};
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("As in dl-cpu-pipeline"),
                    llvm::cl::init(true)};
  Option<bool> layout{*this, "layout", llvm::cl::desc("As in dl-cpu-pipeline"),
                      llvm::cl::init(true)};
  Option<bool> planMemory{*this, "plan-memory",
                          llvm::cl::desc("As in dl-cpu-pipeline"),
                          llvm::cl::init(true)};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("NVIDIA target: sm_70, sm_75, "
                                          "sm_80, sm_86, sm_89 or sm_90"),
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
                                        "binary (the whole pipeline) or cpu "
                                        "(the gpu kernels run as loops on "
                                        "the CPU by dl-gpu-to-cpu, lowered "
                                        "to the llvm dialect)"),
                         llvm::cl::init("binary")};
};

/// Appends dl-gpu-pipeline to `pm`; fails (with `error`) on bad options.
LogicalResult buildGPUPipeline(OpPassManager &pm,
                               const GPUPipelineOptions &options,
                               function_ref<LogicalResult(const Twine &)> error);

void registerPipelines();

} // namespace dl
} // namespace mlir

#endif // DL_PIPELINES_H
