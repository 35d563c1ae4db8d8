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
