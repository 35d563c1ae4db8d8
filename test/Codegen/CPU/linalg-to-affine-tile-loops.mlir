// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-linalg-to-affine-loops))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-linalg-to-affine-loops,dl-affine-parallelize{min-work=1}))' | FileCheck %s --check-prefix=PAR

// A tile loop of dl-fuse-attention after bufferization: an scf.forall with
// constant bounds becomes an affine.parallel, so that its induction
// variables index the nests inside as affine dims. The nests inside stay
// sequential under dl-affine-parallelize (the tile loop is the parallel one).
func.func @tiles(%x: memref<4x96x32xf32>, %y: memref<4x96x32xf32>) {
  scf.forall (%h, %i) = (0, 0) to (4, 96) step (1, 24) {
    %in = memref.subview %x[%h, %i, 0] [1, 24, 32] [1, 1, 1] : memref<4x96x32xf32> to memref<1x24x32xf32, strided<[3072, 32, 1], offset: ?>>
    %out = memref.subview %y[%h, %i, 0] [1, 24, 32] [1, 1, 1] : memref<4x96x32xf32> to memref<1x24x32xf32, strided<[3072, 32, 1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%in : memref<1x24x32xf32, strided<[3072, 32, 1], offset: ?>>) outs(%out : memref<1x24x32xf32, strided<[3072, 32, 1], offset: ?>>) {
    ^bb0(%a: f32, %b: f32):
      %0 = math.exp %a : f32
      linalg.yield %0 : f32
    }
  }
  return
}
// CHECK-LABEL: func.func @tiles
// CHECK-NOT:     scf.forall
// CHECK:         affine.parallel (%[[H:.*]], %[[I:.*]]) = (0, 0) to (4, 96) step (1, 24) {
// CHECK:           memref.subview %{{.*}}[%[[H]], %[[I]], 0]
// CHECK:           affine.for %{{.*}} = 0 to 1 {
// CHECK:             affine.for %{{.*}} = 0 to 24 {
// CHECK:               math.exp
// PAR-LABEL:   func.func @tiles
// PAR:           affine.parallel (%{{.*}}, %{{.*}}) = (0, 0) to (4, 96) step (1, 24) {
// PAR-NOT:         affine.parallel
// PAR:             affine.for
// PAR:           return

// -----

// A partial last tile (its rows an affine.min of the induction variable,
// which is not a valid affine dim): the loop inside is bounded by the min's
// map itself.
#min = affine_map<(d0) -> (-d0 + 100, 24)>
func.func @partial(%x: memref<100x8xf32>, %y: memref<100x8xf32>) {
  scf.forall (%i) = (0) to (100) step (24) {
    %n = affine.min #min(%i)
    %in = memref.subview %x[%i, 0] [%n, 8] [1, 1] : memref<100x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
    %out = memref.subview %y[%i, 0] [%n, 8] [1, 1] : memref<100x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
    linalg.copy ins(%in : memref<?x8xf32, strided<[8, 1], offset: ?>>) outs(%out : memref<?x8xf32, strided<[8, 1], offset: ?>>)
  }
  return
}
// CHECK-LABEL: func.func @partial
// CHECK:         affine.parallel (%[[I:.*]]) = (0) to (100) step (24) {
// CHECK:           affine.for %{{.*}} = {{.*}} to min #{{.*}}(%[[I]]) {

// -----

// Bounds known only at run time: an scf.parallel (dl-outline-parallel runs
// it on the thread pool), the ops inside still become loops.
func.func @dynamic(%x: memref<?xf32>, %n: index) {
  scf.forall (%i) in (%n) {
    %v = memref.subview %x[%i] [1] [1] : memref<?xf32> to memref<1xf32, strided<[1], offset: ?>>
    %c = arith.constant 1.0 : f32
    linalg.fill ins(%c : f32) outs(%v : memref<1xf32, strided<[1], offset: ?>>)
  }
  return
}
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT:     scf.forall
// CHECK:         scf.parallel
// CHECK:           affine.for
