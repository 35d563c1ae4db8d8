// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},func.func(dl-affine-parallelize{min-work=100}))' | FileCheck %s --check-prefix=TWO
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=3},func.func(dl-affine-parallelize{min-work=100}))' | FileCheck %s --check-prefix=THREE
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-parallelize{min-work=100}))' | FileCheck %s --check-prefix=ONE
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},func.func(dl-affine-parallelize{min-work=100 explain}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// dl-affine-parallelize balances the split over the target's threads: 7
// rows on 2 threads would run as 4 + 3 (an eighth of both threads' time
// lost), so the rows are coalesced with the loop they hold (7 x 512
// vectors, 1792 each) and the coalesced loop runs on the threads, its row
// and column recovered by floordiv and mod.
// TWO-LABEL: func @seven_rows
// TWO: affine.parallel (%[[P:.*]]) = (0) to (3584) {
// TWO: affine.apply #{{.*}}(%[[P]])
// TWO: affine.apply #{{.*}}(%[[P]])
// TWO-NOT: affine.for
// TWO: affine.vector_store
// TWO-NOT: affine.parallel
// REMARK: remark: dl-affine-parallelize: coalesced with the loop it holds, for an even split over the threads (3584 iterations)
// REMARK: remark: dl-affine-parallelize: loop runs on several threads
// (None of the nests below is coalesced on 2 threads.)
// REMARK-NOT: coalesced
// Sized for one thread, the rows are not coalesced (nothing to balance).
// ONE-LABEL: func @seven_rows
// ONE: affine.parallel (%{{.*}}) = (0) to (7) {
// ONE-NEXT: affine.for %{{.*}} = 0 to 4096 step 8 {
func.func @seven_rows(%a: memref<16x4096xf32>, %b: memref<7x4096xf32>) {
  affine.for %i = 0 to 7 {
    affine.for %j = 0 to 4096 step 8 {
      %0 = affine.vector_load %a[%i * 2, %j] : memref<16x4096xf32>, vector<8xf32>
      %1 = affine.vector_load %a[%i * 2 + 2, %j] : memref<16x4096xf32>, vector<8xf32>
      %2 = arith.subf %0, %1 : vector<8xf32>
      affine.vector_store %2, %b[%i, %j] : memref<7x4096xf32>, vector<8xf32>
    }
  }
  return
}

// -----

// 8 rows split evenly over 2 threads: no coalescing, no division per
// iteration. Over 3 threads (3 + 3 + 2) they are coalesced.
// TWO-LABEL: func @eight_rows
// TWO: affine.parallel (%{{.*}}) = (0) to (8) {
// TWO-NEXT: affine.for %{{.*}} = 0 to 4096 step 8 {
// THREE-LABEL: func @eight_rows
// THREE: affine.parallel (%{{.*}}) = (0) to (4096) {
func.func @eight_rows(%a: memref<8x4096xf32>, %b: memref<8x4096xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 4096 step 8 {
      %0 = affine.vector_load %a[%i, %j] : memref<8x4096xf32>, vector<8xf32>
      %1 = arith.addf %0, %0 : vector<8xf32>
      affine.vector_store %1, %b[%i, %j] : memref<8x4096xf32>, vector<8xf32>
    }
  }
  return
}

// -----

// Refused: the inner loop carries a dependence (each column reads the one
// before it), so the coalesced loop is not parallel; the rows run on the
// threads as they are, 4 + 3.
// TWO-LABEL: func @dependent_columns
// TWO: affine.parallel (%{{.*}}) = (0) to (7) {
// TWO-NEXT: affine.for %{{.*}} = 1 to 4096 {
func.func @dependent_columns(%b: memref<7x4096xf32>) {
  affine.for %i = 0 to 7 {
    affine.for %j = 1 to 4096 {
      %0 = affine.load %b[%i, %j - 1] : memref<7x4096xf32>
      %1 = arith.addf %0, %0 : f32
      affine.store %1, %b[%i, %j] : memref<7x4096xf32>
    }
  }
  return
}

// -----

// Refused: the rows hold two loops (not a perfect nest), and a loop whose
// bounds are not constant.
// TWO-LABEL: func @two_inner_loops
// TWO: affine.parallel (%{{.*}}) = (0) to (7) {
// TWO-NEXT: affine.for %{{.*}} = 0 to 2048 {
// TWO: affine.for %{{.*}} = 2048 to 4096 {
// TWO-LABEL: func @dynamic_columns
// TWO: affine.parallel (%{{.*}}) = (0) to (7) {
// TWO-NEXT: affine.for %{{.*}} = 0 to %{{.*}} {
func.func @two_inner_loops(%b: memref<7x4096xf32>, %x: f32) {
  affine.for %i = 0 to 7 {
    affine.for %j = 0 to 2048 {
      affine.store %x, %b[%i, %j] : memref<7x4096xf32>
    }
    affine.for %j = 2048 to 4096 {
      %0 = arith.addf %x, %x : f32
      affine.store %0, %b[%i, %j] : memref<7x4096xf32>
    }
  }
  return
}

func.func @dynamic_columns(%b: memref<7x?xf32>, %x: f32) {
  %c1 = arith.constant 1 : index
  %n = memref.dim %b, %c1 : memref<7x?xf32>
  affine.for %i = 0 to 7 {
    affine.for %j = 0 to %n {
      affine.store %x, %b[%i, %j] : memref<7x?xf32>
    }
  }
  return
}

// -----

// Trip counts whose product overflows 64 bits: left alone, no crash.
// TWO-LABEL: func @huge_columns
// TWO: affine.for %{{.*}} = 0 to 7 {
// TWO-NEXT: affine.for %{{.*}} = 0 to 2305843009213693952 {
func.func @huge_columns(%b: memref<7x?xf32>, %x: f32) {
  affine.for %i = 0 to 7 {
    affine.for %j = 0 to 2305843009213693952 {
      affine.store %x, %b[%i, %j] : memref<7x?xf32>
    }
  }
  return
}

// -----

// Refused: a tile loop (0 to 19 step 8: 3 tiles) is not normalized, and
// normalizing it would put an affine.apply of its variable between the two
// loops, which coalescing would not remap (the tile's start read p * 8 for
// (p floordiv 3) * 8: wrong results, not an error). The tiles run as they are.
// TWO-LABEL: func @tile_loop
// TWO: affine.parallel (%{{.*}}) = (0) to (19) step (8) {
// TWO-NEXT: affine.for %{{.*}} = 0 to 19 step 8 {
func.func @tile_loop(%a: memref<19x19xf32>, %b: memref<19x19xf32>) {
  affine.for %i = 0 to 19 step 8 {
    affine.for %j = 0 to 19 step 8 {
      affine.for %ii = affine_map<(d0) -> (d0)>(%i) to min affine_map<(d0) -> (d0 + 8, 19)>(%i) {
        affine.for %jj = affine_map<(d0) -> (d0)>(%j) to min affine_map<(d0) -> (d0 + 8, 19)>(%j) {
          %0 = affine.load %a[%jj, %ii] : memref<19x19xf32>
          affine.store %0, %b[%ii, %jj] : memref<19x19xf32>
        }
      }
    }
  }
  return
}
