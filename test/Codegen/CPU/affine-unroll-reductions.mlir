// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions{max-trip-count=2}))' | FileCheck %s --check-prefix=TWO
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions))' | FileCheck %s --check-prefix=SCALREP
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-unroll-reductions{max-unrolled-ops=16}))' | FileCheck %s --check-prefix=SMALL

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

// -----

// A register tile's window loop (a depthwise convolution's kw, as
// dl-affine-register-tile leaves it): 5 iterations carrying vector
// accumulators. The innermost one is unrolled, so that LLVM sees the
// iterations' loads of one input column as one; the window's rows (kh, not
// innermost) stay a loop. With max-unrolled-ops=16 the 5 x 6 operations of
// the unrolled body are too many: left alone.
// CHECK-LABEL: func.func @window_tile
// CHECK: affine.for %{{.*}} = 0 to 5 iter_args
// CHECK-NOT: affine.for
// CHECK-COUNT-10: vector.fma
// CHECK-NOT: vector.fma
// CHECK: affine.yield
// SMALL-LABEL: func.func @window_tile
// SMALL: affine.for %{{.*}} = 0 to 5 iter_args
// SMALL: affine.for %{{.*}} = 0 to 5 iter_args
// SMALL-COUNT-2: vector.fma
// SMALL-NOT: vector.fma
func.func @window_tile(%x: memref<12x12x8xf32>, %w: memref<5x5x8xf32>, %y: memref<8x8x8xf32>) {
  %zero = arith.constant dense<0.0> : vector<8xf32>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 8 step 2 {
      %r:2 = affine.for %kh = 0 to 5 iter_args(%a0 = %zero, %a1 = %zero) -> (vector<8xf32>, vector<8xf32>) {
        %s:2 = affine.for %kw = 0 to 5 iter_args(%b0 = %a0, %b1 = %a1) -> (vector<8xf32>, vector<8xf32>) {
          %wv = affine.vector_load %w[%kh, %kw, 0] : memref<5x5x8xf32>, vector<8xf32>
          %x0 = affine.vector_load %x[%i + %kh, %j + %kw, 0] : memref<12x12x8xf32>, vector<8xf32>
          %f0 = vector.fma %x0, %wv, %b0 : vector<8xf32>
          %x1 = affine.vector_load %x[%i + %kh, %j + %kw + 1, 0] : memref<12x12x8xf32>, vector<8xf32>
          %f1 = vector.fma %x1, %wv, %b1 : vector<8xf32>
          affine.yield %f0, %f1 : vector<8xf32>, vector<8xf32>
        }
        affine.yield %s#0, %s#1 : vector<8xf32>, vector<8xf32>
      }
      affine.vector_store %r#0, %y[%i, %j, 0] : memref<8x8x8xf32>, vector<8xf32>
      affine.vector_store %r#1, %y[%i, %j + 1, 0] : memref<8x8x8xf32>, vector<8xf32>
    }
  }
  return
}

// -----

// Left alone: a vector reduction longer than max-trip-count (a matmul's k),
// and a short loop carrying a scalar (not a register tile's accumulators).
// CHECK-LABEL: func.func @long_or_scalar
// CHECK: affine.for %{{.*}} = 0 to 9 iter_args
// CHECK: affine.for %{{.*}} = 0 to 4 iter_args
func.func @long_or_scalar(%x: memref<9x8xf32>, %y: memref<8xf32>, %s: memref<f32>) {
  %zero = arith.constant dense<0.0> : vector<8xf32>
  %r = affine.for %k = 0 to 9 iter_args(%a = %zero) -> (vector<8xf32>) {
    %v = affine.vector_load %x[%k, 0] : memref<9x8xf32>, vector<8xf32>
    %t = arith.addf %v, %a : vector<8xf32>
    affine.yield %t : vector<8xf32>
  }
  affine.vector_store %r, %y[0] : memref<8xf32>, vector<8xf32>
  %c0 = arith.constant 0.0 : f32
  %q = affine.for %k = 0 to 4 iter_args(%a = %c0) -> (f32) {
    %v = affine.load %x[%k, 0] : memref<9x8xf32>
    %t = arith.addf %v, %a : f32
    affine.yield %t : f32
  }
  affine.store %q, %s[] : memref<f32>
  return
}
