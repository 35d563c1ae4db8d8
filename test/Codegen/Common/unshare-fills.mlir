// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-unshare-fills))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-unshare-fills),eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries},cse,canonicalize)' | FileCheck %s --check-prefix=BUF

// One zero fill shared by two matmuls (as CSE leaves it): each gets its own,
// so that bufferization fills two buffers instead of filling one and
// copying it into the other. The first in program order keeps the original;
// the second's fill, and the empty tensor it fills, come just before it, so
// that its buffer is allocated there (a training step's backward
// convolution shared its zero fill with a forward one: its buffer lived
// across the whole step).
// CHECK-LABEL: func @shared_fill
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill {{.*}} outs(%[[E1]] :
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[F1]] :
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill {{.*}} outs(%[[E2]] :
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[F2]] :
// BUF-LABEL: func @shared_fill
// BUF-NOT: memref.copy
// BUF: return
func.func @shared_fill(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = linalg.matmul ins(%a, %c : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A zero pad of a computed tensor: fill + insert_slice, and after
// eliminate-empty-tensors the producer writes into the padded buffer's
// interior (a subview), with no copy.
// CHECK-LABEL: func @pad_of_producer
// CHECK-NOT: tensor.pad
// CHECK: linalg.fill
// CHECK: tensor.insert_slice
// BUF-LABEL: func @pad_of_producer
// BUF: %[[PADDED:.*]] = memref.alloc() {{.*}} : memref<1x6x6x4xf32>
// BUF: linalg.fill {{.*}} outs(%[[PADDED]]
// BUF: %[[INTERIOR:.*]] = memref.subview %[[PADDED]][0, 1, 1, 0] [1, 4, 4, 4] [1, 1, 1, 1]
// BUF: linalg.generic {{.*}} outs(%[[INTERIOR]] :
// BUF-NOT: memref.copy
// BUF: return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pad_of_producer(%x: tensor<1x4x4x4xf32>) -> tensor<1x6x6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x4xf32>) outs(%e : tensor<1x4x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x4xf32>
  %p = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x4xf32> to tensor<1x6x6x4xf32>
  return %p : tensor<1x6x6x4xf32>
}

// -----

// A fill with one use is left alone.
// CHECK-LABEL: func @single_use
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @single_use(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A fill also read as an input keeps serving the reader; each destination
// gets its own fill.
// CHECK-LABEL: func @fill_also_read
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT: linalg.fill
// CHECK: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @fill_also_read(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%f : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}
