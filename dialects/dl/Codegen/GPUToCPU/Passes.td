//===- Passes.td - GPU kernels on the CPU ------------------*- tablegen -*-===//
//
// Registration and constructors are generated from this file
// (`-gen-pass-decls`).
//
//===----------------------------------------------------------------------===//

#ifndef DL_CODEGEN_GPUTOCPU_PASSES_TD
#define DL_CODEGEN_GPUTOCPU_PASSES_TD

include "mlir/Pass/PassBase.td"

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

#endif // DL_CODEGEN_GPUTOCPU_PASSES_TD
