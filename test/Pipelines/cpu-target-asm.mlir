// The same matmul and convolution compiled for five CPUs of three ISAs,
// each named in the pipeline (the host plays no part): dl-resolve-target
// describes the CPU, the register tile is chosen from its registers and FMA
// pipes, and LLVM compiles for that CPU (llc reads the triple, CPU and
// features from the IR). For each function, the block with the most FMAs
// (the micro-kernel's inner loop) is summarized by Inputs/microkernel.py:
// its FMAs, their register class, and the spills and reloads in it: none,
// so the accumulators stay in registers.
//
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{parallel=false target-cpu=haswell})' \
// RUN:   | mlir-translate --mlir-to-llvmir --allow-unregistered-dialect | llc -O3 -o %t.haswell.s
// RUN: %python %S/Inputs/microkernel.py %t.haswell.s | FileCheck %s --check-prefix=AVX2
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{parallel=false target-cpu=znver3})' \
// RUN:   | mlir-translate --mlir-to-llvmir --allow-unregistered-dialect | llc -O3 -o %t.znver3.s
// RUN: %python %S/Inputs/microkernel.py %t.znver3.s | FileCheck %s --check-prefix=AVX2
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{parallel=false target-cpu=znver4})' \
// RUN:   | mlir-translate --mlir-to-llvmir --allow-unregistered-dialect | llc -O3 -o %t.znver4.s
// RUN: %python %S/Inputs/microkernel.py %t.znver4.s | FileCheck %s --check-prefix=AVX512
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{parallel=false target-cpu=skylake-avx512})' \
// RUN:   | mlir-translate --mlir-to-llvmir --allow-unregistered-dialect | llc -O3 -o %t.skx.s
// RUN: %python %S/Inputs/microkernel.py %t.skx.s | FileCheck %s --check-prefix=AVX512
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{parallel=false target-cpu=neoverse-v1})' \
// RUN:   | mlir-translate --mlir-to-llvmir --allow-unregistered-dialect | llc -O3 -o %t.neoverse.s
// RUN: %python %S/Inputs/microkernel.py %t.neoverse.s | FileCheck %s --check-prefix=NEON
//
// The IR says which CPU the code is for, and LLVM's functions carry it:
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{parallel=false target-cpu=znver3})' \
// RUN:   | FileCheck %s --check-prefix=IR

// AVX2 (16 ymm registers, 2 FMA pipes of latency 4-5): a 4 x 3 tile, 12
// accumulators + 3 vectors of B + 1 broadcast of A.
// AVX2: dlc_matmul: 12 fma on ymm, 0 spills, 0 reloads
// AVX2: dlc_conv: 12 fma on ymm, 0 spills, 0 reloads
// AVX-512 (32 zmm registers): a 6 x 4 tile, 24 accumulators.
// AVX512: dlc_matmul: 24 fma on zmm, 0 spills, 0 reloads
// AVX512: dlc_conv: 24 fma on zmm, 0 spills, 0 reloads
// NEON (32 128-bit registers): 6 x 4 too.
// NEON: dlc_matmul: 24 fma on v.4s, 0 spills, 0 reloads
// NEON: dlc_conv: 24 fma on v.4s, 0 spills, 0 reloads

// IR: module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "znver3", vector_bits = 256, vector_registers = 16, fma_units = 2, fma_latency = 4, l1d = 32768, l2 = 524288, l3 = 33554432, cache_line = 64, threads = 1>, llvm.target_triple = "x86_64-unknown-linux-gnu"}
// IR: llvm.func @dlc_matmul({{.*}} attributes {{{.*}}target_cpu = "znver3", target_features = #llvm.target_features<[]>

func.func @dlc_matmul(%a: tensor<64x96xf32>, %b: tensor<96x192xf32>) -> tensor<64x192xf32> attributes {llvm.emit_c_interface} {
  %0 = dl.matmul %a, %b : (tensor<64x96xf32>, tensor<96x192xf32>) -> tensor<64x192xf32>
  return %0 : tensor<64x192xf32>
}

func.func @dlc_conv(%x: tensor<1x14x14x64xf32>, %w: tensor<3x3x64x96xf32>) -> tensor<1x12x12x96xf32> attributes {llvm.emit_c_interface} {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [0, 0, 0, 0] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x14x14x64xf32>, tensor<3x3x64x96xf32>) -> tensor<1x12x12x96xf32>
  return %0 : tensor<1x12x12x96xf32>
}
