//===- Passes.td - Conversions out of `dl` -----------------*- tablegen -*-===//
//
// Registration and constructors are generated from this file
// (`-gen-pass-decls`).
//
//===----------------------------------------------------------------------===//

#ifndef DL_CONVERSION_PASSES_TD
#define DL_CONVERSION_PASSES_TD

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

#endif // DL_CONVERSION_PASSES_TD
