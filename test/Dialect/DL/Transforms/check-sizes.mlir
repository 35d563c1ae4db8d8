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

// -----

// A "dynamic" width written as a number (INT64_MIN), without its operand:
// tensor.pad's verifier accepts it, upstream's pad folding indexed out of
// bounds with it (dl-opt fuzzer, seed 131071).
func.func @pad_width_without_operand(%x: tensor<4xf32>) -> tensor<6xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' has an invalid high padding: array<i64: -9223372036854775808>}}
  %p = tensor.pad %x low[1] high[-9223372036854775808] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<6xf32>
  return %p : tensor<6xf32>
}

// -----

func.func @pad_negative_width(%x: tensor<4xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' has a negative low padding: array<i64: -1>}}
  %p = tensor.pad %x low[-1] high[0] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<3xf32>
  return %p : tensor<3xf32>
}

// -----

// Dynamic widths with their operands pass.
func.func @pad_dynamic_width(%x: tensor<4xf32>, %n: index) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[%n] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<?xf32>
  return %p : tensor<?xf32>
}

// -----

// affine.for's verifier accepts step 0; upstream's loop folding divided by
// it (dl-opt fuzz seed 141421).
func.func @affine_step_zero(%in: memref<128xf32>, %out: memref<128xf32>) {
  // expected-error @+1 {{affine.for has step 0; a loop's step must be positive}}
  affine.for %i = 0 to 128 step 0 {
    %0 = affine.load %in[%i] : memref<128xf32>
    affine.store %0, %out[%i] : memref<128xf32>
  }
  return
}

// -----

// An scf.for of a constant step 0 would never end.
func.func @scf_step_zero(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{'scf.for' has step 0: the loop would never end}}
  scf.for %i = %c0 to %c8 step %c0 {
    memref.store %one, %out[%i] : memref<8xf32>
  }
  return
}
