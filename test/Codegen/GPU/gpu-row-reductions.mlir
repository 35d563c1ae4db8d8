// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-gpu-row-reductions))' | FileCheck %s

// A layer norm's centred sum and sum of squares along its rows of 768: one
// block of 256 threads per row (the blocks delinearized into the two
// parallel loops), each thread striding along the row, then a tree in
// workgroup memory (one buffer per output: 128, 64, ..., 1 between barriers),
// and thread 0 adds each total into its output.
// CHECK-LABEL: func @layer_norm_sums
// CHECK-NOT: linalg.generic
// CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %c128 : index
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ROWS]], %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1) workgroup(%[[S0:.*]] : memref<256xf32, #gpu.address_space<workgroup>>, %[[S1:.*]] : memref<256xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[J:.*]] = arith.remui %[[B]], %c128
// CHECK: %[[I:.*]] = arith.divui %[[B]], %c128
// CHECK: %[[P:.*]]:2 = scf.for %[[K:[a-z0-9_]+]] = %[[T]] to %{{.*}} step %c256 iter_args(%[[A0:.*]] = %cst{{.*}}, %[[A1:.*]] = %cst{{.*}})
// CHECK: memref.load %{{.*}}[%[[I]], %[[J]], %[[K]]]
// CHECK: arith.subf
// CHECK: arith.addf %[[A0]]
// CHECK: arith.mulf
// CHECK: arith.addf %[[A1]]
// CHECK: memref.store %[[P]]#0, %[[S0]][%[[T]]]
// CHECK: memref.store %[[P]]#1, %[[S1]][%[[T]]]
// CHECK-NEXT: gpu.barrier
// CHECK: arith.cmpi ult, %[[T]], %c128
// CHECK: gpu.barrier
// CHECK: arith.cmpi ult, %[[T]], %c1
// CHECK: gpu.barrier
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %[[ZERO:c0.*]] :
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[OLD:.*]] = memref.load %arg2[%[[I]], %[[J]]]
// CHECK: %[[TOTAL:.*]] = memref.load %[[S0]][%[[ZERO]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK: memref.store %[[SUM]], %arg2[%[[I]], %[[J]]]
// CHECK: gpu.terminator
func.func @layer_norm_sums(%x: memref<?x128x768xf32>, %m: memref<?x128xf32>, %s: memref<?x128xf32>, %q: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %m : memref<?x128x768xf32>, memref<?x128xf32>) outs(%s, %q : memref<?x128xf32>, memref<?x128xf32>) {
  ^bb0(%in: f32, %mean: f32, %o1: f32, %o2: f32):
    %d = arith.subf %in, %mean : f32
    %a = arith.addf %o1, %d : f32
    %sq = arith.mulf %d, %d : f32
    %b = arith.addf %o2, %sq : f32
    linalg.yield %a, %b : f32, f32
  }
  return
}

// -----

// A named reduction (a softmax's row max over 100 elements) is generalized:
// 128 threads, the partial maxima start at -inf and combine with maximumf.
// CHECK-LABEL: func @row_max
// CHECK-NOT: linalg.reduce
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c128, {{.*}} workgroup(%{{.*}} : memref<128xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[NEGINF]])
// CHECK: arith.maximumf {{.*}}%[[ACC]]
// CHECK: arith.maximumf
// CHECK: arith.maximumf
func.func @row_max(%x: memref<4x100xf32>, %m: memref<4xf32>) {
  linalg.reduce { arith.maximumf } ins(%x : memref<4x100xf32>) outs(%m : memref<4xf32>) dimensions = [1]
  return
}

// -----

// A full reduction over two loops (the sum of a whole 64 x 48 tensor): one
// block, the linear reduced index delinearized for the loads, linalg.index
// mapped to it.
// CHECK-LABEL: func @full_sum
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, {{.*}} threads({{.*}}) in (%{{.*}} = %c256,
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK: %[[C:.*]] = arith.remui %[[K]], %c48
// CHECK: %[[R:.*]] = arith.divui %[[K]], %c48
// CHECK: memref.load %{{.*}}[%[[R]], %[[C]]]
// CHECK: arith.index_cast %[[C]]
func.func @full_sum(%x: memref<64x48xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : memref<64x48xf32>) outs(%s : memref<f32>) {
  ^bb0(%a: f32, %b: f32):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i32
    %cf = arith.sitofp %ci : i32 to f32
    %m = arith.mulf %a, %cf : f32
    %t = arith.addf %b, %m : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Refused, each left to the parallel-loop path:
// - a reduction across the contiguous dimension (a channels-last pool: its
//   parallel loop c is the inputs' last index);
// - a row of fewer than 32 elements;
// - a combiner the tree cannot reassociate as written (a product: mulf);
// - a body that reads the running output other than through its combiner;
// - a reduction of integers;
// - parallel loops below a reduction (dl-gpu-parallel-outer's job first);
// - a contraction (a matmul whose batch broadcasts, which the matmul kernels
//   refused: a block per output element would read A and B once per output).
// CHECK-LABEL: func @refused
// CHECK-NOT: gpu.launch
// CHECK-COUNT-7: linalg.generic
// CHECK-NOT: gpu.launch
func.func @refused(%x: memref<2x7x7x512xf32>, %p: memref<2x512xf32>, %y: memref<4x16xf32>, %r: memref<4xf32>, %z: memref<4x64xf32>, %w: memref<4xf32>, %i: memref<4x64xi32>, %iw: memref<4xi32>, %u: memref<64x4xf32>, %v: memref<4xf32>, %ba: memref<1x3x17x40xf32>, %bb: memref<2x3x40x9xf32>, %bc: memref<2x3x17x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%ba, %bb : memref<1x3x17x40xf32>, memref<2x3x40x9xf32>) outs(%bc : memref<2x3x17x9xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %c, %m : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : memref<2x7x7x512xf32>) outs(%p : memref<2x512xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %b, %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%y : memref<4x16xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %b, %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%z : memref<4x64xf32>) outs(%w : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.mulf %b, %a : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%z : memref<4x64xf32>) outs(%w : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    %t = arith.addf %b, %s : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%i : memref<4x64xi32>) outs(%iw : memref<4xi32>) {
  ^bb0(%a: i32, %b: i32):
    %t = arith.addi %b, %a : i32
    linalg.yield %t : i32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%u : memref<64x4xf32>) outs(%v : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %b, %a : f32
    linalg.yield %t : f32
  }
  return
}
