// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-split-function{max-ops=1 early=true})' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-cpu-pipeline{from=bufferized to=affine early-split-ops=1})' | FileCheck %s --check-prefix=TILED

// dl-split-function{early}: linalg on memrefs cut before the affine stage.
// The arena (a static allocation) stays in the caller and is passed to each
// part marked dl.fresh_buffer; its views are recomputed in the parts, so
// their byte ranges stay visible. With max-ops=1 a cut is wanted before
// every op, but none is made between a matmul and its fill or its epilogue
// (the ops before and after it that touch its output first).
// CHECK-LABEL: func.func @layers(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x8xf32>, %[[W:[^:]*]]: memref<8x8xf32>, %[[OUT:[^:]*]]: memref<4x8xf32>)
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<256xi8>
// CHECK-NEXT: call @layers_part_0(%[[ARENA]], %[[X]], %[[W]])
// CHECK-NEXT: call @layers_part_1(%[[ARENA]], %[[W]], %[[OUT]])
// CHECK-NEXT: call @layers_part_2(%[[ARENA]])
// CHECK-NEXT: return
// CHECK: func.func private @layers_part_2(%[[A2:[^:]*]]: memref<256xi8> {dl.fresh_buffer}) attributes {dl.split_part
// CHECK-NEXT: memref.dealloc %[[A2]]
// CHECK: func.func private @layers_part_1(%[[A1:[^:]*]]: memref<256xi8> {dl.fresh_buffer}, %{{.*}}: memref<8x8xf32>, %{{.*}}: memref<4x8xf32>) attributes {dl.split_part
// CHECK: memref.view %[[A1]][%{{.*}}][] : memref<256xi8> to memref<4x8xf32>
// CHECK: linalg.fill
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK: func.func private @layers_part_0(%[[A0:[^:]*]]: memref<256xi8> {dl.fresh_buffer}, %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8x8xf32>) attributes {dl.split_part
// CHECK: linalg.fill
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK: return

// In the pipeline, each part's matmul is still a register tile with its
// epilogue (the relu) computed on the tile: dl-affine-register-tile sees
// an arena view of a fresh buffer, as it does in one function.
// TILED-LABEL: func.func @layers(
// TILED: func.func private @layers_part_1({{.*}}dl.fresh_buffer{{.*}}dl.fused_epilogues = 1 : i64
// TILED: func.func private @layers_part_0({{.*}}dl.fresh_buffer{{.*}}dl.fused_epilogues = 1 : i64
#id = affine_map<(i, j) -> (i, j)>
func.func @layers(%x: memref<4x8xf32>, %w: memref<8x8xf32>, %out: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %arena = memref.alloc() {alignment = 64 : i64} : memref<256xi8>
  %t0 = memref.view %arena[%c0][] : memref<256xi8> to memref<4x8xf32>
  %t1 = memref.view %arena[%c128][] : memref<256xi8> to memref<4x8xf32>
  linalg.fill ins(%zero : f32) outs(%t0 : memref<4x8xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%t0 : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t0 : memref<4x8xf32>) outs(%t1 : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%t0 : memref<4x8xf32>)
  linalg.matmul ins(%t1, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%t0 : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t0 : memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %arena : memref<256xi8>
  return
}

// -----

// What stands between an accumulation (a linalg op with reduction loops)
// and its fill, or its epilogue, stays with them: here copies into other
// slots of the arena (disjoint byte ranges); the first cut comes after the
// epilogue.
// CHECK-LABEL: func.func @between(
// CHECK: call @between_part_0(
// CHECK-NEXT: call @between_part_1(
// CHECK-NEXT: return
// CHECK: func.func private @between_part_1(
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
// CHECK: func.func private @between_part_0(
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic {{.*}}"reduction"
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
// A copy whose slot overlaps the output (bytes 16-47 and 0-31) is the last
// op before the accumulation that touches it: the fill is no longer its
// fill, and a cut comes between them.
// CHECK-LABEL: func.func @overlap(
// CHECK: call @overlap_part_0(
// CHECK-NEXT: call @overlap_part_1(
// CHECK: func.func private @overlap_part_1(
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic {{.*}}"reduction"
// CHECK: func.func private @overlap_part_0(
// CHECK: linalg.fill
// CHECK-NEXT: return
// Nor before a later reader of the output (through a view here), up to a
// fill of it (where a cut may come again): dl-affine-register-tile stores
// only the epilogue's result where it sees no later use of the output but
// a fill in its block.
// CHECK-LABEL: func.func @read_later(
// CHECK: call @read_later_part_0(
// CHECK-NEXT: call @read_later_part_1(
// CHECK-NEXT: call @read_later_part_2(
// CHECK-NEXT: return
// CHECK: func.func private @read_later_part_2(
// CHECK: func.func private @read_later_part_1(
// CHECK: linalg.fill
// CHECK-NEXT: return
// CHECK: func.func private @read_later_part_0(
// CHECK: memref.expand_shape
// CHECK: linalg.generic {{.*}}"reduction"
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
// No cut across an allocation of dynamic size, whose memref.dim the affine
// passes relate to its allocation.
// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT: call
// CHECK: return
#id1 = affine_map<(i) -> (i)>
#rows = affine_map<(i, k) -> (i, k)>
#row = affine_map<(i, k) -> (i)>
#grid = affine_map<(i, j) -> (i, j)>
memref.global "private" constant @g : memref<8xf32> = dense<1.0>
func.func @between(%x: memref<8x8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %arena = memref.alloc() : memref<256xi8>
  %t0 = memref.view %arena[%c0][] : memref<256xi8> to memref<8xf32>
  %t1 = memref.view %arena[%c64][] : memref<256xi8> to memref<8xf32>
  %t2 = memref.view %arena[%c128][] : memref<256xi8> to memref<8xf32>
  %g = memref.get_global @g : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%t0 : memref<8xf32>)
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%g : memref<8xf32>) outs(%t1 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x8xf32>) outs(%t0 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%g : memref<8xf32>) outs(%t2 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t0 : memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t1 : memref<8xf32>) outs(%t2 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @overlap(%x: memref<8x8xf32>, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %arena = memref.alloc() : memref<256xi8>
  %t0 = memref.view %arena[%c0][] : memref<256xi8> to memref<8xf32>
  %t1 = memref.view %arena[%c16][] : memref<256xi8> to memref<8xf32>
  %g = memref.get_global @g : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%t0 : memref<8xf32>)
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%g : memref<8xf32>) outs(%t1 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x8xf32>) outs(%t0 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t0 : memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  return
}
func.func @read_later(%x: memref<8x8xf32>, %out: memref<8xf32>, %out2: memref<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %arena = memref.alloc() : memref<256xi8>
  %t0 = memref.view %arena[%c0][] : memref<256xi8> to memref<8xf32>
  %t1 = memref.view %arena[%c64][] : memref<256xi8> to memref<8xf32>
  %t2 = memref.view %arena[%c128][] : memref<256xi8> to memref<8xf32>
  %g = memref.get_global @g : memref<8xf32>
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x8xf32>) outs(%t0 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t0 : memref<8xf32>) outs(%t1 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%g : memref<8xf32>) outs(%t2 : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %grid = memref.expand_shape %t0 [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  linalg.generic {indexing_maps = [#grid, #grid], iterator_types = ["parallel", "parallel"]}
      ins(%grid : memref<2x4xf32>) outs(%out2 : memref<2x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.fill ins(%zero : f32) outs(%t0 : memref<8xf32>)
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%t0 : memref<8xf32>) outs(%out : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}
func.func @dynamic(%x: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : memref<?xf32>) outs(%d : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<?xf32>)
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%d : memref<?xf32>) outs(%out : memref<?xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %d : memref<?xf32>
  return
}
