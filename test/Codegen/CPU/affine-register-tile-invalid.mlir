// RUN: dl-opt %s --pass-pipeline='builtin.module(func.func(dl-affine-register-tile{rows=0}))' -verify-diagnostics

// expected-error @+1 {{dl-affine-register-tile: rows and vectors must be positive and vector-bits a multiple of 32, but got rows = 0, vectors = 2, vector-bits = 512}}
func.func @f() {
  return
}
