// RUN: dl-opt %s --split-input-file | FileCheck %s
// RUN: dl-opt %s --split-input-file | dl-opt --split-input-file | FileCheck %s

// #dl.target and #dl.strategy print as they parse; fields left out keep
// their defaults (completion is dl-resolve-target's, test/Target).
// CHECK: module attributes {dl.target = #dl.target<cpu = "znver3", l2 = 2097152>}
module attributes {dl.target = #dl.target<cpu = "znver3", l2 = 2097152>} {}

// -----

// CHECK: module attributes {dl.target = #dl.target<triple = "aarch64-unknown-linux-gnu", cpu = "neoverse-v1", features = "-sve", vector_bits = 128, vector_registers = 32, fma_units = 4, fma_latency = 4, l1d = 65536, l2 = 1048576, l3 = 33554432, cache_line = 64, threads = 8>}
module attributes {dl.target = #dl.target<triple = "aarch64-unknown-linux-gnu", cpu = "neoverse-v1", features = "-sve", vector_bits = 128, vector_registers = 32, fma_units = 4, fma_latency = 4, l1d = 65536, l2 = 1048576, l3 = 33554432, cache_line = 64, threads = 8>} {}

// -----

// A function may carry its own target (the nearest one wins).
// CHECK-LABEL: func @own_target
// CHECK-SAME: attributes {dl.target = #dl.target<cpu = "haswell">}
func.func @own_target() attributes {dl.target = #dl.target<cpu = "haswell">} {
  return
}

// -----

// CHECK-LABEL: func @strategies
// CHECK: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 4, column_block = 256, reduction_block = 128>}
// CHECK: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = loops>}
// CHECK: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm, layout = "NCHW">}
// CHECK: dl.softmax {{.*}} {dl.strategy = #dl.strategy<kind = vectorized_reduction>}
func.func @strategies(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<1x8x6x6xf32>, tensor<4x16xf32>) {
  %0 = dl.matmul %a, %b {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 4, column_block = 256, reduction_block = 128>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = dl.matmul %a, %b {dl.strategy = #dl.strategy<kind = loops>} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %2 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" {dl.strategy = #dl.strategy<kind = im2col_gemm, layout = "NCHW">} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %3 = dl.softmax %0 axis = 1 {dl.strategy = #dl.strategy<kind = vectorized_reduction>} : tensor<4x16xf32> -> tensor<4x16xf32>
  return %0, %1, %2, %3 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<1x8x6x6xf32>, tensor<4x16xf32>
}
