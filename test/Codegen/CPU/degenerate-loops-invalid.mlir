// A loop's step must be positive: the parser accepts `step 0` (and upstream's
// verifier does not refuse it), but trip counts divide by the step and such a
// loop never ends. Every dl-affine pass, alone or in the pipeline, refuses it
// with an error at the loop (dl::normalizeAffineLoops) rather than aborting
// in a trip count (dl-affine-parallelize's work estimate and
// dl-affine-unroll-reductions both asserted on the division by zero).
//
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},func.func(dl-affine-tile))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-parallelize{min-work=1000}))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-interchange))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},func.func(dl-affine-register-tile))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-transpose-squares))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-promote-accumulators))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-collapse))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},func.func(dl-affine-vectorize))' -verify-diagnostics
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-cpu-pipeline)' -verify-diagnostics

func.func @step_zero(%a: memref<4098xf32>) {
  // expected-error @below {{affine.for has step 0; a loop's step must be positive}}
  affine.for %i = 0 to 4096 step 0 {
    %0 = affine.load %a[%i] : memref<4098xf32>
    %1 = affine.load %a[%i + 1] : memref<4098xf32>
    %2 = arith.addf %0, %1 : f32
    affine.store %2, %a[%i] : memref<4098xf32>
  }
  return
}

// -----

// A step-0 loop inside a loop of no iteration is refused too: validity is
// checked before anything is deleted.
func.func @step_zero_inside_empty(%a: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 0 {
    // expected-error @below {{affine.for has step 0; a loop's step must be positive}}
    affine.for %j = 0 to 8 step 0 {
      affine.store %one, %a[%j] : memref<8xf32>
    }
  }
  return
}

// -----

func.func @parallel_step_zero(%a: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  // expected-error @below {{affine.parallel has step 0; a loop's step must be positive}}
  affine.parallel (%i) = (0) to (8) step (0) {
    affine.store %one, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// A type whose size overflows 64 bits (dl-check-sizes refuses it in the
// pipeline; dl-affine-transpose-squares alone asserted in upstream's
// strided-layout helper on it).
// expected-error @below {{whose size in elements or bytes does not fit in 64 bits}}
func.func @oversized(%a: memref<4294967296x4294967296xf32>, %b: memref<8xf32>) {
  affine.for %i = 0 to 8 {
    %v = affine.load %a[%i, %i] : memref<4294967296x4294967296xf32>
    affine.store %v, %b[%i] : memref<8xf32>
  }
  return
}
