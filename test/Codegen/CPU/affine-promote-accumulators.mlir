// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-promote-accumulators))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-promote-accumulators,dl-affine-vectorize{vector-width=8}))' | FileCheck %s --check-prefix=VEC

// A batch norm's per-channel sum over [N, C, H, W] (the memory plan's views
// of one arena, disjoint): the accumulator leaves all three reduction loops,
// one load before them and one store after; the W loop then vectorizes with a
// vector accumulator.
// CHECK-LABEL: func.func @channel_sum
// CHECK: affine.for %[[C:.*]] = 0 to 8 {
// CHECK-NEXT: %[[INIT:.*]] = affine.load %{{.*}}[%[[C]]] : memref<8xf32>
// CHECK-NEXT: %[[R:.*]] = affine.for %{{.*}} = 0 to 4 iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// CHECK: affine.for %{{.*}} = 0 to 4 iter_args
// CHECK: affine.for %{{.*}} = 0 to 8 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT: %[[A:.*]] = affine.load %{{.*}} : memref<4x8x4x8xf32>
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[ACC]], %[[A]] : f32
// CHECK-NEXT: affine.yield %[[T]] : f32
// CHECK-NOT: affine.load %{{.*}} : memref<8xf32>
// CHECK: affine.store %[[R]], %{{.*}}[%[[C]]] : memref<8xf32>
// VEC-LABEL: func.func @channel_sum
// VEC: affine.for %{{.*}} = 0 to 8 step 8 iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>) {
// VEC: vector.reduction <add>
func.func @channel_sum(%arena: memref<4128xi8>) {
  %c0 = arith.constant 0 : index
  %c4096 = arith.constant 4096 : index
  %x = memref.view %arena[%c0][] : memref<4128xi8> to memref<4x8x4x8xf32>
  %acc = memref.view %arena[%c4096][] : memref<4128xi8> to memref<8xf32>
  affine.for %c = 0 to 8 {
    affine.for %n = 0 to 4 {
      affine.for %h = 0 to 4 {
        affine.for %w = 0 to 8 {
          %a = affine.load %x[%n, %c, %h, %w] : memref<4x8x4x8xf32>
          %s = affine.load %acc[%c] : memref<8xf32>
          %t = arith.addf %s, %a : f32
          affine.store %t, %acc[%c] : memref<8xf32>
        }
      }
    }
  }
  return
}

// -----

// An argmax's two accumulators (value and index), input and outputs of
// different allocations: both carried; the loop is no vectorizable
// reduction, but the accumulators live in registers.
// CHECK-LABEL: func.func @argmax
// CHECK: %[[V0:.*]] = affine.load %{{.*}} : memref<8xf32>
// CHECK: %[[I0:.*]] = affine.load %{{.*}} : memref<8xi64>
// CHECK: %{{.*}}:2 = affine.for %{{.*}} = 0 to 16 iter_args(%{{.*}} = %[[V0]], %{{.*}} = %[[I0]]) -> (f32, i64) {
// CHECK-NOT: affine.store
// CHECK: affine.yield
// CHECK-DAG: affine.store %{{.*}} : memref<8xf32>
// CHECK-DAG: affine.store %{{.*}} : memref<8xi64>
func.func @argmax(%x: memref<8x16xf32>) -> (memref<8xf32>, memref<8xi64>) {
  %value = memref.alloc() : memref<8xf32>
  %index = memref.alloc() : memref<8xi64>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 16 {
      %a = affine.load %x[%i, %k] : memref<8x16xf32>
      %v = affine.load %value[%i] : memref<8xf32>
      %j = affine.load %index[%i] : memref<8xi64>
      %gt = arith.cmpf ogt, %a, %v : f32
      %kk = arith.index_cast %k : index to i64
      %nv = arith.select %gt, %a, %v : f32
      %nj = arith.select %gt, %kk, %j : i64
      affine.store %nv, %value[%i] : memref<8xf32>
      affine.store %nj, %index[%i] : memref<8xi64>
    }
  }
  return %value, %index : memref<8xf32>, memref<8xi64>
}

// -----

