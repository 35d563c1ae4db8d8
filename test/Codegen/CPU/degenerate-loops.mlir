// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},func.func(dl-affine-tile))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-parallelize{min-work=1000}))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --dl-affine-interchange --dl-affine-register-tile --dl-affine-vectorize | FileCheck %s

// Loops the parser accepts but the loop passes cannot reason about (found by
// tools/fuzz/dlopt_fuzz.py): each aborted a pass (a tile of size 0, a trip
// count divided by a step of 0). They are left as they are.

// A band whose inner loop runs no iteration: dl-affine-tile made a tile of
// size 0 (affine.for's setStep asserts on it).
// (dl-affine-parallelize may still run the outer loop on threads.)
// CHECK-LABEL: func.func @zero_trips
// CHECK: {{affine.for %.* = 0 to 1024|affine.parallel \(%.*\) = \(0\) to \(1024\)}} {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 0 {
func.func @zero_trips(%in: memref<512x1024xf32>, %out: memref<1024x512xf32>) {
  affine.for %i = 0 to 1024 {
    affine.for %j = 0 to 0 {
      %0 = affine.load %in[%j, %i] : memref<512x1024xf32>
      affine.store %0, %out[%i, %j] : memref<1024x512xf32>
    }
  }
  return
}

// -----

// Step 0: trip counts divide by the step (dl-affine-parallelize's work
// estimate asserted on the division by zero).
// CHECK-LABEL: func.func @step_zero
// CHECK: affine.for %{{.*}} = 0 to 4096 step 0 {
func.func @step_zero(%a: memref<4098xf32>) {
  affine.for %i = 0 to 4096 step 0 {
    %0 = affine.load %a[%i] : memref<4098xf32>
    %1 = affine.load %a[%i + 1] : memref<4098xf32>
    %2 = arith.addf %0, %1 : f32
    affine.store %2, %a[%i] : memref<4098xf32>
  }
  return
}
