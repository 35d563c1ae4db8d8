// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-split-function{max-ops=8})' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-split-function{max-ops=0})' | FileCheck %s --check-prefix=NEVER
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-split-function{max-ops=8},convert-scf-to-cf,finalize-memref-to-llvm,convert-func-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

// Three loop nests of 5 ops each over a temporary: with max-ops=8 the
// function is cut after every 8 ops or more, between top-level ops. Each
// part takes what it uses from before (the arguments, the temporary) and
// returns what is used after it; the constants are recomputed in each part,
// not passed. The parts are private, marked, and not to be inlined (LLVM
// would otherwise merge them back).
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: %[[A:.*]]: memref<16xf32>, %[[B:.*]]: memref<16xf32>)
// CHECK: %[[T:.*]] = call @chain_part_0(%[[A]]) : (memref<16xf32>) -> memref<16xf32>
// CHECK: call @chain_part_1(%[[T]], %[[B]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @chain_part_1(%[[T1:.*]]: memref<16xf32>, %[[B1:.*]]: memref<16xf32>) attributes {dl.split_part, passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 2.000000e+00 : f32
// CHECK-DAG: arith.constant 16 : index
// CHECK: scf.for
// CHECK: memref.load %[[T1]]
// CHECK: memref.store %{{.*}}, %[[B1]]
// CHECK: memref.dealloc %[[T1]]
// CHECK: return
// CHECK: func.func private @chain_part_0(%[[A0:.*]]: memref<16xf32>) -> memref<16xf32> attributes {dl.split_part, passthrough = ["noinline"]}
// CHECK: %[[ALLOC:.*]] = memref.alloc() : memref<16xf32>
// CHECK: scf.for
// CHECK: memref.load %[[A0]]
// CHECK: scf.for
// CHECK: return %[[ALLOC]] : memref<16xf32>

// max-ops=0: never cut.
// NEVER-LABEL: func.func @chain(
// NEVER-NOT: call
// NEVER: return
// NEVER-NOT: _part_

// The conversion to llvm carries the mark: LLVM's inliner leaves the parts.
// LLVM-LABEL: llvm.func @chain(
// LLVM: llvm.call @chain_part_0(
// LLVM: llvm.func @chain_part_1({{.*}}) attributes {dl.split_part, passthrough = ["noinline"], sym_visibility = "private"}
func.func @chain(%a: memref<16xf32>, %b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  %t = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %t[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %t[%i] : memref<16xf32>
    %y = arith.addf %x, %two : f32
    memref.store %y, %t[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %t[%i] : memref<16xf32>
    %y = arith.subf %x, %two : f32
    memref.store %y, %b[%i] : memref<16xf32>
  }
  memref.dealloc %t : memref<16xf32>
  return
}

// -----

// What it refuses: no cut while a stack buffer (memref.alloca, or a view of
// it) is in use, since it would not outlive its part: the three nests that
// use %s stay together, and a cut comes only after the last of them.
// CHECK-LABEL: func.func @stack(
// CHECK: call @stack_part_0(%{{.*}}) : (memref<16xf32>) -> ()
// CHECK-NEXT: call @stack_part_1(%{{.*}}) : (memref<16xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @stack_part_1(
// CHECK-NOT: memref.alloca
// CHECK: return
// CHECK: func.func private @stack_part_0(
// CHECK: memref.alloca
// CHECK: memref.subview
// CHECK-COUNT-3: scf.for
// CHECK: return
func.func @stack(%a: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  %s = memref.alloca() : memref<16xf32>
  %v = memref.subview %s[0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %s[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %v[%i] : memref<8xf32, strided<[1]>>
    %y = arith.addf %x, %two : f32
    memref.store %y, %a[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %v[%i] : memref<8xf32, strided<[1]>>
    %y = arith.subf %x, %two : f32
    memref.store %y, %a[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %a[%i] : memref<16xf32>
  }
  return
}

// -----

// Small functions are left alone.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: call
// CHECK: arith.addf
// CHECK-NOT: _part_
func.func @small(%a: f32) -> f32 {
  %b = arith.addf %a, %a : f32
  return %b : f32
}
