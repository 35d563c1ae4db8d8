//===- Passes.h - the target description ------------------------*- C++ -*-===//
#ifndef DL_TARGET_PASSES_H
#define DL_TARGET_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "dl/IR/DLDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dl {

#define GEN_PASS_DECL
#include "dl/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dl/Target/Passes.h.inc"

} // namespace mlir::dl

#endif // DL_TARGET_PASSES_H
