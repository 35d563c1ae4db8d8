// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-memref-copy-to-linalg))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-memref-copy-to-linalg{all=true}))' | FileCheck %s --check-prefix=ALL

// A copy out of a strided buffer becomes a linalg.copy (a loop nest the CPU
// pipeline vectorizes), instead of the runtime's element-by-element
// memrefCopy.
// CHECK-LABEL: func @strided
// CHECK: linalg.copy ins(%{{.*}} : memref<4x8xf32, strided<[16, 1]>>) outs(%{{.*}} : memref<4x8xf32>)
// CHECK-NOT: memref.copy
// ALL-LABEL: func @strided
// ALL: linalg.copy
func.func @strided(%a: memref<4x8xf32, strided<[16, 1]>>, %b: memref<4x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32>
  return
}

// -----

// Contiguous buffers keep memref.copy (a memcpy), unless all=true (the GPU
// pipeline: every copy a kernel).
// CHECK-LABEL: func @contiguous
// CHECK: memref.copy
// CHECK-NOT: linalg.copy
// ALL-LABEL: func @contiguous
// ALL: linalg.copy
// ALL-NOT: memref.copy
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// Unranked buffers have no linalg.copy: left alone either way.
// CHECK-LABEL: func @unranked
// CHECK: memref.copy
// ALL-LABEL: func @unranked
// ALL: memref.copy
func.func @unranked(%a: memref<*xf32>, %b: memref<*xf32>) {
  memref.copy %a, %b : memref<*xf32> to memref<*xf32>
  return
}
