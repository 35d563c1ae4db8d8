// RUN: dl-opt %s --split-input-file --verify-diagnostics

// Every malformed #dl.target and #dl.strategy, and every misplaced one, is
// refused with a message that names what is wrong.

func.func @s(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'dl.strategy' must be a #dl.strategy attribute (for example #dl.strategy<kind = im2col_gemm>), but got "direct"}}
  %0 = dl.matmul %a, %b {dl.strategy = "direct"} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @s(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'dl.strategy' of 'dl.matmul' must be register_tiled_gemm or loops, but got im2col_gemm}}
  %0 = dl.matmul %a, %b {dl.strategy = #dl.strategy<kind = im2col_gemm>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @s(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'dl.relu' has no code-generation strategy; dl.strategy is for matmuls, convolutions, poolings and reductions}}
  %0 = dl.relu %a {dl.strategy = #dl.strategy<kind = loops>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @s(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{#dl.strategy: rows and vectors are given together (both 0: chosen from the target), but got rows = 3, vectors = 0}}
  %0 = dl.matmul %a, %b {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 3>} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @s(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'dl.target' belongs on a module or a function, not on 'dl.matmul'}}
  %0 = dl.matmul %a, %b {dl.target = #dl.target<cpu = "znver4">} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// expected-error @+1 {{'dl.target' must be a #dl.target attribute (for example #dl.target<cpu = "znver4">), but got "znver4"}}
module attributes {dl.target = "znver4"} {}

// -----

// expected-error @+1 {{#dl.target: unknown CPU 'znver9'; give an LLVM CPU name (znver4, haswell, skylake-avx512, neoverse-v1, apple-m1, ...) or host}}
module attributes {dl.target = #dl.target<cpu = "znver9">} {}

// -----

// expected-error @+1 {{#dl.target: triple 'riscv64' is not one dlc generates CPU code for (x86_64 or aarch64)}}
module attributes {dl.target = #dl.target<triple = "riscv64", cpu = "znver4">} {}

// -----

// expected-error @+1 {{#dl.target: unknown CPU 'znver4' for triple 'aarch64-linux-gnu'; give an LLVM CPU name (znver4, haswell, skylake-avx512, neoverse-v1, apple-m1, ...) or host}}
module attributes {dl.target = #dl.target<triple = "aarch64-linux-gnu", cpu = "znver4">} {}

// -----

// expected-error @+1 {{#dl.target: vector_bits must be a non-negative multiple of 32, but got 100}}
module attributes {dl.target = #dl.target<vector_bits = 100>} {}

// -----

// expected-error @+1 {{#dl.target: features must be a comma-separated list of +name or -name, but got 'avx2' in "avx2"}}
module attributes {dl.target = #dl.target<features = "avx2">} {}

// -----

// expected-error @+1 {{#dl.target: l2 must not be negative, but got -5}}
module attributes {dl.target = #dl.target<l2 = -5>} {}

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: bogus}}
module attributes {dl.target = #dl.target<cpu = "znver4", bogus = 3>} {}

// -----

// A register tile far past any register file (the fuzzer's rows = 65536 with
// a dynamic M unrolled for minutes) is refused.
func.func @huge_tile(%a: tensor<?x8xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+1 {{#dl.strategy: a register tile of rows x vectors = 65536 x 3 exceeds 128 accumulators (4x the largest register file)}}
  %0 = dl.matmul %a, %b {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 65536, vectors = 3>} : (tensor<?x8xf32>, tensor<8x3xf32>) -> tensor<?x3xf32>
  return
}
