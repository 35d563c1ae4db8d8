// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-plan-memory))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-plan-memory{report}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Three 4 KiB temporaries in a chain: %a is dead once %b is computed, so %c
// takes %a's bytes. Two 4 KiB slots instead of three buffers.
// REMARK: remark: dl-plan-memory: 3 temporary buffers, peak 12288 bytes unplanned, 8192 bytes planned
// The tightest point (what any plan must hold at once), with its buffers:
// REMARK: remark: dl-plan-memory: 8192 bytes of 2 buffers live here, the most at any point
// REMARK: note: 4096 bytes 'memref<32x32xf32>', live from op 1 to op 4
// REMARK: note: 4096 bytes 'memref<32x32xf32>', live from op 3 to op 6
// CHECK-LABEL: func.func @chain
// CHECK-SAME: dl.memory_plan = {buffers = 3 : i64, peak_bytes = 8192 : i64, unplanned_peak_bytes = 12288 : i64}
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%c0][] : memref<8192xi8> to memref<32x32xf32>
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%c4096][] : memref<8192xi8> to memref<32x32xf32>
// CHECK: linalg.matmul ins(%[[A]], %arg0 {{.*}} outs(%[[B]]
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%c0_{{[0-9]+}}][] : memref<8192xi8> to memref<32x32xf32>
// CHECK: linalg.matmul ins(%[[B]], %arg0 {{.*}} outs(%[[C]]
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: memref.dealloc %[[ARENA]]
// CHECK-NEXT: return %[[R:.*]] :
func.func @chain(%w: memref<32x32xf32>) -> memref<32x32xf32> {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<32x32xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%a, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%b : memref<32x32xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%b, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%c : memref<32x32xf32>)
  %r = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%c, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%r : memref<32x32xf32>)
  memref.dealloc %a : memref<32x32xf32>
  memref.dealloc %b : memref<32x32xf32>
  memref.dealloc %c : memref<32x32xf32>
  return %r : memref<32x32xf32>
}

// -----

// Left alone: buffers live at the same time (both read by the last op),
// a returned buffer, one passed to a call, and a dynamically shaped one.
// REMARK: remark: dl-plan-memory: 2 temporary buffers, peak 8192 bytes unplanned, 8192 bytes planned (nothing to share)
// CHECK-LABEL: func.func @refused
// CHECK-NOT: memref.view
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
// CHECK: call @external
// CHECK: memref.alloc(%arg1) : memref<?x32xf32>
func.func private @external(memref<32x32xf32>)
func.func @refused(%w: memref<32x32xf32>, %n: index) -> (memref<32x32xf32>, memref<?x32xf32>) {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<32x32xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<32x32xf32>)
  %r = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%a, %b : memref<32x32xf32>, memref<32x32xf32>) outs(%r : memref<32x32xf32>)
  %e = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  call @external(%e) : (memref<32x32xf32>) -> ()
  %d = memref.alloc(%n) : memref<?x32xf32>
  memref.dealloc %a : memref<32x32xf32>
  memref.dealloc %b : memref<32x32xf32>
  memref.dealloc %e : memref<32x32xf32>
  return %r, %d : memref<32x32xf32>, memref<?x32xf32>
}

// -----

// apply=false only measures: the buffers stay, the attribute says
// peak_bytes = unplanned_peak_bytes.
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-plan-memory{apply=false}))' | FileCheck %s --check-prefix=MEASURE
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-plan-memory{search-tries=0}))' | FileCheck %s --check-prefix=GREEDY
// MEASURE-LABEL: func.func @chain
// MEASURE-SAME: dl.memory_plan = {buffers = 3 : i64, peak_bytes = 12288 : i64, unplanned_peak_bytes = 12288 : i64}
// MEASURE-NOT: memref.view

// -----

// A matmul followed by an elementwise op (which dl-affine-register-tile
// computes inside the matmul's tiles): the matmul's input %a stays live
// through the elementwise op, so the op's output %d may not take %a's bytes
// (three slots, nothing shared). When the next op is another matmul, %a's
// lifetime ends at its own matmul and %d takes its bytes (two slots).
// CHECK-LABEL: func.func @epilogue_keeps_inputs
// CHECK-SAME: dl.memory_plan = {buffers = 3 : i64, peak_bytes = 12288 : i64, unplanned_peak_bytes = 12288 : i64}
// CHECK-NOT: memref.view
// CHECK-LABEL: func.func @matmul_then_matmul
// CHECK-SAME: dl.memory_plan = {buffers = 3 : i64, peak_bytes = 8192 : i64, unplanned_peak_bytes = 12288 : i64}
func.func @epilogue_keeps_inputs(%w: memref<32x32xf32>) -> memref<32x32xf32> {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<32x32xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%a, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%c : memref<32x32xf32>)
  %d = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : memref<32x32xf32>) outs(%d : memref<32x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  }
  %r = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%d, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%r : memref<32x32xf32>)
  memref.dealloc %a : memref<32x32xf32>
  memref.dealloc %c : memref<32x32xf32>
  memref.dealloc %d : memref<32x32xf32>
  return %r : memref<32x32xf32>
}

