// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-async-parallel)' | FileCheck %s
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-async-parallel,async-to-async-runtime,async-runtime-ref-counting,async-runtime-ref-counting-opt,convert-async-to-llvm,convert-scf-to-cf,finalize-memref-to-llvm,convert-func-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

// The thread count comes from the public global @dlc_num_threads (0: the
// async runtime's worker count), capped by the trip count. One thread: the
// loop runs inline. Else tasks 1..n-1 are async.execute regions over their
// chunk of rows, chunk 0 runs on the calling thread, and the group is
// awaited. The second dimension stays an scf.parallel inside each chunk.
// CHECK: memref.global "public" @dlc_num_threads : memref<i64> = dense<0>
// CHECK-LABEL: func @scale
// CHECK: %[[G:.*]] = memref.get_global @dlc_num_threads : memref<i64>
// CHECK: %[[REQ:.*]] = memref.load %[[G]][] : memref<i64>
// CHECK: async.runtime.num_worker_threads
// CHECK: %[[TASKS:.*]] = arith.minsi
// CHECK: %[[ONE:.*]] = arith.cmpi sle, %[[TASKS]]
// CHECK: scf.if %[[ONE]] {
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.parallel
// CHECK: } else {
// CHECK: %[[GROUP:.*]] = async.create_group
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %[[TASKS]]
// CHECK: %[[TOKEN:.*]] = async.execute {
// CHECK: arith.muli %[[T]]
// CHECK: scf.for
// CHECK: scf.parallel
// CHECK: async.yield
// CHECK: async.add_to_group %[[TOKEN]], %[[GROUP]]
// CHECK: scf.for
// CHECK: async.await_all %[[GROUP]]

// Down to the llvm dialect: each task is an outlined coroutine that hands
// itself to the runtime's thread pool; the caller blocks on the group.
// LLVM: llvm.mlir.global external @dlc_num_threads(0 : i64)
// LLVM-LABEL: llvm.func @scale
// LLVM: llvm.call @mlirAsyncRuntimGetNumWorkerThreads
// LLVM: llvm.call @mlirAsyncRuntimeCreateGroup
// LLVM: llvm.call @async_execute_fn
// LLVM: llvm.call @mlirAsyncRuntimeAddTokenToGroup
// LLVM: llvm.call @mlirAsyncRuntimeAwaitAllInGroup
// LLVM: llvm.func @async_execute_fn({{.*}}) -> !llvm.ptr attributes {passthrough = ["presplitcoroutine"]
// LLVM: llvm.call @mlirAsyncRuntimeExecute
func.func @scale(%a: memref<?x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %0 = memref.load %a[%i, %j] : memref<?x64xf32>
    %1 = arith.mulf %0, %two : f32
    memref.store %1, %a[%i, %j] : memref<?x64xf32>
    scf.reduce
  }
  return
}

// Loops with reductions are left alone.
// CHECK-LABEL: func @total
// CHECK: scf.parallel
// CHECK-NOT: async.execute
func.func @total(%a: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%c64) step (%c1) init (%zero) -> f32 {
    %0 = memref.load %a[%i] : memref<64xf32>
    scf.reduce(%0 : f32) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %y : f32
      scf.reduce.return %s : f32
    }
  }
  return %r : f32
}
