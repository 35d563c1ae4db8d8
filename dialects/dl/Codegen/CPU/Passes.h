//===- Passes.h - CPU code generation ---------------------------*- C++ -*-===//
#ifndef DL_CODEGEN_CPU_PASSES_H
#define DL_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "dl/IR/DLDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dl {

#define GEN_PASS_DECL
#include "dl/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dl/Codegen/CPU/Passes.h.inc"

} // namespace mlir::dl

#endif // DL_CODEGEN_CPU_PASSES_H