func.func @matmul_then_matmul(%w: memref<32x32xf32>) -> memref<32x32xf32> {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<32x32xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%a, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%c : memref<32x32xf32>)
  %d = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%c, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%d : memref<32x32xf32>)
  %r = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%d, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%r : memref<32x32xf32>)
  memref.dealloc %a : memref<32x32xf32>
  memref.dealloc %c : memref<32x32xf32>
  memref.dealloc %d : memref<32x32xf32>
  return %r : memref<32x32xf32>
}

// -----

// A dynamic quantization's order: the matmul, then an elementwise nest that
// does not read its output (the zero point's correction %z), then the
// elementwise op that does (the one the tiles compute): %a stays live
// through that op, so %d may not take %a's bytes either (nothing shared:
// 3 x 4096 + 128 bytes).
// CHECK-LABEL: func.func @epilogue_past_correction
// CHECK-SAME: dl.memory_plan = {buffers = 4 : i64, peak_bytes = 12416 : i64, unplanned_peak_bytes = 12416 : i64}
// CHECK-NOT: memref.view
func.func @epilogue_past_correction(%w: memref<32x32xf32>, %zp: memref<32xf32>) -> memref<32x32xf32> {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<32x32xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%a, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%c : memref<32x32xf32>)
  %z = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
  linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>], iterator_types = ["parallel"]} ins(%zp : memref<32xf32>) outs(%z : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %cst : f32
    linalg.yield %m : f32
  }
  %d = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c, %z : memref<32x32xf32>, memref<32xf32>) outs(%d : memref<32x32xf32>) {
  ^bb0(%in: f32, %k: f32, %out: f32):
    %m = arith.subf %in, %k : f32
    linalg.yield %m : f32
  }
  %r = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.matmul ins(%d, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%r : memref<32x32xf32>)
  memref.dealloc %a : memref<32x32xf32>
  memref.dealloc %c : memref<32x32xf32>
  memref.dealloc %z : memref<32xf32>
  memref.dealloc %d : memref<32x32xf32>
  return %r : memref<32x32xf32>
}

// -----

// Five buffers whose lifetimes interleave (positions 0-13: D 0-5, E 2-9,
// C 3-7, B 8-12, A 11-13; 64, 64, 128, 64 and 192 bytes). At most 256 bytes
// are live at once, but first fit, largest first, leaves a hole under A and
// needs 320; the local search (random swaps of the order, fixed seed) finds
// a 256-byte plan. search-tries=0 keeps the greedy plan.
// CHECK-LABEL: func.func @fragments
// CHECK-SAME: dl.memory_plan = {buffers = 5 : i64, peak_bytes = 256 : i64, unplanned_peak_bytes = 512 : i64}
// GREEDY-LABEL: func.func @fragments
// GREEDY-SAME: peak_bytes = 320 : i64
func.func @fragments(%x: memref<16xf32>) {
  %cst = arith.constant 1.0 : f32
  %d = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.fill ins(%cst : f32) outs(%x : memref<16xf32>)
  %e = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<32xf32>
  linalg.fill ins(%cst : f32) outs(%x : memref<16xf32>)
  linalg.fill ins(%cst : f32) outs(%d : memref<16xf32>)
  linalg.fill ins(%cst : f32) outs(%x : memref<16xf32>)
  linalg.fill ins(%cst : f32) outs(%c : memref<32xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  linalg.fill ins(%cst : f32) outs(%e : memref<16xf32>)
  linalg.fill ins(%cst : f32) outs(%x : memref<16xf32>)
  %a = memref.alloc() {alignment = 64 : i64} : memref<48xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<16xf32>)
  linalg.fill ins(%cst : f32) outs(%a : memref<48xf32>)
  memref.dealloc %a : memref<48xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %c : memref<32xf32>
  memref.dealloc %d : memref<16xf32>
  memref.dealloc %e : memref<16xf32>
  return
}
