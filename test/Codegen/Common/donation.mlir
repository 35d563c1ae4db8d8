// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-donate-destinations))' | FileCheck %s --check-prefix=TENSOR
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-donate-destinations),one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},func.func(dl-return-donated))' | FileCheck %s --check-prefix=BUFFER

// An update p - lr * g of a donated argument: computed into the argument
// (its destination), which is marked writable, the other not; after
// bufferization the result is the argument's buffer itself and leaves the
// results.
// TENSOR-LABEL: func.func @sgd
// TENSOR-SAME: (%[[P:arg0]]: tensor<4xf32> {bufferization.writable = true}, %[[G:arg1]]: tensor<4xf32> {bufferization.writable = false},
// TENSOR: linalg.generic {{.*}} ins(%[[P]], %[[G]] : tensor<4xf32>, tensor<4xf32>) outs(%[[P]] : tensor<4xf32>)
// BUFFER-LABEL: func.func @sgd
// BUFFER-SAME: (%[[P:arg0]]: memref<4xf32>, %[[G:arg1]]: memref<4xf32>, %{{.*}}: memref<f32>) -> memref<f32>
// BUFFER-NOT: memref.alloc() {{.*}} : memref<4xf32>
// BUFFER: linalg.generic {{.*}} outs(%[[P]] : memref<4xf32>)
// BUFFER-NOT: memref.copy
// BUFFER: return %{{.*}} : memref<f32>
func.func @sgd(%p: tensor<4xf32>, %g: tensor<4xf32>, %loss: tensor<f32>) -> (tensor<4xf32>, tensor<f32>) attributes {dl.donate = array<i64: 0, -1>} {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %c = arith.constant 0.5 : f32
    %m = arith.mulf %b, %c : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %loss : tensor<4xf32>, tensor<f32>
}

// -----

// The old value is still read after the update (it is returned too): the
// update cannot go in place; bufferization computes it into a new buffer,
// which is copied into the argument at the return, after the returned old
// value was copied out of it.
// BUFFER-LABEL: func.func @old_value_returned
// BUFFER-SAME: (%[[P:arg0]]: memref<4xf32>) -> memref<4xf32>
// BUFFER: %[[NEW:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// BUFFER: linalg.generic {{.*}} outs(%[[NEW]] : memref<4xf32>)
// BUFFER: %[[OLD:.*]] = memref.alloc() : memref<4xf32>
// BUFFER: memref.copy %[[P]], %[[OLD]]
// BUFFER: memref.copy %[[NEW]], %[[P]]
// BUFFER: return %[[OLD]] : memref<4xf32>
func.func @old_value_returned(%p: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {dl.donate = array<i64: 0, -1>} {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r, %p : tensor<4xf32>, tensor<4xf32>
}

// -----

// Two donated arguments returned swapped: neither result is computed, both
// are written back at the return, from snapshots taken before either write.
// BUFFER-LABEL: func.func @swap
// BUFFER-SAME: (%[[A:arg0]]: memref<3xf32>, %[[B:arg1]]: memref<3xf32>) attributes
// BUFFER: %[[SB:.*]] = memref.alloc() : memref<3xf32>
// BUFFER: memref.copy %[[B]], %[[SB]]
// BUFFER: %[[SA:.*]] = memref.alloc() : memref<3xf32>
// BUFFER: memref.copy %[[A]], %[[SA]]
// BUFFER: memref.copy %[[SB]], %[[A]]
// BUFFER: memref.copy %[[SA]], %[[B]]
// BUFFER: return
func.func @swap(%a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) attributes {dl.donate = array<i64: 0, 1>} {
  return %b, %a : tensor<3xf32>, tensor<3xf32>
}

// -----

// An accumulation (its destination read) and functions without dl.donate
// are left alone.
// TENSOR-LABEL: func.func @accumulates
// TENSOR: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x2xf32>, tensor<2x2xf32>) outs(%[[F:.*]] : tensor<2x2xf32>)
// TENSOR-LABEL: func.func @plain
// TENSOR-SAME: (%{{.*}}: tensor<2xf32>) -> tensor<2xf32>
func.func @accumulates(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> attributes {dl.donate = array<i64: 0>} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m : tensor<2x2xf32>
}
func.func @plain(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}

