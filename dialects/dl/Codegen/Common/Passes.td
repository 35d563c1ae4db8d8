//===- Passes.td - linalg level, CPU and GPU ---------------*- tablegen -*-===//
//
// Registration and constructors are generated from this file
// (`-gen-pass-decls`).
//
//===----------------------------------------------------------------------===//

#ifndef DL_CODEGEN_COMMON_PASSES_TD
#define DL_CODEGEN_COMMON_PASSES_TD

include "mlir/Pass/PassBase.td"

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

    A fusion clones both bodies into a new op, so fusing a chain of n
    elementwise ops one by one copies O(n^2) operations (a 3,000-op chain took
    48 s). `max-fused-ops` bounds the body of a fused op: past it the chain
    is cut into ops of about that many operations each, whose extra pass over
    memory is small next to that much arithmetic per element.
  }];
  let options = [
    Option<"maxFusedOps", "max-fused-ops", "unsigned", /*default=*/"256",
           "the most operations in the body of a fused op (0: no bound)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
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

def DLDonateDestinations : Pass<"dl-donate-destinations", "::mlir::func::FuncOp"> {
  let summary = "Compute donated results in their arguments' tensors";
  let description = [{
    For a function with `dl.donate` (per result: the argument it is returned
    in, or -1; set by dlc.jit's donate_argnums): the destination-style op
    computing a donated result, when its destination is a `tensor.empty` it
    does not read, gets the argument as destination; donated arguments are
    marked `bufferization.writable` and the others not, so one-shot
    bufferization writes the result into the argument's buffer where no
    later read of the old value conflicts (and copies otherwise). Runs
    before one-shot bufferization; `dl-return-donated` finishes after it.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def DLReturnDonated : Pass<"dl-return-donated", "::mlir::func::FuncOp"> {
  let summary = "Return donated results in their arguments' buffers";
  let description = [{
    After one-shot bufferization, for a function with `dl.donate`: a donated
    result already in its argument's buffer is dropped from the results; any
    other is copied into the argument at the return and dropped (every
    returned buffer viewing an argument written there is first copied, so
    no write-back changes another result). The caller finds those results
    in the arguments it passed. Refuses functions of several blocks and
    `dl.donate` maps that do not fit the signature.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def DLScheduleEpilogues : Pass<"dl-schedule-epilogues", "::mlir::func::FuncOp"> {
  let summary = "Move the elementwise consumer of each accumulation right after it, before bufferization";
  let description = [{
    On linalg on tensors: the all-parallel `linalg.generic` that is the only
    user of an accumulation's result (a matmul or convolution: a linalg op
    with reduction loops; directly or through one `tensor.expand_shape` or
    `tensor.collapse_shape`) moves up to just after it, with the pure ops
    between that it depends on (the zero point's corrections of a dynamic
    quantization, its empty destination). The register-tile epilogues
    (dl-affine-register-tile, dl-integer-matmul) compute such a consumer on
    the product's tiles only when nothing between them touches its memory;
    in program order [Q, K, V products, then their consumers] the memory
    plan gave Q's consumer the bytes of the shared input, still read by the
    K and V products, and K's consumer the bytes of Q's sums: none fused.
    Scheduled [Q, its consumer, K, ...], each consumer's output is
    allocated while the products after it still hold their inputs.

    Refused (left in place): a result with other users, a consumer in
    another block, an op between it depends on that has memory effects.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def DLUnshareFills : Pass<"dl-unshare-fills", "::mlir::func::FuncOp"> {
  let summary = "Give each destination its own fill or empty tensor, and pads a destination producers can write into";
  let description = [{
    Prepares tensors for one-shot bufferization so that it copies less:
    - A `linalg.fill` on tensors with several uses (CSE merges the zero
      initializations of every matmul and convolution of one shape) is
      cloned for each use after the first: where two accumulations shared
      one filled tensor, bufferization filled one buffer and copied it to
      the other (a full memcpy of the output on the calling thread). The
      first use in program order keeps the original; each clone, with a
      clone of the empty tensor it fills, goes just before its use, where
      its buffer is then allocated.
    - A `tensor.empty` used as the destination of several ops (CSE merges
      the empty results of every op of one shape) is cloned the same way:
      one-shot bufferization's conflict analysis compares every pair of
      writes into one alias set, so a shared empty made it quadratic in
      the number of ops (a chain of 400 unfused elementwise ops: 7 s).
    - A `tensor.pad` with a constant value becomes insert_slice of the
      source into an empty tensor, then a fill of each border slab (ours,
      for static sizes: upstream's DecomposePadOpPattern, used for the
      others, fills the whole padded tensor before the source is written
      over its interior: at batch 8, ~90 MB of fill per MobileNetV3 call).
      `eliminate-empty-tensors` then turns the insert into the producer
      writing straight into the interior of the padded buffer, instead of
      a copy of its result.
  }];
  let dependentDialects = [
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
    Copies between contiguous buffers are left to become memcpy, unless
    `all` is set (the GPU pipeline: every copy must be a kernel, since the
    host must not touch device buffers).
  }];
  let options = [
    Option<"all", "all", "bool", /*default=*/"false",
           "Every memref.copy, contiguous ones too">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def DLPlanMemory : Pass<"dl-plan-memory", "::mlir::func::FuncOp"> {
  let summary = "Share memory between temporary buffers whose lifetimes do not overlap";
  let description = [{
    After bufferization: the statically shaped temporary buffers of the
    function's entry block (not returned, not passed to calls) are placed in
    one 64-byte aligned arena by first fit, largest first, improved by a
    local search (`search-tries` random swaps in that order, kept when the
    arena does not grow; fixed seed); buffers live at the same time never
    share. Each alloc becomes a memref.view of the arena.
    The function gets `dl.memory_plan = {buffers, peak_bytes,
    unplanned_peak_bytes}`; `report` also emits them as a remark, and a
    remark at the point where the most bytes are live at once (no plan can
    be smaller) with a note per buffer live there: its size and lifetime.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with the planned and unplanned peak bytes">,
    Option<"searchTries", "search-tries", "int64_t", /*default=*/"200",
           "Orders of the buffers tried after largest-first (local search: "
           "random swaps kept when the arena does not grow)">,
    Option<"apply", "apply", "bool", /*default=*/"true",
           "Rewrite the buffers into the arena (false: only analyze and "
           "record dl.memory_plan, with peak_bytes = unplanned_peak_bytes)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

#endif // DL_CODEGEN_COMMON_PASSES_TD
