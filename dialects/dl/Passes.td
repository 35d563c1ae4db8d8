//===- Passes.td - dlc passes --------------------------------*- tablegen -*-===//
//
// Every C++ pass of dlc, with its options. Registration and constructors are
// generated from this file (`-gen-pass-decls`).
//
//===----------------------------------------------------------------------===//

#ifndef DL_PASSES_TD
#define DL_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertDLToLinalg : Pass<"convert-dl-to-linalg"> {
  let summary = "Lower dl ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every `dl` op into upstream ops on tensors: `linalg.matmul`,
    `linalg.batch_matmul`, `linalg.transpose`, `linalg.reduce` and
    `linalg.generic` (elementwise ops, with numpy broadcasting expressed by
    indexing maps rather than materialized copies), `tensor.collapse_shape` /
    `tensor.expand_shape` for reshapes, `arith.constant` for constants.
    Dynamic sizes of results are taken from the operands with `tensor.dim`.
    Tensors of i1 (bool) become tensors of i8 holding 0 or 1, in function
    signatures too: that is numpy's layout of bool, and MLIR's memref lowering
    cannot address i1 elements. Any `dl` op left unconverted is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def DLAffineInterchange : Pass<"dl-affine-interchange", "::mlir::func::FuncOp"> {
  let summary = "Reorder perfect affine loop nests for locality, where legal";
  let description = [{
    For every perfect affine loop nest (up to 6 loops, rectangular bounds,
    affine memory accesses only), computes the direction vectors of all its
    dependences, and among the permutations that keep them lexicographically
    non-negative picks the one of least locality cost: loops whose iterations
    reuse an address innermost, then unit-stride walks along the innermost
    memref dimension, then strided walks; ties favour parallel loops
    outermost, then the original order. A matmul's (i, j, k) nest becomes
    (i, k, j). When the cheapest permutation is illegal, a remark names the
    dependence that rules it out and the order used instead.
  }];
}

