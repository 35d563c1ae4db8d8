// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-outline-parallel,convert-scf-to-cf,finalize-memref-to-llvm,convert-func-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts,dl-lower-parallel-launch)' | FileCheck %s

// dl-lower-parallel-launch's table for dlc.profile: each body's name says
// the first file location inside its loop's location (a fused or name
// location too), or the body alone where the loop has no file location.
// CHECK-LABEL: llvm.func @located(
// A name location convert-dl-to-linalg gave the dl op (one starting with
// "dl.") follows after " | "; other names are not ops.
// CHECK: llvm.mlir.global internal constant @dlc_parallel_regions_name_0("located_parallel_3 | dl.relu 8\00")
// CHECK: llvm.mlir.global internal constant @dlc_parallel_regions_name_1("located_parallel_2 timm/layers/norm_act.py:136 | dl.conv2d 3x3/2 g8 1x8x8x8 -> 1x4x4x8\00")
// CHECK: llvm.mlir.global internal constant @dlc_parallel_regions_name_2("located_parallel_1 timm/models/vit.py:88\00")
// CHECK: llvm.mlir.global internal constant @dlc_parallel_regions_name_3("located_parallel_0\00")
// CHECK: llvm.mlir.global external constant @dlc_parallel_region_count(4 : i64)
func.func @located(%a: memref<8xf32>, %b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %a[%i] : memref<8xf32>
    scf.reduce
  } loc(unknown)
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %b[%i] : memref<16xf32>
    scf.reduce
  } loc(fused["attention", "timm/models/vit.py":88:9])
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %two, %b[%i] : memref<16xf32>
    scf.reduce
  } loc("dl.conv2d 3x3/2 g8 1x8x8x8 -> 1x4x4x8"("timm/layers/norm_act.py":136:20))
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %two, %a[%i] : memref<8xf32>
    scf.reduce
  } loc("dl.relu 8")
  return
}

// -----

// No parallel loop: no table (and no runtime declaration).
// CHECK-LABEL: llvm.func @serial(
// CHECK-NOT: dlc_parallel
func.func @serial(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %a[%c0] : memref<8xf32>
  return
}
