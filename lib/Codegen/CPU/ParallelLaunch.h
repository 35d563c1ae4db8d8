//===- ParallelLaunch.h - names shared by the parallel-launch passes ------===//
//
// dl-outline-parallel marks what it creates with these attributes and calls
// the runtime by these names; dl-lower-parallel-launch finds them again.
//
//===----------------------------------------------------------------------===//
#ifndef DL_LIB_CODEGEN_CPU_PARALLELLAUNCH_H
#define DL_LIB_CODEGEN_CPU_PARALLELLAUNCH_H

#include "llvm/ADT/StringRef.h"

namespace mlir::dl {

/// The public i64 global holding the requested thread count (0: all).
constexpr llvm::StringLiteral kThreadsSymbol = "dlc_num_threads";
/// Marks an outlined parallel body.
constexpr llvm::StringLiteral kBodyAttr = "dl.parallel_body";
/// Marks a launch stub; names its body.
constexpr llvm::StringLiteral kLaunchAttr = "dl.parallel_launch";
/// The runtime's fork/join entry point (lib/Runtime).
constexpr llvm::StringLiteral kRuntimeEntry = "dlc_parallel_for";

} // namespace mlir::dl

#endif // DL_LIB_CODEGEN_CPU_PARALLELLAUNCH_H