def DLAffineRegisterTile : Pass<"dl-affine-register-tile", "::mlir::func::FuncOp"> {
  let summary = "Register-blocked micro-kernels for affine accumulation nests";
  let description = [{
    Rewrites a perfect affine nest that accumulates into one output (a
    matmul, a batched matmul, a direct convolution after
    `convert-linalg-to-affine-loops` and `dl-affine-interchange`) into a
    register-blocked micro-kernel: the output tile of `rows` x (`vectors` x
    vector width) elements lives in vector registers (loop-carried
    `iter_args`) for the whole of the reduction loops, which move inside the
    tile loops; the innermost output loop is vectorized and both tile loops
    are unrolled and jammed. Columns and the outermost reduction loop are
    blocked for the cache around the tile loops (a block of the input indexed
    by them is reused by every row tile), and that block is packed into a
    contiguous buffer when the input's last two indices are exactly those
    loops (B of a matmul). This is unroll-and-jam, scalar replacement of the
    accumulator and vectorization in one step; legality is structural (the
    only write is to the output, at an address that names every non-reduction
    loop, and the output is a fresh allocation no input aliases). Rows and
    columns that do not fill a tile run in the original loop nest, restricted
    to the remainder.

    Requirements, else the nest is left alone: the output is written by one
    affine.store and read by one affine.load at the same address; its indices
    are loop variables; the innermost loop indexes the output's last
    dimension and has a static trip count of at least one vector; every input
    is either invariant in or contiguous along that loop; the body is
    otherwise elementwise arithmetic; no other memory effect; the output is a
    memref.alloc (or a view of one); there is at least one reduction loop.

    Epilogue fusion (`epilogue`, on by default): when the next nest with
    memory effects is elementwise over the output's index space and reads
    the output C only at [i, j] (D[i, j] = f(C[i, j], bias[j], R[i, j], ...):
    bias, activation, residual add), it is computed on each tile in
    registers after the last reduction step and stored to D, so C's final
    sums never go through memory; loads of other inputs are vector loads
    (contiguous along the columns) or broadcast scalars. With the reduction
    blocked for the cache, only the last block applies it (the others store
    partial sums to C). Copies of the nest cover the remainder rows and
    columns. The tile loops get `dl.fused_epilogue = [op names]`. Not fused
    (the nest stays as it is): C read at another index or used after the
    epilogue, D or another input that may overlap C, D that may overlap an
    input of the accumulation, loads neither invariant in nor contiguous
    along the columns, uses of loop indices as values, non-elementwise ops.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"8",
           "Output rows per micro-kernel (unrolled)">,
    Option<"vectors", "vectors", "int64_t", /*default=*/"2",
           "Vectors per output row in the micro-kernel">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of a vector register in bits (512 for AVX-512)">,
    Option<"columnBlock", "column-block", "int64_t", /*default=*/"0",
           "Output columns per cache block, a multiple of the tile width "
           "(0: from the cache model)">,
    Option<"reductionBlock", "reduction-block", "int64_t", /*default=*/"0",
           "Iterations of the outermost reduction loop per cache block (0: "
           "from the cache model, and only where the shared panel of the "
           "input exceeds a quarter of L2)">,
    Option<"l1Bytes", "l1-bytes", "int64_t", /*default=*/"0",
           "L1 data cache size in bytes (0: read from this machine)">,
    Option<"l2Bytes", "l2-bytes", "int64_t", /*default=*/"0",
           "L2 cache size in bytes (0: read from this machine)">,
    Option<"threads", "threads", "int64_t", /*default=*/"0",
           "Threads to size the column blocks for: at least one block per "
           "thread where there are enough columns, so that "
           "dl-affine-parallelize runs the blocks with one fork/join per GEMM "
           "(0: this machine's hardware threads)">,
    Option<"pack", "pack", "bool", /*default=*/"true",
           "Copy each cache block of the input indexed by (reduction, column) "
           "into a contiguous buffer">,
    Option<"epilogue", "epilogue", "bool", /*default=*/"true",
           "Fuse the elementwise nest that follows the accumulation (bias, "
           "activation, residual add) into the tiles">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark for each elementwise nest after an accumulation "
           "that is not fused, with the reason">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def DLAffineVectorize : Pass<"dl-affine-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Vectorize parallel affine loops along their contiguous accesses";
  let description = [{
    Upstream's affine super-vectorizer, fed with a stricter set of candidate
    loops: a loop is a candidate only if affine dependence analysis proves it
    parallel (reductions carried in `iter_args` included) AND each of its
    stores writes a different element in each iteration. Upstream's own
    candidate set admits loops that store to one element in every iteration
    (a 0-d accumulator, or a single-iteration loop around an accumulation, as
    `convert-linalg-to-affine-loops` produces for reductions) and turns them
    into invalid `vector.transfer_write`s; such loops stay scalar here. So do
    loops that would need a masked tail within a static extent: a candidate
    starts at 0 and either has a trip count the width divides, or ends at the
    dynamic size of the memref dimension it walks (the transfers mask only at
    the memref's end; upstream vectorizes intra-tile loops after tiling anyway
    and clobbers the next tile). Static tails are left to LLVM's vectorizer:
    masked tails in small constant loop nests made LLVM's instruction selector
    take seconds. Loops the vectorizer cannot handle stay scalar too.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"8",
           "Number of lanes of the vectors (> 0)">,
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
}

def DLAffineParallelize : Pass<"dl-affine-parallelize", "::mlir::func::FuncOp"> {
  let summary = "Run the outermost parallel loop of each affine nest on threads";
  let description = [{
    In each affine loop nest, turns into an `affine.parallel` the outermost
    loop that affine dependence analysis proves parallel (no dependence
    carried between its iterations, no values carried in `iter_args`) and
    whose estimated work, by constant trip counts, reaches `min-work`
    operations; loops inside it stay sequential. Buffers allocated inside the
    loop are private to an iteration; a non-affine access may read memory the
    loop does not write, and any other memory effect (a call, a non-affine
    write to shared memory) keeps the loop sequential, as does a dependence
    the analysis cannot rule out. `dl-outline-parallel` then runs the
    `scf.parallel` this lowers to on dlc's thread pool.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"65536",
           "Least estimated number of operations a loop must run to be "
           "worth running on several threads (a fork/join on dlc's "
           "thread pool costs a few us; below some 2^16 vector operations "
           "the work saved is less)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for each nest: the loop chosen, or why none was">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect"];
}

def DLMathApproximation : Pass<"dl-math-approximation"> {
  let summary = "Polynomial approximations of f32 tanh, erf, exp, log and kin";
  let description = [{
    Rewrites f32 `math` ops named in `functions` (scalars and vectors) into
    upstream MLIR's polynomial approximations, made of arith ops that
    vectorize (a few ulp from the correctly rounded result), instead of one
    libm call per lane. Other element types are left to libm.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "The math functions to approximate (tanh, erf, exp, expm1, "
               "log, log1p, log2); all of them by default">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def DLOutlineParallel : Pass<"dl-outline-parallel", "::mlir::ModuleOp"> {
  let summary = "Outline outermost scf.parallel loops for dlc's thread pool";
  let description = [{
    Outlines the body of each outermost `scf.parallel` without reductions
    into a private function `@<f>_parallel_<k>(begin, end, captures...)`
    (attribute `dl.parallel_body`) that runs iterations [begin, end) of the
    first dimension (the other dimensions stay an `scf.parallel` inside),
    and replaces the loop by a call of a launch stub
    `@<f>_parallel_<k>_launch(lb, ub, step, threads, captures...)`
    (attribute `dl.parallel_launch`). `threads` is read at run time from
    the public global `@dlc_num_threads` (an i64 the caller may set; 0 or
    less means every core). Constants are cloned into the body, not
    captured. After the conversion to the llvm dialect,
    `dl-lower-parallel-launch` turns each stub call into a call of
    `dlc_parallel_for` in `libdlc_runtime` (a spinning fork/join pool).
    Upstream's `async-parallel-for` fixes its sharding at compile time, and
    its async runtime cost about 60 us per fork/join here: that is why this
    pass and the runtime are ours.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def DLLowerParallelLaunch
    : Pass<"dl-lower-parallel-launch", "::mlir::ModuleOp"> {
  let summary = "Lower dl-outline-parallel's launch stubs to dlc_parallel_for calls";
  let description = [{
    Runs on the llvm dialect. For each call of a `dl.parallel_launch` stub:
    stores the captured operands into a stack frame (one `llvm.alloca` in the
    caller's entry block), and calls
    `dlc_parallel_for(@<body>_entry, frame, lb, ub, step, threads)`; the
    trampoline `@<body>_entry(frame, begin, end)` loads them and calls the
    body. Refuses (error) a stub whose captures do not match its body's
    parameters, or whose body was not converted.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def DLLayout : Pass<"dl-layout", "::mlir::func::FuncOp"> {
  let summary = "Run convolutions and poolings in NHWC, converting only at the graph's edges";
  let description = [{
    Each NCHW `dl.conv2d`, `dl.max_pool2d` and `dl.avg_pool2d` runs in NHWC
    (dlc's fastest layout on CPUs) between marked `dl.transpose`
    conversions; the conversions then sink through elementwise ops (unary,
    and broadcasting binary ops, whose other operand is transposed back)
    and cancel pairwise, so that inside a network of convolutions the data
    stays in NHWC. A function where something was converted gets
    `dl.layout_conversions`, the number of activation conversions left;
    `report` emits it as a remark.

    An f32 NCHW convolution (groups = 1, static spatial sizes) whose filter
    is larger than `nchw-min-filter-bytes` stays in NCHW: its im2col GEMM
    reads the OIHW filter as it lies (packed by transposing squares in
    registers), where in NHWC each call would first rewrite the whole
    filter to HWIO (9.4 MB for 512x512x3x3: about 0.9 ms here, as long as
    the GEMM), and such layers' activations are small.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with the conversions left">,
    Option<"nchwMinFilterBytes", "nchw-min-filter-bytes", "int64_t",
           /*default=*/"0",
           "An f32 NCHW convolution whose filter has more bytes stays NCHW "
           "(0: half of this machine's L2, the direct convolution's limit; "
           "-1: none stays)">,
  ];
}

def DLGPUSharedMatmul : Pass<"dl-gpu-shared-matmul", "::mlir::func::FuncOp"> {
  let summary = "Matmuls on memrefs as GPU kernels with shared-memory tiles";
  let description = [{
    Replaces each `linalg.matmul` and `linalg.batch_matmul` on memrefs whose
    operands share one float element type (and whose indexing maps are the
    default ones) by a `gpu.launch` of tile x tile threads per block: each
    block stages a tile of A and of B in workgroup memory, synchronizes with
    `gpu.barrier`, and accumulates; each thread computes one element of C
    (C += A * B). Other matmuls are left to the parallel-loop path.
    Where the tile edge is a multiple of 4 and A and B have the identity
    layout, a flag computed on the host (K and N multiples of 4, A and B
    aligned to 4 elements) selects vectorized staging: the first T*T/4
    threads each copy 4 consecutive elements with one aligned vector load
    (16 bytes for f32: `ld.global.v4.f32`), element by element at the
    matrix's edges.
  }];
  let options = [
    Option<"tile", "tile", "int64_t", /*default=*/"16",
           "Tile edge: a block has tile x tile threads (1..32)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def DLCollapseBatchMatmul : Pass<"dl-collapse-batch-matmul", "::mlir::func::FuncOp"> {
  let summary = "Batched matmul contractions on memrefs as named matmuls over collapsed views";
  let description = [{
    A `linalg.generic` matmul (out += a * b, inputs possibly widened) with
    several batch dimensions shared by A, B and C becomes a
    `linalg.batch_matmul` over `memref.collapse_shape` views merging the
    batch dimensions; one whose B has no batch (`[b..., M, K] x [K, N]`)
    becomes a `linalg.matmul` with the batch merged into the rows of A and
    C. Only on float memrefs with the identity layout (contiguous batch
    dimensions) and the plain maps (batch..., m, k), (batch..., k, n),
    (batch..., m, n): broadcast batch dimensions, transposed operands and
    strided views are left alone. dl-gpu-pipeline runs it so that such
    products reach its matmul kernels.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def DLGPUMmaMatmul : Pass<"dl-gpu-mma-matmul", "::mlir::func::FuncOp"> {
  let summary = "f16/bf16 matmuls on memrefs as tensor-core (mma.sync) GPU kernels";
  let description = [{
    Replaces each `linalg.matmul` and `linalg.batch_matmul` on memrefs with
    f16 or bf16 A and B and an f32 C (default indexing maps) by a
    `gpu.launch` of 128 threads per block (4 warps) computing a 64 x 64
    tile of C: tiles of A (64 x 32) and B (32 x 64) are staged in workgroup
    memory between `gpu.barrier`s (by 16-byte vector loads where a flag
    computed on the host says K and N are multiples of 8 and A and B are
    16-byte aligned, else element by element), and each warp accumulates a
    32 x 32 tile in registers with `nvgpu.mma.sync` m16n8k16 (2 x 4 mma
    tiles per warp), then adds it to C inside its bounds. Fragments follow upstream's
    `nvgpu` layout of the PTX mma.m16n8k16 operands. Needs sm_80 or newer;
    dl-gpu-pipeline runs it where the chip has it. Other matmuls are left
    alone (`report`: a remark with the reason).
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark for each matmul left alone, with the reason">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def DLGPUBF16MmaToNVVM : Pass<"dl-gpu-bf16-mma-to-nvvm"> {
  let summary = "nvgpu.mma.sync on bf16 operands as nvvm.mma.sync";
  let description = [{
    Upstream's `convert-nvgpu-to-nvvm` has no PTX type for bf16 operands of
    `nvgpu.mma.sync`; this pass rewrites those (bf16 A and B, f32
    accumulator) into `nvvm.mma.sync` (`mma.sync.aligned.m16n8k16.row.col.
    f32.bf16.bf16.f32` in PTX, sm_80 and newer), each 32-bit register of the
    A and B fragments passed as an i32. Other mma ops are left to upstream.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def DLGPUDeviceMemory : Pass<"dl-gpu-device-memory", "::mlir::ModuleOp"> {
  let summary = "Host buffers of GPU kernels in memory the device can reach";
  let description = [{
    In the host functions: `memref.alloc` becomes `gpu.alloc host_shared`
    (CUDA managed memory, reachable from host and device), `memref.dealloc`
    becomes `gpu.dealloc`, and each `memref.get_global` is copied into a
    `gpu.alloc host_shared` buffer freed before the return. The caller passes
    arguments in device-reachable memory and frees returned buffers with
    cuMemFree. Refuses `memref.alloca` in host functions.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def DLGPUToCPU : Pass<"dl-gpu-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Run outlined GPU kernels on the CPU: loops over blocks and threads";
  let description = [{
    Rewrites each `gpu.launch_func` into an `scf.parallel` over the launch's
    blocks holding `scf.for` loops over its threads that execute the body of
    the kernel's `gpu.func`, then erases the `gpu.module`s. A `gpu.barrier`
    splits the thread loops (all threads finish before any goes on); values
    used across a barrier are kept per thread in buffers; workgroup memory
    becomes a per-block buffer; an `scf.for` holding a barrier runs once per
    block around its body's thread loops. A warp-wide `nvgpu.mma.sync`
    (m16n8k16, f16/bf16 inputs, f32 accumulator) runs like a barrier: every
    lane stores its fragments of A and B into its warp's matrices (the PTX
    fragment layout), then each computes its part of D = A * B + C.
    Refuses, with a diagnostic, what it cannot run: other gpu and nvgpu ops
    (shuffles, subgroup ops, ldmatrix, other mma shapes and types), barriers
    and mma ops in other ops than scf.for, mma ops in blocks of a size that
    is not a constant multiple of 32, thread-dependent bounds of a loop
    holding a barrier, private memory, async launches, clusters, dynamic
    shared memory, serialized kernels. Upstream lowers GPU kernels only for GPUs, hence this pass: it
    lets `make test` run the kernels of dl-gpu-pipeline on a CPU.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def DLLinalgFuse : Pass<"dl-linalg-fuse"> {
  let summary = "Fuse elementwise linalg producers where nothing is recomputed";
  let description = [{
    Upstream's elementwise fusion on tensors (producer into consumer, reshape
    folding by expansion, constant folding of linalg ops) with a stricter
    control: a producer is fused only into a consumer that reads each of its
    elements once (a permutation indexing map), and reshapes are folded only
    into consumers without reductions. Upstream fuses any single-use
    producer: an im2col gather into the GEMM that consumes it (undoing the
    im2col), an activation into a matmul operand (recomputed K*N times).
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def DLMemRefCopyToLinalg : Pass<"dl-memref-copy-to-linalg", "::mlir::func::FuncOp"> {
  let summary = "Turn copies between non-contiguous buffers into linalg.copy";
  let description = [{
    Bufferization copies padded inputs and inserted slices with memref.copy;
    between buffers that are not both contiguous the LLVM lowering calls the
    runtime's generic element-by-element `memrefCopy`. As linalg.copy the
    copy becomes an affine nest like any other (vectorized, parallelized).
    Copies between contiguous buffers are left to become memcpy.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def DLFoldBatchNorm : Pass<"dl-fold-batchnorm"> {
  let summary = "Fold inference batch norms into the conv2d or matmul before them";
  let description = [{
    `batch_norm(conv2d(x, w, b))` over the output channels becomes
    `conv2d(x, w * s, (b - mean) * s + beta)` with `s = gamma / sqrt(var +
    eps)`; a batch norm over the features of `x @ w (+ b)` becomes
    `x @ (w * s) + ((b - mean) * s + beta)`. The new weights are dl ops, which
    the folders turn into constants when the parameters are constants. A
    producer with other users, another axis, mixed element types or a bias
    that is not `[F]` leave the batch norm alone.
  }];
}

def DLPlanMemory : Pass<"dl-plan-memory", "::mlir::func::FuncOp"> {
  let summary = "Share memory between temporary buffers whose lifetimes do not overlap";
  let description = [{
    After bufferization: the statically shaped temporary buffers of the
    function's entry block (not returned, not passed to calls) are placed in
    one 64-byte aligned arena by first fit, largest first; buffers live at
    the same time never share. Each alloc becomes a memref.view of the arena.
    The function gets `dl.memory_plan = {buffers, peak_bytes,
    unplanned_peak_bytes}`; `report` also emits them as a remark.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with the planned and unplanned peak bytes">,
    Option<"apply", "apply", "bool", /*default=*/"true",
           "Rewrite the buffers into the arena (false: only analyze and "
           "record dl.memory_plan, with peak_bytes = unplanned_peak_bytes)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def DLSelectStrategies : Pass<"dl-select-strategies"> {
  let summary = "Choose and record the code-generation strategy of each dl op";
  let description = [{
    Annotates matmuls (`register-tiled-gemm` or `loops`), convolutions
    (`im2col-gemm` or `direct`) and reductions (`vectorized-reduction`) with a
    `dl.strategy` attribute, which convert-dl-to-linalg follows. An op that
    already has one keeps it, so a strategy can be forced in the IR.
  }];
  let options = [
    Option<"maxDirectFilterBytes", "max-direct-filter-bytes", "int64_t",
           /*default=*/"0",
           "Largest filter (bytes) for which an NHWC f32 convolution runs as a "
           "register-tiled direct convolution rather than im2col + GEMM (0: "
           "half of this machine's L2; -1: never, and f16/bf16 convolutions "
           "are im2col + GEMM too)">,
  ];
}

def DLExplain : Pass<"dl-explain"> {
  let summary = "Report the strategy chosen for each dl op";
  let description = [{
    Chooses strategies as dl-select-strategies does (recording them) and
    emits one remark per op naming its strategy and the reason:
    `dl-opt --dl-explain model.mlir`.
  }];
  let options = [
    Option<"maxDirectFilterBytes", "max-direct-filter-bytes", "int64_t",
           /*default=*/"0", "As in dl-select-strategies">,
  ];
}

def DLAffineTile : Pass<"dl-affine-tile", "::mlir::func::FuncOp"> {
  let summary = "Two-level cache tiling of affine loop bands, sized by a cache model";
  let description = [{
    Tiles each perfect band of affine loops with constant bounds twice: L2
    tiles, and L1 tiles inside them, each the largest power-of-two size whose
    data footprint (per memref, the span of the tile's loops in each
    dimension) fits half of that cache level. Cache sizes are read from the
    machine unless given. Only fully permutable bands are tiled (every
    dependence component non-negative on every band loop); bands whose data fit in L1, bands
    with carried values, non-constant bounds or non-affine memory accesses
    are left alone. With `only-strided` (what dl-cpu-pipeline uses) only
    bands whose innermost loop strides some access by a cache line or more
    are tiled: transposes and other permuting copies. `tile-size` fixes the
    size of both levels instead. With `explain`, a remark per band says
    what was done or why not.
  }];
  let options = [
    Option<"l1Bytes", "l1-bytes", "int64_t", /*default=*/"0",
           "L1 data cache size in bytes (0: read from this machine)">,
    Option<"l2Bytes", "l2-bytes", "int64_t", /*default=*/"0",
           "L2 cache size in bytes (0: read from this machine)">,
    Option<"tileSize", "tile-size", "int64_t", /*default=*/"0",
           "Fixed tile size for every loop (0: from the cache model)">,
    Option<"onlyStrided", "only-strided", "bool", /*default=*/"false",
           "Tile only bands with an access strided along the innermost loop">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per band">,
  ];
}

#endif // DL_PASSES_TD
