// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-outline-parallel)' | FileCheck %s
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-outline-parallel{merge=false})' | FileCheck %s --check-prefix=KEEP
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-outline-parallel,convert-scf-to-cf,finalize-memref-to-llvm,convert-func-to-llvm,convert-vector-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts,dl-lower-parallel-launch)' | FileCheck %s --check-prefix=LLVM

// The body of the outermost scf.parallel becomes a private function of
// [begin, end) of its first dimension and of what it captures (the memref,
// the factor, the second dimension's bound); the constants it uses (2.0, the
// steps, the second dimension's lower bound) are cloned into it. The loop
// becomes a call of a launch stub with (lb, ub, step, threads, captures),
// the thread count loaded from @dlc_num_threads.
// CHECK: memref.global "public" @dlc_num_threads : memref<i64> = dense<0>
// CHECK-LABEL: func.func @scale(
// CHECK-SAME: %[[A:.*]]: memref<?x?xf32>, %[[N:.*]]: index, %[[M:.*]]: index, %[[F:.*]]: f32)
// CHECK: %[[G:.*]] = memref.get_global @dlc_num_threads : memref<i64>
// CHECK: %[[T:.*]] = memref.load %[[G]][] : memref<i64>
// CHECK: call @scale_parallel_0_launch(%{{.*}}, %[[N]], %{{.*}}, %[[T]], %[[A]], %[[F]], %[[M]]) : (index, index, index, i64, memref<?x?xf32>, f32, index) -> ()
// CHECK-NOT: scf.parallel
// CHECK: return
// CHECK: func.func private @scale_parallel_0(%[[B:.*]]: index, %[[E:.*]]: index, %[[BA:.*]]: memref<?x?xf32>, %[[BF:.*]]: f32, %[[BM:.*]]: index) attributes {dl.parallel_body}
// CHECK-DAG: arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.for %[[I:.*]] = %[[B]] to %[[E]] step %[[C1]] {
// CHECK: scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%[[BM]]) step (%{{.*}}) {
// CHECK: memref.load %[[BA]][%[[I]], %[[J]]]
// CHECK: arith.mulf
// CHECK: arith.mulf %{{.*}}, %[[BF]]
// CHECK: memref.store
// CHECK: func.func private @scale_parallel_0_launch(index, index, index, i64, memref<?x?xf32>, f32, index) attributes {dl.parallel_launch = @scale_parallel_0}

// Down to the llvm dialect: the captures go to a stack frame allocated once
// in the entry block, the runtime gets the trampoline, the frame, the
// bounds, the step and the thread count; the trampoline loads the captures
// back (the memref as its 7 scalars) and calls the body.
// LLVM-LABEL: llvm.func @scale(
// LLVM: %[[FRAME:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, i64, i64, i64, i64, f32, i64)>
// LLVM: llvm.store %{{.*}}, %{{.*}} : !llvm.ptr, !llvm.ptr
// LLVM: %[[FN:.*]] = llvm.mlir.addressof @scale_parallel_0_entry
// LLVM: llvm.call @dlc_parallel_for(%[[FN]], %[[FRAME]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> ()
// LLVM-NOT: scale_parallel_0_launch
// LLVM: llvm.func internal @scale_parallel_0(%{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: f32, %{{.*}}: i64)
// LLVM: llvm.func internal @scale_parallel_0_entry(%[[CTX:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// LLVM-COUNT-9: llvm.load
// LLVM: llvm.call @scale_parallel_0(%[[BEGIN]], %[[END]],
func.func @scale(%a: memref<?x?xf32>, %n: index, %m: index, %f: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %0 = memref.load %a[%i, %j] : memref<?x?xf32>
    %1 = arith.mulf %0, %two : f32
    %2 = arith.mulf %1, %f : f32
    memref.store %2, %a[%i, %j] : memref<?x?xf32>
    scf.reduce
  } loc("model.py":7:5)
  return
}

