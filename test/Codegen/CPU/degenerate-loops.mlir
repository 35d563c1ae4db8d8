// The loop passes' contract (AffineUtils.h, dl::normalizeAffineLoops), fed
// to every dl-affine pass alone and to the whole CPU pipeline: a loop that
// runs no iteration (`0 to 0`, `0 to -1`, a size-0 dimension) is deleted
// before any pass computes a trip count, its results replaced by its initial
// values; the loops that do run are left to the pass. (Found by
// tools/fuzz/dlopt_fuzz.py: each of these aborted or hung a pass once; the
// invalid ones, a step of 0 or less, are in degenerate-loops-invalid.mlir.)
//
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},func.func(dl-affine-tile))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-parallelize{min-work=1000}))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-interchange))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},func.func(dl-affine-register-tile))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-transpose-squares))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-promote-accumulators))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-collapse))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},func.func(dl-affine-vectorize))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-cpu-pipeline)' | FileCheck %s --check-prefix=LLVM

// A band whose inner loop runs no iteration (dl-affine-tile once made a tile
// of size 0, and affine.for's setStep asserts on it): the inner loop goes,
// the outer one stays (empty).
// CHECK-LABEL: func.func @zero_trips
// CHECK-NOT: 0 to 0
// CHECK: return
// LLVM-LABEL: llvm.func @zero_trips
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

// An upper bound below the lower one, in a transpose nest
// (dl-cpu-pipeline never ended on it: dl-affine-transpose-squares).
// CHECK-LABEL: func.func @negative_trips
// CHECK-NOT: to -1
// CHECK: return
// LLVM-LABEL: llvm.func @negative_trips
func.func @negative_trips(%in: memref<32x20xf32>, %out: memref<20x32xf32>) {
  affine.for %i = 0 to 20 {
    affine.for %j = 0 to -1 {
      %v = affine.load %in[%j, %i] : memref<32x20xf32>
      affine.store %v, %out[%i, %j] : memref<20x32xf32>
    }
  }
  return
}

// -----

// A reduction over a size-0 dimension, carried in iter_args: the loop goes
// and its result is its initial value.
// CHECK-LABEL: func.func @empty_reduction
// CHECK-SAME: (%[[A:.*]]: memref<0xf32>, %[[OUT:.*]]: memref<f32>)
// CHECK-NOT: affine.for
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NOT: affine.for
// CHECK: affine.store %[[ZERO]], %[[OUT]]
// LLVM-LABEL: llvm.func @empty_reduction
func.func @empty_reduction(%a: memref<0xf32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %sum = affine.for %i = 0 to 0 iter_args(%acc = %zero) -> f32 {
    %x = affine.load %a[%i] : memref<0xf32>
    %s = arith.addf %acc, %x : f32
    affine.yield %s : f32
  }
  affine.store %sum, %out[] : memref<f32>
  return
}

// -----

// A loop of work beside an empty one: the work stays (each pass may then
// transform it; its store is still there).
// CHECK-LABEL: func.func @work_beside_empty
// CHECK-NOT: 0 to 0
// CHECK: {{affine.store|vector.store|vector.transfer_write}}
// LLVM-LABEL: llvm.func @work_beside_empty
// LLVM: llvm.store
func.func @work_beside_empty(%a: memref<64xf32>, %b: memref<0x8xf32>) {
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 0 {
    affine.for %j = 0 to 8 {
      affine.store %one, %b[%i, %j] : memref<0x8xf32>
    }
  }
  affine.for %i = 0 to 64 {
    %x = affine.load %a[%i] : memref<64xf32>
    %y = arith.addf %x, %one : f32
    affine.store %y, %a[%i] : memref<64xf32>
  }
  return
}

// -----

// Elements of type index (no bit width: the cache models' element size
// asserted on them in dl-affine-interchange, found by dl-opt's fuzzer on
// affine-collapse.mlir): each pass runs; an index is 8 bytes to them.
// CHECK-LABEL: func.func @index_elements
// CHECK: {{affine.store|vector.store|vector.transfer_write}}
// LLVM-LABEL: llvm.func @index_elements
// LLVM: llvm.store
func.func @index_elements(%x: memref<64x32xindex>, %out: memref<32x64xindex>) {
  affine.for %i = 0 to 32 {
    affine.for %j = 0 to 64 {
      %v = affine.load %x[%j, %i] : memref<64x32xindex>
      affine.store %v, %out[%i, %j] : memref<32x64xindex>
    }
  }
  return
}
