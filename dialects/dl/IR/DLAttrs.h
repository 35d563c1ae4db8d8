//===- DLAttrs.h - attributes of the dl dialect -----------------*- C++ -*-===//
//
// #dl.target (the CPU code is generated for; queried through
// dl/Target/Target.h) and #dl.strategy (how an op is compiled).
//
//===----------------------------------------------------------------------===//
#ifndef DL_DLATTRS_H
#define DL_DLATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "dl/IR/DLEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dl/IR/DLAttrs.h.inc"

namespace mlir::dl {

/// The discardable attribute carrying an op's (or a loop nest's) strategy.
constexpr llvm::StringLiteral kStrategyAttrName = "dl.strategy";
/// What a tuning record measured for the strategy an op carries (dlc.tune
/// writes it with the strategy; dl-explain reports it).
constexpr llvm::StringLiteral kTunedAttrName = "dl.tuned";

/// The discardable attribute carrying a module's (or function's) target.
constexpr llvm::StringLiteral kTargetAttrName = "dl.target";

} // namespace mlir::dl

#endif // DL_DLATTRS_H
