// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},dl-lower-vector-transpose)' | FileCheck %s --check-prefix=AVX512
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},dl-lower-vector-transpose)' | FileCheck %s --check-prefix=AVX2

// A 16x16 f32 transpose (the packing of a transposed GEMM input on
// AVX-512): AVX-512's shuffle sequence, 64 two-source shuffles of rows;
// without AVX-512, one flat shuffle that LLVM selects for the ISA.
// AVX512-LABEL: func @square
// AVX512-NOT: vector.transpose
// AVX512-COUNT-64: vector.shuffle
// AVX512-NOT: vector.shuffle
// AVX2-LABEL: func @square
// AVX2-NOT: vector.transpose
// AVX2: vector.shape_cast
// AVX2-NEXT: vector.shuffle
// AVX2-NEXT: vector.shape_cast
func.func @square(%v: vector<16x16xf32>) -> vector<16x16xf32> {
  %t = vector.transpose %v, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
  return %t : vector<16x16xf32>
}
