// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},func.func(dl-affine-parallelize{min-work=1000},canonicalize))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},func.func(dl-affine-parallelize{min-work=1000 explain}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-parallelize{min-work=1000}))' | FileCheck %s --check-prefix=ONE

// Five groups on two threads would be chunks of 3 and 2: the group loop and
// the row loop inside it (alone in its body, parallel too) become one loop
// of 5 x 28 iterations, 70 per thread; the group and the row are its
// iteration's quotient and remainder by 28.
// CHECK-LABEL: func @five_groups
// CHECK: affine.parallel (%[[I:.*]]) = (0) to (140) {
// CHECK: affine.for %{{.*}} = 0 to 24 {
// CHECK: affine.store %{{.*}}, %{{.*}}[%[[I]] mod 28, %[[I]] floordiv 28, %{{.*}}] : memref<28x5x24xf32>
// REMARK: remark: dl-affine-parallelize: coalesced with the loop inside it, 5 x 28 iterations, for even chunks over 2 threads
// One thread: nothing to balance.
// ONE-LABEL: func @five_groups
// ONE: affine.parallel (%{{.*}}) = (0) to (5) {
func.func @five_groups(%x: memref<28x5x24xf32>, %y: memref<28x5x24xf32>) {
  affine.for %g = 0 to 5 {
    affine.for %r = 0 to 28 {
      affine.for %c = 0 to 24 {
        %0 = affine.load %x[%r, %g, %c] : memref<28x5x24xf32>
        %1 = arith.addf %0, %0 : f32
        affine.store %1, %y[%r, %g, %c] : memref<28x5x24xf32>
      }
    }
  }
  return
}

// -----

// Four groups divide evenly over two threads: left as they are.
// CHECK-LABEL: func @four_groups
// CHECK: affine.parallel (%{{.*}}) = (0) to (4) {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 28 {
func.func @four_groups(%x: memref<28x4x24xf32>, %y: memref<28x4x24xf32>) {
  affine.for %g = 0 to 4 {
    affine.for %r = 0 to 28 {
      affine.for %c = 0 to 24 {
        %0 = affine.load %x[%r, %g, %c] : memref<28x4x24xf32>
        %1 = arith.addf %0, %0 : f32
        affine.store %1, %y[%r, %g, %c] : memref<28x4x24xf32>
      }
    }
  }
  return
}

// -----

// The loop inside is not parallel (each row adds to the one before): no
// coalescing, the 5 groups run as they are.
// CHECK-LABEL: func @inner_carries
// CHECK: affine.parallel (%{{.*}}) = (0) to (5) {
// CHECK-NEXT: affine.for %{{.*}} = 1 to 28 {
func.func @inner_carries(%y: memref<28x5x24xf32>) {
  affine.for %g = 0 to 5 {
    affine.for %r = 1 to 28 {
      affine.for %c = 0 to 24 {
        %0 = affine.load %y[%r - 1, %g, %c] : memref<28x5x24xf32>
        %1 = affine.load %y[%r, %g, %c] : memref<28x5x24xf32>
        %2 = arith.addf %0, %1 : f32
        affine.store %2, %y[%r, %g, %c] : memref<28x5x24xf32>
      }
    }
  }
  return
}
