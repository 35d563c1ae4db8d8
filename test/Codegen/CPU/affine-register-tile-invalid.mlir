// RUN: dl-opt %s --pass-pipeline='builtin.module(func.func(dl-affine-register-tile{rows=3}))' -verify-diagnostics

// The tile shape comes from the target unless both of its sizes are given.
// expected-error @+1 {{dl-affine-register-tile: rows and vectors must be given together, positive (or both 0: from the target), but got rows = 3, vectors = 0}}
func.func @f() {
  return
}
