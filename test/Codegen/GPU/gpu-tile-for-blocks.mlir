// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-gpu-tile-for-blocks{block-size=128}))' | FileCheck %s
// RUN: not dl-opt %s --pass-pipeline='builtin.module(func.func(dl-gpu-tile-for-blocks{block-size=0}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// A 3 x 1000 loop with blocks of 128 threads: the innermost dimension takes
// them all (x), the rows go to blocks along y, one row per block; the inner
// loop is guarded at the edges (no min/max bounds).
// CHECK-LABEL: func @rows
// CHECK: %[[C128:.*]] = arith.constant 128 : index
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %[[C128]]
// CHECK: scf.parallel {{.*}} step (%{{.*}}, %[[STEP]])
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: memref.store
// CHECK: processor = sequential{{.*}}processor = thread_x
// CHECK: processor = block_y{{.*}}processor = block_x
// BAD: error: dl-gpu-tile-for-blocks: block-size must be in 1..1024, but got 0
func.func @rows(%a: memref<3x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c1000 = arith.constant 1000 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c1000) step (%c1, %c1) {
    memref.store %f, %a[%i, %j] : memref<3x1000xf32>
    scf.reduce
  }
  return
}

// -----

// A short innermost dimension (5: 8 threads) leaves the rest of the block to
// the next one (16 along y).
// CHECK-LABEL: func @short
// CHECK-DAG: arith.constant 8 : index
// CHECK-DAG: arith.constant 16 : index
// CHECK: processor = thread_y{{.*}}processor = thread_x
func.func @short(%a: memref<100x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c100 = arith.constant 100 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c100, %c5) step (%c1, %c1) {
    memref.store %f, %a[%i, %j] : memref<100x5xf32>
    scf.reduce
  }
  return
}

// -----

// Four dimensions (an im2col's n x oh x ow x k ...): the outer ones are
// collapsed into one (blocks and threads have three dimensions; an
// unmapped dimension would loop inside every thread), which, having the
// most blocks (dynamic), goes to block x; the two innermost keep the threads
// (3 -> 4 on x, 7 -> 8 on y, 4 left for the collapsed one on z).
// CHECK-LABEL: func @wide
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C7:.*]] = arith.constant 7 : index
// CHECK-DAG: %[[C112:.*]] = arith.constant 112 : index
// CHECK: %[[N:.*]] = memref.dim
// CHECK: %[[ROWS:.*]] = arith.muli %[[N]], %[[C112]]
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[ROWS]], %[[C7]], %[[C3]])
// CHECK: scf.if
// CHECK-DAG: arith.remsi %{{.*}}, %[[C112]]
// CHECK-DAG: arith.divsi %{{.*}}, %[[C112]]
// CHECK: memref.store
// CHECK: processor = thread_z{{.*}}processor = thread_y{{.*}}processor = thread_x
// CHECK: processor = block_x{{.*}}processor = block_z{{.*}}processor = block_y
func.func @wide(%a: memref<?x112x7x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  %c112 = arith.constant 112 : index
  %n = memref.dim %a, %c0 : memref<?x112x7x3xf32>
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%n, %c112, %c7, %c3) step (%c1, %c1, %c1, %c1) {
    memref.store %f, %a[%i, %j, %k, %l] : memref<?x112x7x3xf32>
    scf.reduce
  }
  return
}
