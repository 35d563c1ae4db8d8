// RUN: dl-opt %s --pass-pipeline='builtin.module(func.func(dl-affine-vectorize{vector-width=-1}))' -verify-diagnostics

// expected-error @+1 {{dl-affine-vectorize: vector-width must not be negative, but got -1}}
func.func @f() {
  return
}