// Left in memory: views of one arena that overlap; two function arguments
// (the caller may pass one buffer twice); a call in the loop; a load after
// the store (it reads this iteration's value); an address that varies with
// the loop; two stores to the accumulator.
// CHECK-LABEL: func.func @refused
// CHECK-NOT: iter_args
// CHECK: return
func.func private @opaque()
func.func @refused(%arena: memref<4096xi8>, %x: memref<64xf32>, %s: memref<f32>,
                   %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %in = memref.view %arena[%c0][] : memref<4096xi8> to memref<64xf32>
  %acc = memref.view %arena[%c128][] : memref<4096xi8> to memref<f32>
  affine.for %k = 0 to 64 {
    %a = affine.load %in[%k] : memref<64xf32>
    %v = affine.load %acc[] : memref<f32>
    %t = arith.addf %a, %v : f32
    affine.store %t, %acc[] : memref<f32>
  }
  affine.for %k = 0 to 64 {
    %a = affine.load %x[%k] : memref<64xf32>
    %v = affine.load %s[] : memref<f32>
    %t = arith.addf %a, %v : f32
    affine.store %t, %s[] : memref<f32>
  }
  %local = memref.alloc() : memref<f32>
  affine.for %k = 0 to 64 {
    %a = affine.load %x[%k] : memref<64xf32>
    %v = affine.load %local[] : memref<f32>
    %t = arith.addf %a, %v : f32
    func.call @opaque() : () -> ()
    affine.store %t, %local[] : memref<f32>
  }
  affine.for %k = 0 to 64 {
    %a = affine.load %x[%k] : memref<64xf32>
    affine.store %a, %local[] : memref<f32>
    %v = affine.load %local[] : memref<f32>
    affine.store %v, %y[%k] : memref<64xf32>
  }
  %out = memref.alloc() : memref<64xf32>
  affine.for %k = 0 to 64 {
    %a = affine.load %x[%k] : memref<64xf32>
    %v = affine.load %out[%k] : memref<64xf32>
    %t = arith.addf %a, %v : f32
    affine.store %t, %out[%k] : memref<64xf32>
  }
  affine.for %k = 0 to 64 {
    %a = affine.load %x[%k] : memref<64xf32>
    %v = affine.load %local[] : memref<f32>
    %t = arith.addf %a, %v : f32
    affine.store %t, %local[] : memref<f32>
    affine.store %a, %local[] : memref<f32>
  }
  memref.dealloc %local : memref<f32>
  memref.dealloc %out : memref<64xf32>
  return
}

// -----

// The max-pool gradient's argmax over 2x2 windows: the input is a reshape
// (collapse_shape) of a memory-plan view, the outputs other views of the
// same arena. A reshape stays within its source's bytes, disjoint from the
// outputs': both accumulators are carried.
// CHECK-LABEL: func.func @window_argmax
// CHECK: affine.for %{{.*}} = 0 to 4 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, i64) {
// CHECK-NOT: affine.store
// CHECK: affine.yield
func.func @window_argmax(%arena: memref<1024xi8>) {
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %c768 = arith.constant 768 : index
  %in = memref.view %arena[%c0][] : memref<1024xi8> to memref<8x4x2x2xf32>
  %windows = memref.collapse_shape %in [[0], [1], [2, 3]] : memref<8x4x2x2xf32> into memref<8x4x4xf32>
  %value = memref.view %arena[%c512][] : memref<1024xi8> to memref<8x4xf32>
  %index = memref.view %arena[%c768][] : memref<1024xi8> to memref<8x4xi64>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 4 {
      affine.for %k = 0 to 4 {
        %a = affine.load %windows[%i, %j, %k] : memref<8x4x4xf32>
        %v = affine.load %value[%i, %j] : memref<8x4xf32>
        %x = affine.load %index[%i, %j] : memref<8x4xi64>
        %gt = arith.cmpf ogt, %a, %v : f32
        %kk = arith.index_cast %k : index to i64
        %nv = arith.select %gt, %a, %v : f32
        %nx = arith.select %gt, %kk, %x : i64
        affine.store %nv, %value[%i, %j] : memref<8x4xf32>
        affine.store %nx, %index[%i, %j] : memref<8x4xi64>
      }
    }
  }
  return
}

// -----

// A prefetch in the reduction loop (of the next row of the input) changes no
// value: the accumulator still leaves the loop.
// CHECK-LABEL: func.func @row_sum_prefetched
// CHECK: affine.for %[[I:.*]] = 0 to 8 {
// CHECK-NEXT: %[[INIT:.*]] = affine.load %{{.*}}[%[[I]]] : memref<8xf32>
// CHECK-NEXT: %[[R:.*]] = affine.for %{{.*}} = 0 to 16 iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// CHECK: affine.prefetch
// CHECK: affine.store %[[R]], %{{.*}}[%[[I]]] : memref<8xf32>
func.func @row_sum_prefetched(%x: memref<8x16xf32>) -> memref<8xf32> {
  %acc = memref.alloc() : memref<8xf32>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 16 {
      affine.if affine_set<(d0) : (6 - d0 >= 0)>(%i) {
        affine.prefetch %x[%i + 1, %j], read, locality<3>, data : memref<8x16xf32>
      }
      %0 = affine.load %x[%i, %j] : memref<8x16xf32>
      %1 = affine.load %acc[%i] : memref<8xf32>
      %2 = arith.addf %1, %0 : f32
      affine.store %2, %acc[%i] : memref<8xf32>
    }
  }
  return %acc : memref<8xf32>
}
