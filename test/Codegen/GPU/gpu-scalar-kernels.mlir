// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-gpu-scalar-kernels))' | FileCheck %s

// A linalg op on rank-0 buffers has no loop to map to threads: it goes into a
// one-iteration scf.parallel, a kernel of one thread, so the host never
// computes on device buffers.
// CHECK-LABEL: func @rank0
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1)
// CHECK-NEXT: linalg.generic
func.func @rank0(%a: memref<f32>, %b: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%a : memref<f32>) outs(%b : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction over all of its dimensions (the sum of a whole tensor) has no
// parallel loop either: convert-linalg-to-parallel-loops would leave it as
// scf.for loops on the host, reading device memory. One thread does it.
// CHECK-LABEL: func @full_reduction
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1)
// CHECK-NEXT: linalg.generic
func.func @full_reduction(%a: memref<4x5xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%a : memref<4x5xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %y: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Ops with parallel loops (a row sum keeps one), and rank-0 ops already inside a parallel loop, are left
// alone.
// CHECK-LABEL: func @loops
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
func.func @loops(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%c : memref<4x5xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  }
  return
}
