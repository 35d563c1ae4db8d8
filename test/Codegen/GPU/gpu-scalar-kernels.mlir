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

// Ops with loops, and rank-0 ops already inside a parallel loop, are left
// alone.
// CHECK-LABEL: func @loops
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
func.func @loops(%a: memref<4xf32>, %b: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}
