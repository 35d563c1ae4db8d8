// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-gpu-check-mapped))' --verify-diagnostics | FileCheck %s

// A parallel loop left after convert-parallel-loops-to-gpu would run on the
// host, on device buffers: an error names it.
func.func @unmapped(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{dl-gpu-check-mapped: this parallel loop could not be mapped to GPU blocks and threads}}
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %f, %a[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// Without parallel loops, nothing to say.
// CHECK-LABEL: func @mapped
func.func @mapped(%a: memref<4xf32>) {
  return
}
