//===- TargetAttr.td - #dl.target, the CPU code is generated for -*- tablegen -*-===//
//
// The one description of the machine dlc compiles for. Code generation asks
// it, through dl::TargetInfo (dl/Target/Target.h), for every target
// decision: vector width and register count, FMA pipes, cache sizes,
// threads, ISA features. Attached to the module as `dl.target` by
// dl-resolve-target, the first step of every pipeline, so every stage
// prints it and replays with the same decisions.
//
//===----------------------------------------------------------------------===//

#ifndef DL_TARGET_TARGETATTR_TD
#define DL_TARGET_TARGETATTR_TD

include "dl/IR/DLBase.td"

def DL_TargetAttr : AttrDef<DL_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "The CPU that code is generated for";
  let description = [{
    What dlc's code generation knows about the CPU it compiles for:

    | field | meaning |
    | --- | --- |
    | `triple` | LLVM target triple (`x86_64-unknown-linux-gnu`, `aarch64-unknown-linux-gnu`) |
    | `cpu` | LLVM CPU name (`znver4`, `haswell`, `neoverse-v1`, ...), or `host` |
    | `features` | ISA features added (`+`) or removed (`-`) relative to the CPU's own, as LLVM's `target-features` (`-avx512f`) |
    | `vector_bits`, `vector_registers` | width and count of the vector registers code uses (512 x 32 with AVX-512, 256 x 16 with AVX2, 128 x 32 with NEON) |
    | `fma_units`, `fma_latency` | vector FMAs issued per cycle at that width and their latency in cycles (0: unknown) |
    | `l1d`, `l2`, `l3`, `cache_line` | cache sizes in bytes (per core for L1d and L2) |
    | `threads` | hardware threads code may use |

    Every field is optional in the text: `#dl.target<cpu = "znver3">` is
    completed from dlc's table of that CPU (and LLVM's feature list for it),
    `#dl.target<>` or `cpu = "host"` from the machine the compiler runs on
    (LLVM's host detection, the caches in /sys, the threads this process may
    use). Fields written explicitly are kept: `#dl.target<cpu = "znver4",
    l2 = 2097152, threads = 1>`. `dl-resolve-target` attaches the completed
    description to the module; a pass that finds none uses the host's.
  }];
  let parameters = (ins
    StringRefParameter<"LLVM target triple", "\"\"">:$triple,
    StringRefParameter<"LLVM CPU name, or host", "\"\"">:$cpu,
    StringRefParameter<"features relative to the CPU's, comma separated",
                       "\"\"">:$features,
    DefaultValuedParameter<"int64_t", "0", "vector register width in bits">:$vector_bits,
    DefaultValuedParameter<"int64_t", "0", "vector registers">:$vector_registers,
    DefaultValuedParameter<"int64_t", "0", "vector FMAs per cycle">:$fma_units,
    DefaultValuedParameter<"int64_t", "0", "FMA latency in cycles">:$fma_latency,
    DefaultValuedParameter<"int64_t", "0", "L1 data cache bytes">:$l1d,
    DefaultValuedParameter<"int64_t", "0", "L2 cache bytes">:$l2,
    DefaultValuedParameter<"int64_t", "0", "L3 cache bytes">:$l3,
    DefaultValuedParameter<"int64_t", "0", "cache line bytes">:$cache_line,
    DefaultValuedParameter<"int64_t", "0", "hardware threads">:$threads
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // DL_TARGET_TARGETATTR_TD
