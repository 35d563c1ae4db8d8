// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-gpu-parallel-outer))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-gpu-parallel-outer,convert-linalg-to-parallel-loops))' | FileCheck %s --check-prefix=LOOPS

// A channels-last global average pool reduces h and w between n and c: its
// loops become (n, c, h, w), the maps permuted to match, so that both
// parallel loops are one scf.parallel (mapped to threads) and the reductions
// run inside it.
// CHECK: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// CHECK: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-LABEL: func @pool_nhwc
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// LOOPS-LABEL: func @pool_nhwc
// LOOPS: scf.parallel (%{{.*}}, %{{.*}}) =
// LOOPS: scf.for
// LOOPS: scf.for
// LOOPS-NOT: scf.parallel
// LOOPS: return
func.func @pool_nhwc(%x: memref<?x7x7x512xf32>, %s: memref<?x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%x : memref<?x7x7x512xf32>) outs(%s : memref<?x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %b, %a : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// linalg.index follows its loop to the new position.
// CHECK-DAG: #[[NEW0:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[NEW1:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @index_follows
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: %[[ROW:.*]] = affine.apply #[[NEW1]](
// CHECK: %[[COL:.*]] = affine.apply #[[NEW0]](
// CHECK: arith.index_cast %[[ROW]]
// CHECK: arith.index_cast %[[COL]]
func.func @index_follows(%x: memref<5x8xf32>, %s: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<5x8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    %ri = arith.index_cast %r : index to i64
    %ci = arith.index_cast %c : index to i64
    %p = arith.muli %ri, %ci : i64
    %f = arith.sitofp %p : i64 to f32
    %m = arith.mulf %a, %f : f32
    %t = arith.addf %b, %m : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// A named op reducing before a parallel loop is generalized, then
// interchanged: linalg.reduce over the rows of a matrix.
// CHECK-LABEL: func @named_reduce
// CHECK-NOT: linalg.reduce
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
func.func @named_reduce(%x: memref<5x8xf32>, %s: memref<8xf32>) {
  linalg.reduce ins(%x : memref<5x8xf32>) outs(%s : memref<8xf32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    }
  return
}

// -----

// Refused: ops whose parallel loops are already outermost (a row sum, a
// matmul, an elementwise op) keep their form, named ops included; a
// reduction inside a scalar kernel's scf.parallel is not mapped and stays.
// CHECK: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @already_outer
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK: linalg.matmul
// CHECK: iterator_types = ["reduction", "parallel"]
func.func @already_outer(%x: memref<5x8xf32>, %s: memref<5xf32>, %a: memref<4x5xf32>, %b: memref<5x6xf32>, %c: memref<4x6xf32>, %t: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<5x8xf32>) outs(%s : memref<5xf32>) {
  ^bb0(%p: f32, %q: f32):
    %u = arith.addf %q, %p : f32
    linalg.yield %u : f32
  }
  linalg.matmul ins(%a, %b : memref<4x5xf32>, memref<5x6xf32>) outs(%c : memref<4x6xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<5x8xf32>) outs(%t : memref<8xf32>) {
    ^bb0(%p: f32, %q: f32):
      %u = arith.addf %q, %p : f32
      linalg.yield %u : f32
    }
    scf.reduce
  }
  return
}
