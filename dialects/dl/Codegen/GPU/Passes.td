//===- Passes.td - GPU code generation ---------------------*- tablegen -*-===//
//
// Registration and constructors are generated from this file
// (`-gen-pass-decls`).
//
//===----------------------------------------------------------------------===//

#ifndef DL_CODEGEN_GPU_PASSES_TD
#define DL_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    matrix's edges. Float32 matmuls with M and N of at least 64 (or
    dynamic) get the register-tiled kernel instead: 256 threads per 128 x
    128 tile of C, 8 x 8 elements per thread held in registers (16
    `vector<4xf32>` accumulators), A's tile staged transposed, 8 deep;
    `tile` does not apply to it. Its K is split (slices of at least 256)
    where C's tiles make fewer than `min-blocks` blocks: the slices' partial
    products go to a workspace, which a second kernel adds into C in order.
  }];
  let options = [
    Option<"tile", "tile", "int64_t", /*default=*/"16",
           "Tile edge: a block has tile x tile threads (1..32)">,
    Option<"registerTiles", "register-tiles", "bool", /*default=*/"true",
           "Large float32 matmuls as the register-tiled kernel">,
    Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"264",
           "Blocks the register-tiled kernel splits K for, where C has fewer "
           "tiles (264: two per multiprocessor of a 132-SM H100)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
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
  let summary = "Host buffers of GPU kernels in device memory";
  let description = [{
    In the host functions: `memref.alloc` becomes `gpu.alloc` (device
    memory, not managed), `memref.dealloc` becomes `gpu.dealloc`, both
    synchronous ops for `gpu-async-region` to chain on the kernels' stream
    (it must run before `gpu-to-llvm`, which lowers only asynchronous ones:
    `dl-gpu-pipeline` runs it next). A `memref.get_global` of a constant becomes its device
    copy, uploaded by the loaded module's first call and kept
    (`dlc_cuda_resident` of dlc's CUDA shim, the address in an
    `llvm.mlir.global` of the host module, the descriptor built in the LLVM
    dialect and cast to the memref type); other globals, and constants the
    function returns, are copied (a synchronous `gpu.memcpy`) into a
    `gpu.alloc` buffer freed before the return. The caller passes arguments
    in device memory, copies results back and frees them. Refuses
    `memref.alloca` in host functions.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def DLGPUScalarKernels : Pass<"dl-gpu-scalar-kernels", "::mlir::func::FuncOp"> {
  let summary = "Put linalg ops without parallel loops in a one-iteration scf.parallel";
  let description = [{
    A linalg op on rank-0 buffers, or one reducing over all of its
    dimensions (the sum of a whole tensor), has no parallel loop to map to
    threads; in a one-iteration `scf.parallel` it becomes a kernel of one
    thread, so that the host never computes on device buffers. (Copies become kernels
    through `dl-memref-copy-to-linalg{all=true}`.)
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect"];
}

def DLGPUParallelOuter : Pass<"dl-gpu-parallel-outer", "::mlir::func::FuncOp"> {
  let summary = "Put the parallel loops of linalg ops outside their reductions";
  let description = [{
    Interchanges the loops of every linalg op (not inside an `scf.parallel`)
    with a parallel loop below a reduction loop, so that the parallel loops
    come first, each group in its order; named ops with such an order are
    generalized first. `convert-linalg-to-parallel-loops` maps only the
    parallel loops above the first reduction; the others would run
    sequentially in every thread (a channels-last average pool, `(n, h, w,
    c)` reducing `h` and `w`, ran one thread per image).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def DLGPURowReductions : Pass<"dl-gpu-row-reductions", "::mlir::func::FuncOp"> {
  let summary = "Reductions along the contiguous dimension as one block per output element";
  let description = [{
    Replaces each linalg op on memrefs (outside any `scf.parallel`) whose
    loops are its parallel ones then its reductions, with one input read
    along the reductions (not a contraction), whose innermost loop is
    that input's last index, whose reduced extent is at least 32 (or
    dynamic), and whose every yielded value is `out (+) x` ((+) one of
    `addf`, `maximumf`, `maxnumf`, `minimumf`, `minnumf`; `x` free of the
    outputs and of side effects) by a `gpu.launch` of one block per output
    element: its threads (32 to 256, the power of two covering the reduced
    extent) stride along the reduced elements, then combine their partial
    results in workgroup memory between barriers, and thread 0 combines the
    total into the output. Other ops are left to the parallel-loop path.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def DLGPUTileForBlocks : Pass<"dl-gpu-tile-for-blocks", "::mlir::func::FuncOp"> {
  let summary = "Tile parallel loops into GPU blocks and threads, and map them";
  let description = [{
    Makes nested `scf.parallel` loops sequential, then tiles every (now
    outermost) `scf.parallel` into blocks of at most `block-size` threads
    spread over its innermost dimensions (innermost first: a dimension of
    known extent takes the power of two covering it, the next ones what is
    left), with constant inner bounds and a guard (no min/max bounds:
    `convert-parallel-loops-to-gpu` needs launch sizes it can compute), and
    maps the innermost dimension to x, the next to y and z, blocks and
    threads alike, so that consecutive threads of a warp touch consecutive
    elements. Other dimensions, and y/z block counts beyond the hardware's
    65535, loop inside the kernel. Upstream's `scf-parallel-loop-tiling`
    takes one list of sizes for loops of every rank.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (1..1024)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def DLGPUNameKernels : Pass<"dl-gpu-name-kernels", "::mlir::ModuleOp"> {
  let summary = "Name each outlined kernel after its gpu.module";
  let description = [{
    After `gpu-kernel-outlining`, which names every kernel after its host
    function (so that all the kernels of a function share one name in a
    profiler), the kernel of each `gpu.module` holding one kernel takes the
    module's (unique) name, and the `gpu.launch_func` ops that launch it
    are updated.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def DLGPUCheckMapped : Pass<"dl-gpu-check-mapped", "::mlir::func::FuncOp"> {
  let summary = "Fail on a parallel loop that did not become a GPU kernel";
  let description = [{
    After `convert-parallel-loops-to-gpu`, an `scf.parallel` left in a
    function would run on the host, on device buffers: an error names it.
    So does any other operation outside the kernels that reads or writes a
    buffer (a `memref.load`, a loop of a reduction): the host's buffers are
    device memory, which the host cannot touch.
  }];
}

def DLGPUFloatRemainderToLibdevice
    : Pass<"dl-gpu-float-remainder-to-libdevice", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Scalar arith.remf in kernels as calls of libdevice's fmod";
  let description = [{
    Upstream's NVVM lowering converts arith ops to the llvm dialect before
    `convert-gpu-to-nvvm`, whose libdevice patterns would have turned
    `arith.remf` into `__nv_fmodf` / `__nv_fmod`; the `llvm.frem` it meets
    instead has no NVPTX lowering and is refused. This pass makes the calls
    first: each f32 / f64 `arith.remf` of a gpu.module becomes a `func.call`
    of the libdevice function, declared in the module. Other ops are left.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // DL_CODEGEN_GPU_PASSES_TD
