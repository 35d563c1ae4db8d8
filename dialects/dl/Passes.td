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
  }];
  let options = [
    Option<"rows", "rows", "int64_t", /*default=*/"8",
           "Output rows per micro-kernel (unrolled)">,
    Option<"vectors", "vectors", "int64_t", /*default=*/"2",
           "Vectors per output row in the micro-kernel">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of a vector register in bits (512 for AVX-512)">,
    Option<"columnBlock", "column-block", "int64_t", /*default=*/"256",
           "Output columns per cache block (a multiple of the tile width)">,
    Option<"reductionBlock", "reduction-block", "int64_t", /*default=*/"256",
           "Iterations of the outermost reduction loop per cache block">,
    Option<"pack", "pack", "bool", /*default=*/"true",
           "Copy each cache block of the input indexed by (reduction, column) "
           "into a contiguous buffer">,
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect"];
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

#endif // DL_PASSES_TD
