//===- Passes.h - GPU kernels on the CPU ------------------------*- C++ -*-===//
#ifndef DL_CODEGEN_GPUTOCPU_PASSES_H
#define DL_CODEGEN_GPUTOCPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dl {

#define GEN_PASS_DECL
#include "dl/Codegen/GPUToCPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dl/Codegen/GPUToCPU/Passes.h.inc"

} // namespace mlir::dl

#endif // DL_CODEGEN_GPUTOCPU_PASSES_H
