// RUN: dl-opt %s -split-input-file -verify-diagnostics --dl-check-sizes
// RUN: dl-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(dl-cpu-pipeline)'
// RUN: dl-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(dl-gpu-pipeline{from=gpu to=emulated})'

// dl-check-sizes, first in every pipeline after dl-resolve-target: a type
// whose element count or byte size overflows int64_t anywhere in the IR is an
// error, not an assertion in an upstream size computation (this input used
// to abort dl-opt in memref.extract_strided_metadata's verifier).

// expected-error @+1 {{the signature of @signature has type '(tensor<4294967296x4294967296x16xf32>) -> tensor<4294967296x4294967296x16xf32>', whose size in elements or bytes does not fit in 64 bits}}
func.func @signature(%a: tensor<4294967296x4294967296x16xf32>) -> tensor<4294967296x4294967296x16xf32> {
  return %a : tensor<4294967296x4294967296x16xf32>
}

// -----

func.func @result(%n: index) {
  // expected-error @+1 {{'memref.alloc' result #0 has type 'memref<4611686018427387904xf64>', whose size in elements or bytes does not fit in 64 bits}}
  %0 = memref.alloc() : memref<4611686018427387904xf64>
  return
}
