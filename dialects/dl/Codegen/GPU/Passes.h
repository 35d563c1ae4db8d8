//===- Passes.h - GPU code generation ---------------------------*- C++ -*-===//
#ifndef DL_CODEGEN_GPU_PASSES_H
#define DL_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dl {

#define GEN_PASS_DECL
#include "dl/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dl/Codegen/GPU/Passes.h.inc"

/// A static 1-D buffer of integers that host code only fills (memref.store),
/// hands to memref.reshape as its shape, reads sizes from and frees: the host
/// may touch it (dl-gpu-check-mapped), and dl-gpu-device-memory folds it into
/// a reinterpret cast of the reshaped buffer.
bool isHostShapeBuffer(Value buffer);

} // namespace mlir::dl

#endif // DL_CODEGEN_GPU_PASSES_H
