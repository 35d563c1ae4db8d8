//===- Passes.td - CPU code generation ---------------------*- tablegen -*-===//
//
// Registration and constructors are generated from this file
// (`-gen-pass-decls`).
//
//===----------------------------------------------------------------------===//

#ifndef DL_CODEGEN_CPU_PASSES_TD
#define DL_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def DLFuseAttention : Pass<"dl-fuse-attention", "::mlir::func::FuncOp"> {
  let summary = "Attention by blocks of query rows: scores, softmax and the weighted sum in one tile loop";
  let description = [{
    On linalg on tensors. A contraction of static shape (batch dims, one
    row dim M, one reduction) whose right operand is not a constant and
    whose left operand is computed, through linalg ops of which one reduces
    (the softmax's maximum and sum), from another contraction of two
    non-constant operands (attention: `softmax(Q K^T) V`, with any scaling,
    mask or cast in between) is tiled by 1 along its batch dims and by a
    block of rows along M into an `scf.forall` (the whole blocks and the
    rest as two loops, so every tile has a static shape), and its producers
    are fused into the tile (upstream's tile-and-fuse) where each tile
    computes its own part of them: a producer whose slice does not move with
    every tile loop (the transposed K all row blocks read) is left outside,
    computed once. The block's scores, softmax and product stay in L2
    instead of passes over the whole [heads, S, S] scores, and the chain is
    one parallel region. Block rows: a multiple of the register tile's rows
    (`#dl.target`), as many as keep three [rows, K] blocks within half of
    L2, halved while there would be under two blocks per thread; `rows`
    fixes it. Two GEMMs of weights (an MLP) and dynamic shapes are left
    alone. Upstream has the tile-and-fuse but no pass that chooses
    attention's tiles: this pass is ours.
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"0",
           "Query rows per block (0: from the target's L2 and register tile)">,
    Option<"maxChain", "max-chain", "int", /*default=*/"8",
           "The most linalg ops between the two contractions">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for each tiled contraction: rows, producers fused">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def DLLinalgToAffineLoops : Pass<"dl-linalg-to-affine-loops", "::mlir::func::FuncOp"> {
  let summary = "linalg ops on buffers to affine loop nests, keeping their strategy";
  let description = [{
    Upstream's `convert-linalg-to-affine-loops` (each linalg op becomes a
    perfect affine loop nest, in the order of its iterators), except that
    the `dl.strategy` an op carries (`#dl.strategy`, from
    `dl-select-strategies`) moves to the outermost loop of its nest, where
    `dl-affine-interchange` keeps it and `dl-affine-register-tile` reads it.
    Upstream's drops every attribute of the ops it lowers. Then (unless
    `fold-subviews=false`) scalar affine loads and stores through a
    `memref.subview` of static strides, same rank, of an identity-layout
    source, whose offsets are constants (or, for loads, valid affine dims at
    the access: a tile loop's induction variable), access that source at `offset +
    stride * i`: the copies of concatenations, slices and pads, and the
    packing copies inside dl-fuse-attention's tiles, vectorize.
  }];
  let options = [
    Option<"foldSubviews", "fold-subviews", "bool", /*default=*/"true",
           "Move accesses through subviews of static strides to the subviews' sources">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
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
  let dependentDialects = ["::mlir::dl::DLDialect"];
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
    to the remainder. Where the output was filled with a constant just before
    the nest (linalg.fill's nest, nothing between them using it) and the
    reduction is not blocked, the tiles start from that constant in
    registers instead of loading it, and the fill is deleted when nothing
    reads it any more (no remainder nest; the tiles store every element, or
    an epilogue took the result and the output has no other user).

    Requirements, else the nest is left alone: the output is written by one
    affine.store and read by one affine.load at the same address; its indices
    are loop variables; the innermost loop indexes the output's last
    dimension and has a static trip count of at least one vector; every input
    is either invariant in or contiguous along that loop; the body is
    otherwise elementwise arithmetic; no other memory effect; the output is a
    memref.alloc (or a view of one); there is at least one reduction loop.

    Every hardware fact comes from the target (`#dl.target`): the vector
    width, the tile shape (`rows` x `vectors`, from the register count and
    the FMA pipes by the model of lib/Target/MicroKernel.cpp, unless the
    options fix it), the cache blocks (L1 and L2 sizes) and the column blocks
    per thread.

    Prefetch (`prefetch`, on by default): an input the tiles broadcast that
    is read along the innermost reduction loop in runs of at most two cache
    lines, with gaps the next reduction loop out leaves between them (a
    grouped NHWC convolution: one group's channels at every pixel), is
    prefetched one iteration ahead of the innermost outer loop it depends on
    (the next output row), for each row of the tile, at every iteration of
    the reduction loops around the run (`affine.prefetch` in an `affine.if`
    that leaves out the last iteration).

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
    Option<"rows", "rows", "int64_t", /*default=*/"0",
           "Output rows per micro-kernel (unrolled; 0: from the target)">,
    Option<"vectors", "vectors", "int64_t", /*default=*/"0",
           "Vectors per output row in the micro-kernel (0: from the target)">,
    Option<"columnBlock", "column-block", "int64_t", /*default=*/"0",
           "Output columns per cache block, a multiple of the tile width "
           "(0: from the cache model)">,
    Option<"reductionBlock", "reduction-block", "int64_t", /*default=*/"0",
           "Iterations of the outermost reduction loop per cache block (0: "
           "from the cache model, and only where the shared panel of the "
           "input exceeds a quarter of L2)">,
    Option<"pack", "pack", "bool", /*default=*/"true",
           "Copy each cache block of the input indexed by (reduction, column) "
           "into a contiguous buffer">,
    Option<"epilogue", "epilogue", "bool", /*default=*/"true",
           "Fuse the elementwise nest that follows the accumulation (bias, "
           "activation, residual add) into the tiles">,
    Option<"prefetch", "prefetch", "bool", /*default=*/"true",
           "Prefetch, one iteration of an outer loop ahead, an input the "
           "tiles read in runs of at most two cache lines with gaps between "
           "them (a grouped NHWC convolution's input)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark for each elementwise nest after an accumulation "
           "that is not fused, with the reason">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def DLAffineTile : Pass<"dl-affine-tile", "::mlir::func::FuncOp"> {
  let summary = "Two-level cache tiling of affine loop bands, sized by a cache model";
  let description = [{
    Tiles each perfect band of affine loops with constant bounds twice: L2
    tiles, and L1 tiles inside them, each the largest power-of-two size whose
    data footprint (per memref, the span of the tile's loops in each
    dimension) fits half of that cache level. Cache sizes and the line size
    are the target's (`#dl.target`). Only fully permutable bands are tiled (every
    dependence component non-negative on every band loop); bands whose data fit in L1, bands
    with carried values, non-constant bounds or non-affine memory accesses
    are left alone. On more than one thread (`#dl.target`'s `threads`) the
    outermost loop cut into several tiles, the one dl-affine-parallelize
    runs on the threads, has its tile shrunk (by at most half) to the size
    that splits it most evenly over them, unless the band is inside a
    parallel loop already. With `only-strided` (what dl-cpu-pipeline uses) only
    bands whose innermost loop strides some access by a cache line or more
    are tiled: transposes and other permuting copies. `tile-size` fixes the
    size of both levels instead. With `explain`, a remark per band says
    what was done or why not.
  }];
  let options = [
    Option<"tileSize", "tile-size", "int64_t", /*default=*/"0",
           "Fixed tile size for every loop (0: from the cache model)">,
    Option<"onlyStrided", "only-strided", "bool", /*default=*/"false",
           "Tile only bands with an access strided along the innermost loop">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per band">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect"];
}

def DLAffineTransposeSquares
    : Pass<"dl-affine-transpose-squares", "::mlir::func::FuncOp"> {
  let summary = "Copy transposes by vector squares transposed in registers";
  let description = [{
    A perfect affine nest that loads one element and stores it, both indexed
    by a permutation of the loops (a lowered linalg.transpose), whose input
    and output are contiguous along different loops `a` and `b`, is rewritten
    to copy `lanes` x `lanes` squares: `lanes` vector loads along `a`, a
    `vector.transpose`, `lanes` vector stores along `b`; the edges that do not
    fill a square are copied by scalar loops. `lanes` is the target's vector
    width in elements, halved while it exceeds a trip count; nests where it
    would be under 4 are left alone, as are nests with dynamic bounds or
    memrefs not contiguous along their last dimension. The rewritten nest's
    outermost loop gets `dl.transpose_squares` (dl-affine-interchange and
    dl-affine-tile leave it alone).
  }];
  let dependentDialects = ["::mlir::dl::DLDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def DLAffineCollapse : Pass<"dl-affine-collapse", "::mlir::func::FuncOp"> {
  let summary = "Merge the loops of a nest that walks contiguous memory into one";
  let description = [{
    In a perfect nest of `affine.for` loops whose bodies only load, store
    (scalar affine accesses) and compute, a loop and the one around it
    (both from 0, step 1, constant bounds, no `iter_args`) are merged into
    one loop over the product of their trip counts wherever every access
    under them is either independent of both or indexed by exactly the
    outer loop and the inner loop in two adjacent dimensions of a memref
    contiguous across them whose inner dimension the inner loop covers (a
    fill, a copy, an elementwise op or a broadcast of contiguous buffers).
    Those accesses read and write a `memref.collapse_shape` of their memref;
    the order of the iterations is the same, so any nest may be merged.
    Pairs are tried from the innermost outwards (a per-channel scale of an
    image merges its rows and columns, not its channels):
    `[4, 12, 49, 49]` filled becomes one loop of 115248 elements,
    which vectorizes with one remainder of 4 instead of one per row of 49,
    and which LLVM does not unroll into a block of thousands of stores (its
    instruction schedulers took 4 s of Swin-T's compile on one such fill).
    Nests with other uses of their loops' indices (`linalg.index`, a
    nested loop's bound), regions other than loops, vector accesses, or an
    access to a memref both indexed and not are left alone.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect"];
}

def DLAffinePromoteAccumulators
    : Pass<"dl-affine-promote-accumulators", "::mlir::func::FuncOp"> {
  let summary = "Carry loop-invariant accumulators in iter_args";
  let description = [{
    A loop whose body loads and stores one element at an address defined
    outside the loop (the accumulator of a reduction, as
    `convert-linalg-to-affine-loops` leaves it in the output buffer) carries
    that element in `iter_args` instead: one load before the loop, one store
    after it. Loops are processed innermost first, so an accumulator moves
    out of every loop of the reduction it can. Done only when nothing else
    in the loop may access that memory (memory-plan views of one arena are
    told apart by their byte ranges; function arguments may alias each
    other; an op with unknown effects forbids it). `dl-affine-vectorize`
    then vectorizes such reductions; the others at least keep their
    accumulators in registers.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect"];
}

def DLAffineUnrollReductions
    : Pass<"dl-affine-unroll-reductions", "::mlir::func::FuncOp"> {
  let summary = "Fully unroll short reductions: scalar accumulators, register tiles";
  let description = [{
    An innermost `affine.for` with constant bounds and at most
    `max-trip-count` iterations that loads and stores one element at an
    address independent of the loop (an accumulator: an argmax over a
    pooling window) is fully unrolled, so that `affine-scalrep` after it
    keeps the accumulators in registers: LLVM cannot, not knowing that the
    output does not alias the input. An innermost `affine.for` of at most
    `max-trip-count` iterations that carries vector accumulators in
    `iter_args` (a register tile's window loop) is fully unrolled too, if
    the unrolled body has at most `max-unrolled-ops` operations: its
    iterations' loads of one input column become one. Other loops are left
    alone.
  }];
  let options = [
    Option<"maxTripCount", "max-trip-count", "int64_t", /*default=*/"8",
           "Unroll reduction loops of at most this many iterations">,
    Option<"maxUnrolledOps", "max-unrolled-ops", "int64_t", /*default=*/"512",
           "Unroll a register tile's reduction loop only if its unrolled "
           "body has at most this many operations">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect"];
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

    The number of lanes is the target's (`#dl.target`): for each loop, the
    elements of its widest element type in one vector register (16 f32 with
    AVX-512, 8 with AVX2, 4 with NEON), halved until they divide a static
    trip count (at least 2), unless `vector-width` fixes it.
  }];
  let options = [
    Option<"vectorWidth", "vector-width", "int64_t", /*default=*/"0",
           "Lanes of every vector (0: per loop, from the target: the most "
           "elements of the loop's widest type one vector register holds, "
           "halved until they divide the loop's trip count)">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect",
                           "::mlir::vector::VectorDialect"];
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
    the analysis cannot rule out. A chosen loop whose iterations split over
    the target's threads (`#dl.target`) with a loss over a sixteenth is
    coalesced with the one loop its body holds, if that loop has constant
    bounds and the coalesced loop is parallel. `dl-outline-parallel` then
    runs the `scf.parallel` this lowers to on dlc's thread pool.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"8192",
           "Least estimated number of operations a loop must run to be "
           "worth running on several threads (a fork/join on dlc's "
           "thread pool costs a few us; below some 2^13 vector operations "
           "the work saved is less)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for each nest: the loop chosen, or why none was">,
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::dl::DLDialect"];
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
    captured; the address of a global (`memref.get_global`, and views of
    it) is captured. A body equivalent to one the pass outlined before
    (`OperationEquivalence`, locations ignored) is not kept: its loop calls
    the earlier launch stub, so the loops of identical layers, which differ
    in their weights only, are compiled once (`merge=false`: every body
    kept). After the conversion to the llvm dialect,
    `dl-lower-parallel-launch` turns each stub call into a call of
    `dlc_parallel_for` in `libdlc_runtime` (a spinning fork/join pool).
    Upstream's `async-parallel-for` fixes its sharding at compile time, and
    its async runtime cost about 60 us per fork/join here: that is why this
    pass and the runtime are ours.
  }];
  let options = [
    Option<"merge", "merge", "bool", /*default=*/"true",
           "Outline a body equivalent to an earlier one once">,
  ];
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

    For dlc's profiler it also emits `@dlc_parallel_regions`, an array of
    (trampoline, name) pointer pairs, and `@dlc_parallel_region_count`, the
    number of pairs; a name is `"<body> <file>:<line>"`, the source line of
    the parallel loop (the first one where equivalent loops share a body).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def DLOutlineLoops : Pass<"dl-outline-loops", "::mlir::ModuleOp"> {
  let summary = "Compile repeated loop nests once: one function for equivalent nests";
  let description = [{
    Runs on structured control flow (scf, memref, vector; after
    `dl-outline-parallel`, before `dl-split-function`). Each top-level
    `scf.for` or `scf.parallel` of a function with at least `min-ops`
    operations (nested ones counted) that is equivalent to another such
    nest (`OperationEquivalence`, locations ignored, once the values it
    uses from outside are arguments) becomes a call of one private function
    `@<f>_loop_<k>` (attributes `dl.outlined_loop` and
    `passthrough = ["noinline"]`) taking those values and returning the
    nest's results; every equivalent nest calls the same function with its
    own memory. Constants (and side-effect-free ops of constants) are
    recomputed in the function; the addresses of globals (weights) and views
    of them are passed, so that the same kernel of different layers, which
    differ in their weights and buffers only, is one function. A nest that
    occurs once is left where it is, and so is one with a memref result
    (it may be the nest's stack memory).

    Why: the layers of a transformer (BERT's 12, a ViT's 12) are the same
    code with other weights; LLVM's time grows with the code it is given,
    and with this pass (and the same rule in `dl-outline-parallel`) it
    compiles each kernel once. Upstream has no pass that merges equivalent
    code in MLIR (LLVM's MergeFunctions merges whole functions, once the
    time has been spent); this one is ours.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", /*default=*/"8",
           "Least operations (nested ones counted) of a nest worth a call">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def DLSplitFunction : Pass<"dl-split-function", "::mlir::ModuleOp"> {
  let summary = "Cut functions with many ops into a sequence of calls of smaller ones";
  let description = [{
    Runs on structured control flow (scf, memref, vector; before
    `convert-scf-to-cf`). A function whose single block holds more than
    `max-ops` operations (nested ones counted) is cut between top-level ops
    into consecutive parts of about `max-ops` each; each part becomes a
    private function `@<f>_part_<k>` (attributes `dl.split_part` and
    `passthrough = ["noinline"]`, which the conversion to llvm carries to the
    `llvm.func`: LLVM's inliner would merge the parts back)
    taking the values it uses from before and returning the values used
    after it, and the function calls the parts in order. Constants (and
    side-effect-free ops of constants) are recomputed in a part rather than
    passed. No cut is made across a value that lives in the caller's stack
    frame (`memref.alloca` and views of it).

    Why: LLVM's loop passes (IndVarSimplify, LoopRotate, LoopUnroll,
    LoopVectorize, SimpleLoopUnswitch) cost time quadratic in the size of
    the function holding the loops: one function with 800 unfused loop
    nests took 4.9 s in `opt -O3` (200 nests: 0.5 s), and a whole
    EfficientNet-B0 in one function 16 s. Functions of bounded size make
    LLVM's time linear in the program. Upstream has no such pass (its
    outlining utilities outline one region or loop, not a block's op
    ranges); this one is ours.

    With `early`, it runs on linalg on memrefs (the pipeline runs it after
    memory planning, before the affine stage), so that the affine and
    vector passes, which run one function at a time, run on the MLIR
    context's threads rather than on one function on one thread. The
    contract changes where the affine passes would otherwise see less:
    allocations of static size, and the side-effect-free ops of them, of
    the function's arguments and of constants (views: the arena's slots),
    stay in the caller, moved before the call of the part they were in;
    each part takes the allocations as arguments marked `dl.fresh_buffer`
    (a buffer of its own: what those passes ask of a `memref.alloc`) and
    recomputes the views, so that the slots' byte ranges stay visible; no
    cut is made across an allocation of dynamic size, nor between an
    accumulation (a linalg op with reduction loops) and the last op before
    it and the first op after it that touch its output (its fill and its
    epilogue: dl-affine-register-tile matches them in one block). A later
    run without `early` cuts the parts again where lowering grew them.
  }];
  let options = [
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"1000",
           "Operations (nested ones counted) above which a function is cut, "
           "and about the size of each part (0: never cut)">,
    Option<"early", "early", "bool", /*default=*/"false",
           "Cut linalg on memrefs, before the affine stage (see above)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def DLMathApproximation : Pass<"dl-math-approximation"> {
  let summary = "Polynomial approximations of f32 tanh, erf, exp, log and kin";
  let description = [{
    Rewrites f32 `math` ops named in `functions` (scalars and vectors) into
    polynomial approximations made of arith ops that vectorize (a few ulp
    from the correctly rounded result), instead of one libm call per lane:
    upstream MLIR's, but for erf, which is one rational function of ours
    (no per-lane coefficient selects: cheap in a GEMM's GELU epilogue).
    Other element types are left to libm.
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

def DLIntegerMatmul : Pass<"dl-integer-matmul", "::mlir::ModuleOp"> {
  let summary = "8-bit integer matmuls as dot-product micro-kernels (VNNI, vpmaddwd)";
  let description = [{
    Rewrites each integer matmul on memrefs (the `linalg.generic` that
    `convert-dl-to-linalg` writes for `dl.matmul_integer`: 8-bit operands
    extended to i32, multiplied and summed into an i32 output, batch
    dimensions allowed) into a register-tiled micro-kernel of the target's
    integer dot product (`#dl.target`): `vpdpbusd` (four u8 x s8 products
    per i32 lane) on 512-bit vectors with `avx512vnni`, on 256-bit vectors
    with `avxvnni` or `avx512vnni` + `avx512vl`, where the right operand is
    signed; else `vpmaddwd` (two i16 x i16 products per lane, both operands
    widened by their sign: exact) with `avx512bw` on 512 bits or `avx2` on
    256. A signed left operand of vpdpbusd is read shifted by 128 (xor 0x80)
    and 128 x the column sums of the right operand are subtracted, so
    results are exact. The right operand is packed into panels of
    [K/g][lanes][g] (at compile time into a new `memref.global` when it is a
    constant global, with its column sums; else once per call); the kernel
    keeps rows x vectors accumulators (`chooseRegisterTile`) in registers
    across the whole reduction, adds the output's previous contents and
    stores with masks at the right edge. The outer loop over column groups
    (or over row tiles when there are few groups) is an `scf.parallel`
    when the product is large enough. Targets with neither instruction, or
    an operand whose last dimension is strided, keep the generic (exact,
    vectorized by the affine passes). With `epilogue`, the all-parallel
    `linalg.generic` that alone reads a 2-D product's zero-filled output
    after it (directly or through an expand_shape of its rows: the
    requantization of a quantized convolution or matmul) is computed on
    each tile in registers and stored to its own output; the sums never go
    through memory. Refused: a body with other than scalar arith/math ops
    or reading its own output, an input read across the columns, and any
    write between the product and the consumer that may overlap what the
    consumer reads or writes (fills of a padded buffer's border are apart
    from its interior), or a consumer output that may overlap the product's
    operands. No upstream pass lowers `linalg`
    integer matmuls to these (x86vector has the bf16 and AVX-VNNI-INT8
    `vpdpbssd` dot products only): this pass is ours.
  }];
  let options = [
    Option<"parallel", "parallel", "bool", /*default=*/"true",
           "Emit the outer loop as an scf.parallel where the work is large">,
    Option<"minParallelWork", "min-parallel-work", "int64_t",
           /*default=*/"1 << 18",
           "Multiply-adds (M x N x K, 64 rows assumed for a dynamic M) from "
           "which the outer loop runs on several threads">,
    Option<"epilogue", "epilogue", "bool", /*default=*/"true",
           "Compute the elementwise nest that reads the sums (the "
           "requantization) on the tiles in registers, where legal">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def DLLowerVectorTranspose : Pass<"dl-lower-vector-transpose"> {
  let summary = "vector.transpose as the shuffles the target does best";
  let description = [{
    Lowers every `vector.transpose` (the packing of a transposed GEMM input
    transposes lanes x lanes squares in registers) with upstream's patterns,
    choosing the lowering from the target (`#dl.target`): with AVX-512, 16x16
    f32 squares as the AVX-512 shuffle sequence (`shuffle_16x16`); elsewhere
    as 1-D shuffles that LLVM's back end selects for the ISA. Runs before
    `convert-vector-to-llvm`, which would otherwise pick one lowering for
    every target.
  }];
  let dependentDialects = ["::mlir::dl::DLDialect",
                           "::mlir::vector::VectorDialect"];
}

def DLLLVMTargetAttributes : Pass<"dl-llvm-target-attributes", "::mlir::ModuleOp"> {
  let summary = "Give the llvm dialect the target's triple, CPU and features";
  let description = [{
    Runs on the llvm dialect, last: every `llvm.func` with a body gets the
    target's CPU (`target_cpu`) and feature changes (`target_features`), and
    the module its triple (`llvm.target_triple`), all from `#dl.target`. LLVM
    compiles each function for that CPU and those features, whatever the
    machine that runs the JIT (or `llc`): the machine code and the IR's
    decisions (vector width, register tiles) describe the same CPU.
  }];
  let dependentDialects = ["::mlir::dl::DLDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // DL_CODEGEN_CPU_PASSES_TD