// Two loops in one function: two bodies, numbered; the nested loop stays
// inside its outer loop's body.
// CHECK-LABEL: func.func @two
// CHECK: call @two_parallel_0_launch
// CHECK: call @two_parallel_1_launch
// CHECK: func.func private @two_parallel_1(
// CHECK: scf.for
// CHECK: scf.parallel
// CHECK: func.func private @two_parallel_0(
func.func @two(%a: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %a[%i, %c0] : memref<8x8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      memref.store %one, %a[%i, %j] : memref<8x8xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// Loops with reductions are left alone.
// CHECK-LABEL: func.func @total
// CHECK: scf.parallel
// CHECK-NOT: _launch
// CHECK: return
func.func @total(%a: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
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

// A splat of a constant is recomputed in the body; a splat of an argument is
// captured, and in the llvm dialect the frame takes the vector's alignment
// (no explicit alloca alignment: the trampoline's loads assume it).
// CHECK-LABEL: func.func @splats(
// CHECK-SAME: %[[SA:.*]]: memref<64x8xf32>, %[[SX:.*]]: f32)
// CHECK: %[[SPLAT:.*]] = vector.broadcast %[[SX]] : f32 to vector<8xf32>
// CHECK: call @splats_parallel_0_launch(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SA]], %[[SPLAT]]) : (index, index, index, i64, memref<64x8xf32>, vector<8xf32>) -> ()
// CHECK: func.func private @splats_parallel_0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<64x8xf32>, %[[V:.*]]: vector<8xf32>)
// CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK: %[[TWOS:.*]] = vector.broadcast %[[TWO]] : f32 to vector<8xf32>
// CHECK: arith.mulf %{{.*}}, %[[TWOS]]
// CHECK: arith.addf %{{.*}}, %[[V]]
// LLVM-LABEL: llvm.func @splats(
// LLVM: llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, i64, i64, i64, i64, vector<8xf32>)> : (i64) -> !llvm.ptr
func.func @splats(%a: memref<64x8xf32>, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  %twos = vector.broadcast %two : f32 to vector<8xf32>
  %xs = vector.broadcast %x : f32 to vector<8xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %0 = vector.load %a[%i, %c0] : memref<64x8xf32>, vector<8xf32>
    %1 = arith.mulf %0, %twos : vector<8xf32>
    %2 = arith.addf %1, %xs : vector<8xf32>
    vector.store %2, %a[%i, %c0] : memref<64x8xf32>, vector<8xf32>
    scf.reduce
  }
  return
}

// The same loop over two weights (two layers of a network): the weights'
// addresses are captured, not recomputed, so both loops outline to one body
// and launch the same stub. A third loop that differs (another factor) gets
// its own body.
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[LX:.*]]: memref<64xf32>, %[[LY:.*]]: memref<64xf32>)
// CHECK: %[[W1:.*]] = memref.get_global @w1 : memref<64xf32>
// CHECK: %[[W2:.*]] = memref.get_global @w2 : memref<64xf32>
// CHECK: call @layers_parallel_0_launch(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LX]], %[[W1]], %[[LY]])
// CHECK: call @layers_parallel_0_launch(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LY]], %[[W2]], %[[LX]])
// CHECK: call @layers_parallel_2_launch(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LX]], %[[W2]], %[[LY]])
// CHECK-NOT: layers_parallel_1
// KEEP-LABEL: func.func @layers(
// KEEP: call @layers_parallel_0_launch(
// KEEP: call @layers_parallel_1_launch(
// KEEP: call @layers_parallel_2_launch(
// CHECK: func.func private @layers_parallel_2(
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK: func.func private @layers_parallel_2_launch(
// CHECK: func.func private @layers_parallel_0(%{{.*}}: index, %{{.*}}: index, %{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>)
// CHECK-NOT: memref.get_global
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK-NOT: memref.get_global
// CHECK: func.func private @layers_parallel_0_launch(
// CHECK-NOT: layers_parallel_1
memref.global "private" constant @w1 : memref<64xf32> = dense<1.0>
memref.global "private" constant @w2 : memref<64xf32> = dense<2.0>
func.func @layers(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %w1 = memref.get_global @w1 : memref<64xf32>
  %w2 = memref.get_global @w2 : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %0 = memref.load %x[%i] : memref<64xf32>
    %1 = memref.load %w1[%i] : memref<64xf32>
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.mulf %2, %two : f32
    memref.store %3, %y[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %0 = memref.load %y[%i] : memref<64xf32>
    %1 = memref.load %w2[%i] : memref<64xf32>
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.mulf %2, %two : f32
    memref.store %3, %x[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %0 = memref.load %x[%i] : memref<64xf32>
    %1 = memref.load %w2[%i] : memref<64xf32>
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.mulf %2, %three : f32
    memref.store %3, %y[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// The runtime entry is declared once, at the end of the module.
// LLVM: llvm.func @dlc_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64)

// The profiler's table (dlc.profile): one (trampoline, name) pair per body,
// named after the body and the source line of its loop (@scale's loop is at
// model.py:7, the others at their line of this file); the second and third
// layers of @layers launch the first one's body, so 6 bodies for 7 loops.
// LLVM: llvm.mlir.global internal constant @dlc_parallel_regions_name_0("scale_parallel_0 model.py:7\00")
// LLVM: llvm.mlir.global internal constant @dlc_parallel_regions_name_1("two_parallel_1 {{.*}}parallel-outline.mlir:{{[0-9]+}}\00")
// LLVM: llvm.mlir.global external constant @dlc_parallel_regions() {{.*}} : !llvm.array<12 x ptr> {
// LLVM: %[[T0:.*]] = llvm.mlir.addressof @scale_parallel_0_entry : !llvm.ptr
// LLVM: %[[N0:.*]] = llvm.mlir.addressof @dlc_parallel_regions_name_0 : !llvm.ptr
// LLVM: llvm.insertvalue %[[T0]], %{{.*}}[0] : !llvm.array<12 x ptr>
// LLVM: llvm.insertvalue %[[N0]], %{{.*}}[1] : !llvm.array<12 x ptr>
// LLVM: llvm.return
// LLVM: llvm.mlir.global external constant @dlc_parallel_region_count(6 : i64)
