//===- Passes.h - graph-level passes on dl ----------------------*- C++ -*-===//
#ifndef DL_TRANSFORMS_PASSES_H
#define DL_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "dl/IR/DLDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dl {

#define GEN_PASS_DECL
#include "dl/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dl/Transforms/Passes.h.inc"

} // namespace mlir::dl

#endif // DL_TRANSFORMS_PASSES_H
