// RUN: dl-opt %s --pass-pipeline='builtin.module(func.func(dl-affine-vectorize{vector-width=0}))' -verify-diagnostics

// expected-error @+1 {{dl-affine-vectorize: vector-width must be positive, but got 0}}
func.func @f() {
  return
}
