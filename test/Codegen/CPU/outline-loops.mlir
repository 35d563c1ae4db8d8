// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-outline-loops)' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-outline-loops{min-ops=100})' | FileCheck %s --check-prefix=SMALL
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-outline-loops,convert-scf-to-cf,finalize-memref-to-llvm,convert-func-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

// Two layers: the same nest over other weights and buffers. Both become
// calls of one function, which takes the weights' addresses and the buffers
// and recomputes the constants; the nest that differs (subf, and a result)
// occurs once and stays where it is.
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>, %[[Z:.*]]: memref<64xf32>)
// CHECK: %[[W1:.*]] = memref.get_global @w1
// CHECK: %[[W2:.*]] = memref.get_global @w2
// CHECK: call @layers_loop_0(%[[X]], %[[W1]], %[[Y]]) : (memref<64xf32>, memref<64xf32>, memref<64xf32>) -> ()
// CHECK: call @layers_loop_0(%[[Y]], %[[W2]], %[[Z]])
// CHECK: %[[N:.*]] = scf.for
// CHECK: arith.subf
// CHECK: return %[[N]]
// CHECK: func.func private @layers_loop_0(%[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>, %[[C:.*]]: memref<64xf32>)
// CHECK-SAME: attributes {dl.outlined_loop, passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 64 : index
// CHECK: scf.for
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[B]]
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK-NOT: func.func private @layers_loop_
// SMALL-LABEL: func.func @layers(
// SMALL-NOT: call
// SMALL-NOT: func.func private
// LLVM: llvm.func @layers(
// LLVM: llvm.call @layers_loop_0(
// LLVM: llvm.call @layers_loop_0(
// LLVM: llvm.func @layers_loop_0({{.*}}) attributes {dl.outlined_loop, passthrough = ["noinline"]
memref.global "private" constant @w1 : memref<64xf32> = dense<1.0>
memref.global "private" constant @w2 : memref<64xf32> = dense<2.0>
func.func @layers(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %w1 = memref.get_global @w1 : memref<64xf32>
  %w2 = memref.get_global @w2 : memref<64xf32>
  scf.for %i = %c0 to %c64 step %c1 {
    %a = memref.load %x[%i] : memref<64xf32>
    %b = memref.load %w1[%i] : memref<64xf32>
    %s = arith.mulf %a, %b : f32
    %t = arith.addf %s, %a : f32
    %u = arith.mulf %t, %t : f32
    memref.store %u, %y[%i] : memref<64xf32>
  }
  scf.for %i = %c0 to %c64 step %c1 {
    %a = memref.load %y[%i] : memref<64xf32>
    %b = memref.load %w2[%i] : memref<64xf32>
    %s = arith.mulf %a, %b : f32
    %t = arith.addf %s, %a : f32
    %u = arith.mulf %t, %t : f32
    memref.store %u, %z[%i] : memref<64xf32>
  }
  %r = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %c0) -> index {
    %a = memref.load %y[%i] : memref<64xf32>
    %b = memref.load %w2[%i] : memref<64xf32>
    %s = arith.subf %a, %b : f32
    %t = arith.addf %s, %a : f32
    %u = arith.mulf %t, %t : f32
    memref.store %u, %z[%i] : memref<64xf32>
    %n = arith.addi %acc, %c1 : index
    scf.yield %n : index
  }
  return %r : index
}

// -----

// Equivalent nests with results: the function returns them, and each call
// gives its own. Nests that differ only in a constant are not equivalent
// (constants are recomputed inside, not passed): two calls of one function,
// one nest left in place (with the constants it was outlined with; the
// pipeline's cleanups merge them with the caller's).
// CHECK-LABEL: func.func @sums(
// CHECK: %[[S1:.*]] = call @sums_loop_0(%{{.*}}) : (memref<64xf32>) -> f32
// CHECK: %[[S2:.*]] = call @sums_loop_0(%{{.*}}) : (memref<64xf32>) -> f32
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[S3:.*]] = scf.for
// CHECK: arith.addf %{{.*}}, %[[TWO]]
// CHECK: return %[[S1]], %[[S2]], %[[S3]]
// CHECK: func.func private @sums_loop_0(%{{.*}}: memref<64xf32>) -> f32
// CHECK: %[[R:.*]] = scf.for
// CHECK: return %[[R]] : f32
func.func @sums(%x: memref<64xf32>, %y: memref<64xf32>) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %s1 = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %a = memref.load %x[%i] : memref<64xf32>
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %one : f32
    %e = arith.mulf %c, %b : f32
    %f = arith.subf %e, %a : f32
    %d = arith.addf %acc, %f : f32
    scf.yield %d : f32
  }
  %s2 = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %a = memref.load %y[%i] : memref<64xf32>
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %one : f32
    %e = arith.mulf %c, %b : f32
    %f = arith.subf %e, %a : f32
    %d = arith.addf %acc, %f : f32
    scf.yield %d : f32
  }
  %s3 = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %a = memref.load %y[%i] : memref<64xf32>
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %two : f32
    %e = arith.mulf %c, %b : f32
    %f = arith.subf %e, %a : f32
    %d = arith.addf %acc, %f : f32
    scf.yield %d : f32
  }
  return %s1, %s2, %s3 : f32, f32, f32
}

// -----

// A nest that uses a value of the caller's stack (memref.alloca) is
// outlined like any other: the callee runs while the caller's frame lives.
// Small nests (fewer than min-ops operations) are never outlined.
// CHECK-LABEL: func.func @stack(
// CHECK: %[[T:.*]] = memref.alloca
// CHECK: call @stack_loop_0(%{{.*}}, %[[T]])
// CHECK: call @stack_loop_0(%{{.*}}, %[[T]])
// CHECK: scf.for
// CHECK-NOT: call
// CHECK: return
func.func @stack(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %t = memref.alloca() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %x[%i] : memref<8xf32>
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %a : f32
    %d = arith.mulf %c, %c : f32
    %e = arith.subf %d, %b : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %y[%i] : memref<8xf32>
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %a : f32
    %d = arith.mulf %c, %c : f32
    %e = arith.subf %d, %b : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %t[%i] : memref<8xf32>
    memref.store %a, %y[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %a = memref.load %t[%i] : memref<8xf32>
    memref.store %a, %x[%i] : memref<8xf32>
  }
  return
}

// -----

// Nests with a memref result stay where they are, equivalent or not: the
// memref may be stack memory of the nest, gone once a function returns.
// CHECK-LABEL: func.func @memref_results(
// CHECK-NOT: call
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: func.func private
func.func @memref_results(%x: memref<8xf32>, %y: memref<8xf32>) -> (memref<8xf32>, memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r1 = scf.for %i = %c0 to %c8 step %c1 iter_args(%m = %x) -> memref<8xf32> {
    %a = memref.load %m[%i] : memref<8xf32>
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %a : f32
    %d = arith.mulf %c, %c : f32
    %e = arith.subf %d, %b : f32
    memref.store %e, %m[%i] : memref<8xf32>
    scf.yield %m : memref<8xf32>
  }
  %r2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%m = %y) -> memref<8xf32> {
    %a = memref.load %m[%i] : memref<8xf32>
    %b = arith.mulf %a, %a : f32
    %c = arith.addf %b, %a : f32
    %d = arith.mulf %c, %c : f32
    %e = arith.subf %d, %b : f32
    memref.store %e, %m[%i] : memref<8xf32>
    scf.yield %m : memref<8xf32>
  }
  return %r1, %r2 : memref<8xf32>, memref<8xf32>
}
