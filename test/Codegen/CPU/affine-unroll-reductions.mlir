// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions{max-trip-count=2}))' | FileCheck %s --check-prefix=TWO
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions))' | FileCheck %s --check-prefix=SCALREP

// An argmax over windows of 4: the reduction loop reads and writes its two
// accumulators at an address it does not vary. Unrolled; the pass's scalar
// replacement (upstream's) then keeps them in registers: one load and one
// store of each per window.
// CHECK-LABEL: func.func @argmax_window
// CHECK: affine.for %{{.*}} = 0 to 8 {
// CHECK-NOT: affine.for
// CHECK-COUNT-4: arith.cmpf ogt
// TWO-LABEL: func.func @argmax_window
// TWO: affine.for %{{.*}} = 0 to 4 {
// SCALREP-LABEL: func.func @argmax_window
// SCALREP-COUNT-1: affine.load %{{.*}} : memref<8xf32>
// SCALREP-COUNT-1: affine.load %{{.*}} : memref<8xi64>
// SCALREP-COUNT-4: arith.cmpf ogt
// SCALREP-COUNT-1: affine.store %{{.*}} : memref<8xf32>
// SCALREP-NOT: affine.store %{{.*}} : memref<8xf32>
func.func @argmax_window(%x: memref<8x4xf32>, %value: memref<8xf32>, %index: memref<8xi64>) {
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 4 {
      %a = affine.load %x[%i, %k] : memref<8x4xf32>
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
  return
}

// -----

// Left alone: a longer reduction (the vectorizer's or LLVM's), a short loop
// that is no reduction (each iteration its own element), and a loop of
// unknown trip count.
// CHECK-LABEL: func.func @left_alone
// CHECK: affine.for %{{.*}} = 0 to 64 {
// CHECK: affine.for %{{.*}} = 0 to 4 {
// CHECK: affine.for %{{.*}} = 0 to %{{.*}} {
func.func @left_alone(%x: memref<64xf32>, %s: memref<f32>, %y: memref<4xf32>, %n: index) {
  affine.for %k = 0 to 64 {
    %a = affine.load %x[%k] : memref<64xf32>
    %v = affine.load %s[] : memref<f32>
    %t = arith.addf %a, %v : f32
    affine.store %t, %s[] : memref<f32>
  }
  affine.for %k = 0 to 4 {
    %a = affine.load %x[%k] : memref<64xf32>
    affine.store %a, %y[%k] : memref<4xf32>
  }
  affine.for %k = 0 to %n {
    %a = affine.load %x[%k] : memref<64xf32>
    %v = affine.load %s[] : memref<f32>
    %t = arith.addf %a, %v : f32
    affine.store %t, %s[] : memref<f32>
  }
  return
}

// -----

// Nothing unrolled: no scalar replacement either (over a whole function it
// costs time growing with the square of its accesses), so a store and a
// load of the same element stay as they are.
// CHECK-LABEL: func.func @nothing_unrolled
// CHECK: affine.store
// CHECK: affine.load %arg1[%{{.*}}] : memref<64xf32>
func.func @nothing_unrolled(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  affine.for %k = 0 to 64 {
    %a = affine.load %x[%k] : memref<64xf32>
    affine.store %a, %y[%k] : memref<64xf32>
    %b = affine.load %y[%k] : memref<64xf32>
    %c = arith.addf %b, %b : f32
    affine.store %c, %z[%k] : memref<64xf32>
  }
  return
}
