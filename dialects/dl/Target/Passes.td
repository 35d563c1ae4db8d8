//===- Passes.td - the target description ------------------*- tablegen -*-===//
//
// Registration and constructors are generated from this file
// (`-gen-pass-decls`).
//
//===----------------------------------------------------------------------===//

#ifndef DL_TARGET_PASSES_TD
#define DL_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def DLResolveTarget : Pass<"dl-resolve-target", "::mlir::ModuleOp"> {
  let summary = "Attach the complete target description (#dl.target) to the module";
  let description = [{
    The first step of every pipeline. Completes the module's `dl.target`
    (a partial one is filled in from dlc's table of its CPU, or from the
    host), or attaches the host's where there is none, so that every later
    pass, every printed stage and the JIT see the same target. The options
    describe another target instead: `cpu` (an LLVM CPU name, or `host`) and
    `features` (`+name`/`-name` changes relative to the CPU's) replace the
    module's description; `threads` alone changes only its thread count.
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"\"",
           "CPU to compile for: an LLVM CPU name (znver4, haswell, "
           "neoverse-v1, ...) or host (empty: the module's target, else the "
           "host)">,
    Option<"features", "features", "std::string", /*default=*/"\"\"",
           "ISA features added (+name) or removed (-name), comma separated">,
    Option<"threads", "threads", "int64_t", /*default=*/"0",
           "Hardware threads compiled code is sized for (0: the target's)">,
  ];
  let dependentDialects = ["::mlir::dl::DLDialect"];
}

#endif // DL_TARGET_PASSES_TD
