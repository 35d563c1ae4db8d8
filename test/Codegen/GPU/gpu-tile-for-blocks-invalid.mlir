// RUN: dl-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(dl-gpu-tile-for-blocks))'

// A parallel reduction (results, init values) is refused with an error, not
// tiled by upstream's helper, which erased the loop while its result was
// still used (found by the dl-opt fuzzer, seed 91357).
func.func @total(%a: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{dl-gpu-tile-for-blocks: a parallel loop with reductions (init values) cannot be mapped to GPU blocks}}
  %sum = scf.parallel (%i) = (%c0) to (%c64) step (%c1) init (%zero) -> f32 {
    %0 = memref.load %a[%i] : memref<64xf32>
    scf.reduce(%0 : f32) {
    ^bb0(%x: f32, %y: f32):
      %1 = arith.addf %x, %y : f32
      scf.reduce.return %1 : f32
    }
  }
  return %sum : f32
}
