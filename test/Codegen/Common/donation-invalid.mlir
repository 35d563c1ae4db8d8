// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-return-donated))' --verify-diagnostics

// Maps that do not fit the signature are refused.
// expected-error @+1 {{dl.donate: result 0 has type 'memref<2xf32>', but argument 0 is 'memref<3xf32>'}}
func.func @wrong_type(%a: memref<3xf32>, %b: memref<2xf32>) -> memref<2xf32> attributes {dl.donate = array<i64: 0>} {
  return %b : memref<2xf32>
}

// -----

// expected-error @+1 {{dl.donate has 2 entries, but the function has 1 results}}
func.func @wrong_count(%a: memref<3xf32>) -> memref<3xf32> attributes {dl.donate = array<i64: 0, -1>} {
  return %a : memref<3xf32>
}

// -----

// expected-error @+1 {{dl.donate: argument 0 receives two results}}
func.func @twice(%a: memref<3xf32>) -> (memref<3xf32>, memref<3xf32>) attributes {dl.donate = array<i64: 0, 0>} {
  return %a, %a : memref<3xf32>, memref<3xf32>
}
