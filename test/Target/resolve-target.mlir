// RUN: dl-opt %s --split-input-file --dl-resolve-target | FileCheck %s
// RUN: dl-opt %s --split-input-file --dl-resolve-target | dl-opt --split-input-file --dl-resolve-target | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=skylake-avx512 threads=4})' | FileCheck %s --check-prefix=SKX
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell features=-fma,-avx2})' | FileCheck %s --check-prefix=FEATURES
// RUN: not dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=pentium9000})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: dl-opt %s --split-input-file --dl-resolve-target=cpu=host | FileCheck %s --check-prefix=HOST

// (The second run resolves the output again: completion is idempotent.)

// A named CPU is completed from LLVM's features of it and dlc's table: AVX2,
// so 16 registers of 256 bits, Zen 3's FMA pipes and caches, one thread
// (a CPU that is not this machine: its thread count is not known).
// CHECK: module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "znver3", vector_bits = 256, vector_registers = 16, fma_units = 2, fma_latency = 4, l1d = 32768, l2 = 524288, l3 = 33554432, cache_line = 64, threads = 1>}
// The options describe another target: nothing of the module's holds.
// SKX: module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "skylake-avx512", vector_bits = 512, vector_registers = 32, fma_units = 2, fma_latency = 4, l1d = 32768, l2 = 1048576, l3 = 33554432, cache_line = 64, threads = 4>}
// HOST: module attributes {dl.target = #dl.target<triple = "{{.*}}", cpu = "{{[a-z0-9-]+}}"{{.*}}, vector_bits = {{128|256|512}}, vector_registers = {{16|32}}{{.*}}, l1d = {{[0-9]+}}, l2 = {{[0-9]+}}{{.*}}, cache_line = {{[0-9]+}}, threads = {{[0-9]+}}>}
module attributes {dl.target = #dl.target<cpu = "znver3">} {}

// -----

// Fields written explicitly are kept; AArch64's NEON has 32 registers of
// 128 bits (SVE is not used).
// CHECK: module attributes {dl.target = #dl.target<triple = "aarch64-unknown-linux-gnu", cpu = "neoverse-v1", vector_bits = 128, vector_registers = 32, fma_units = 4, fma_latency = 4, l1d = 65536, l2 = 2097152, l3 = 33554432, cache_line = 64, threads = 16>}
module attributes {dl.target = #dl.target<cpu = "neoverse-v1", l2 = 2097152, threads = 16>} {}

// -----

// Features are changes relative to the CPU's own (LLVM's target-features):
// without AVX-512 a Zen 4 has the AVX2 register file.
// CHECK: module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "znver4", features = "-avx512f", vector_bits = 256, vector_registers = 16,
// FEATURES: module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "haswell", features = "-avx2,-fma", vector_bits = 256, vector_registers = 16,
// UNKNOWN: error: #dl.target: unknown CPU 'pentium9000'; give an LLVM CPU name
module attributes {dl.target = #dl.target<cpu = "znver4", features = "-avx512f">} {}

// -----

// An LLVM CPU dlc has no table for: its features from LLVM, caches assumed
// small (32 KiB L1d, 256 KiB L2), FMA facts unknown (not printed: 0).
// CHECK: module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "x86-64", vector_bits = 128, vector_registers = 16, l1d = 32768, l2 = 262144, cache_line = 64, threads = 1>}
module attributes {dl.target = #dl.target<cpu = "x86-64">} {}
