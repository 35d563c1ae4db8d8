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

// A zero pad of a computed tensor of static sizes: only the border of an
// empty tensor filled (top and bottom rows, then the left and right columns
// between them: each border element once), then the source inserted (last,
// as upstream's fill + insert: nothing writes the buffer after the source's
// value while a later op may still read it). After eliminate-empty-tensors
// the producer writes into the padded buffer's interior (a subview), with
// no copy, and nothing writes the interior twice.
// CHECK-LABEL: func @pad_of_producer
// CHECK-NOT: tensor.pad
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x6x6x4xf32>
// CHECK: %[[T:.*]] = linalg.fill {{.*}} -> tensor<1x1x6x4xf32>
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[T]] into %[[E]][0, 0, 0, 0] [1, 1, 6, 4]
// CHECK: %[[B:.*]] = linalg.fill {{.*}} -> tensor<1x1x6x4xf32>
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[B]] into %[[I1]][0, 5, 0, 0] [1, 1, 6, 4]
// CHECK: %[[L:.*]] = linalg.fill {{.*}} -> tensor<1x4x1x4xf32>
// CHECK: %[[I3:.*]] = tensor.insert_slice %[[L]] into %[[I2]][0, 1, 0, 0] [1, 4, 1, 4]
// CHECK: %[[R:.*]] = linalg.fill {{.*}} -> tensor<1x4x1x4xf32>
// CHECK: %[[I4:.*]] = tensor.insert_slice %[[R]] into %[[I3]][0, 1, 5, 0] [1, 4, 1, 4]
// CHECK: %[[I:.*]] = tensor.insert_slice %{{.*}} into %[[I4]][0, 1, 1, 0] [1, 4, 4, 4] [1, 1, 1, 1]
// CHECK: return %[[I]]
// BUF-LABEL: func @pad_of_producer
// BUF: %[[PADDED:.*]] = memref.alloc() {{.*}} : memref<1x6x6x4xf32>
// BUF-NOT: linalg.fill {{.*}} outs(%[[PADDED]]
// BUF-COUNT-4: linalg.fill {{.*}} outs(%{{.*}} : memref<1x{{[14]}}x{{[16]}}x4xf32, strided
// BUF: %[[INTERIOR:.*]] = memref.subview %[[PADDED]][0, 1, 1, 0] [1, 4, 4, 4] [1, 1, 1, 1]
// BUF: linalg.generic {{.*}} outs(%[[INTERIOR]] :
// BUF-NOT: memref.copy
// BUF-NOT: linalg.fill
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

// -----

// Padding on one side only, and a value made inside the pad's body (moved
// out before it): one slab. Negative-free low/high of zero give none.
// CHECK-LABEL: func @pad_one_side
// CHECK: %[[V:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[V]] : f32) {{.*}} -> tensor<2x3x2xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 5] [2, 3, 2] [1, 1, 1]
// CHECK-NOT: linalg.fill
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [2, 3, 5] [1, 1, 1]
// CHECK: return
func.func @pad_one_side(%x: tensor<2x3x5xf32>) -> tensor<2x3x7xf32> {
  %p = tensor.pad %x low[0, 0, 0] high[0, 0, 2] {
  ^bb0(%i: index, %j: index, %k: index):
    %ninf = arith.constant 0xFF800000 : f32
    tensor.yield %ninf : f32
  } : tensor<2x3x5xf32> to tensor<2x3x7xf32>
  return %p : tensor<2x3x7xf32>
}

// -----

// Refused: a dynamic size, or a padding value computed from the indices:
// upstream's decomposition (the whole tensor filled or generated, then the
// source inserted).
// CHECK-LABEL: func @pad_refused
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x6xf32>
// CHECK: %[[F:.*]] = linalg.fill {{.*}} outs(%[[E]] : tensor<?x6xf32>)
// CHECK: tensor.insert_slice %{{.*}} into %[[F]]
// CHECK: %[[G:.*]] = tensor.generate
// CHECK: tensor.insert_slice %{{.*}} into %[[G]][0, 1] [3, 4] [1, 1]
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @pad_refused(%x: tensor<?x4xf32>, %y: tensor<3x4xf32>) -> (tensor<?x6xf32>, tensor<3x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<?x4xf32> to tensor<?x6xf32>
  %q = tensor.pad %y low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    %c = arith.index_cast %j : index to i32
    %v = arith.sitofp %c : i32 to f32
    tensor.yield %v : f32
  } : tensor<3x4xf32> to tensor<3x6xf32>
  return %p, %q : tensor<?x6xf32>, tensor<3x6xf32>
}

// -----

// The pad's source also read after the pad (a residual add, as MobileNetV3's
// blocks): the producer still writes into the padded buffer's interior and
// the add reads it there, with no copy (border slabs written after the
// source made one-shot bufferization copy it out of place).
// BUF-LABEL: func @pad_source_read_later
// BUF: %[[PADDED:.*]] = memref.alloc() {{.*}} : memref<1x6x6x4xf32>
// BUF-COUNT-4: linalg.fill
// BUF: %[[INTERIOR:.*]] = memref.subview %[[PADDED]][0, 1, 1, 0] [1, 4, 4, 4] [1, 1, 1, 1]
// BUF: linalg.generic {{.*}} outs(%[[INTERIOR]] :
// BUF: linalg.generic {{.*}} ins(%[[INTERIOR]], %{{.*}} :
// BUF-NOT: memref.copy
// BUF: return
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pad_source_read_later(%x: tensor<1x4x4x4xf32>) -> (tensor<1x6x6x4xf32>, tensor<1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x4x4xf32>) outs(%e : tensor<1x4x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x4xf32>
  %p = tensor.pad %r low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x4x4xf32> to tensor<1x6x6x4xf32>
  %e2 = tensor.empty() : tensor<1x4x4x4xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r, %x : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) outs(%e2 : tensor<1x4x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %t = arith.addf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<1x4x4x4xf32>
  return %p, %s : tensor<1x6x6x4xf32>, tensor<1x4x4x4xf32>
}
