// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},func.func(dl-affine-register-tile{rows=4 vectors=2},dl-affine-parallelize{min-work=1000}))' | FileCheck %s --check-prefix=TWO
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2},dl-affine-parallelize{min-work=1000}))' | FileCheck %s --check-prefix=ONE

// Sized for two threads, the 64 columns form two blocks of 32, each with its
// own packed copy of B; dependence analysis (on normalized loops) proves the
// blocks independent, so they are the loop that runs on threads: one
// fork/join for the whole GEMM.
// TWO: affine.parallel (%[[BLOCK:.*]]) = (0) to (64) step (32) {
// TWO-NEXT: memref.alloc() {alignment = 64 : i64} : memref<64x32xf32>
// TWO: affine.for %{{.*}} = 0 to 16 step 4 {
// TWO: affine.for %{{.*}} = #{{.*}}(%[[BLOCK]]) to min #{{.*}}(%[[BLOCK]]) step 16 {
// TWO: vector.fma
// For one thread, one block: the row tiles are the parallel loop.
// ONE: affine.parallel (%{{.*}}) = (0) to (16) step (4) {
// ONE-NEXT: affine.for %{{.*}} = 0 to 64 step 16 {
func.func @matmul(%a: memref<16x64xf32>, %b: memref<64x64xf32>) -> memref<16x64xf32> {
  %c = memref.alloc() : memref<16x64xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 64 {
      affine.for %j = 0 to 64 {
        %0 = affine.load %a[%i, %k] : memref<16x64xf32>
        %1 = affine.load %b[%k, %j] : memref<64x64xf32>
        %2 = affine.load %c[%i, %j] : memref<16x64xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x64xf32>
      }
    }
  }
  return %c : memref<16x64xf32>
}

// -----

// 336 columns are 21 tiles of 16. Haswell's L2 (256 KiB) asks for blocks of
// about 5 tiles (80 columns): 5 blocks, run by 2 threads in contiguous
// chunks of 3 blocks, 15 tiles on the busiest thread. Blocks of 4 tiles (64
// columns; 6 blocks, chunks of 3) leave it 12: the width whose busiest
// thread has the fewest tiles.
// TWO-LABEL: func @balanced
// TWO: affine.parallel (%{{.*}}) = (0) to (336) step (64) {
// With one thread the cache alone decides: blocks of 80.
// ONE-LABEL: func @balanced
// ONE: affine.parallel (%{{.*}}) = (0) to (336) step (80) {
func.func @balanced(%a: memref<8x64xf32>, %b: memref<64x336xf32>) -> memref<8x336xf32> {
  %c = memref.alloc() : memref<8x336xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 64 {
      affine.for %j = 0 to 336 {
        %0 = affine.load %a[%i, %k] : memref<8x64xf32>
        %1 = affine.load %b[%k, %j] : memref<64x336xf32>
        %2 = affine.load %c[%i, %j] : memref<8x336xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x336xf32>
      }
    }
  }
  return %c : memref<8x336xf32>
}

// -----

// Inside a parallel loop (dl-fuse-attention's blocks of query rows) the
// nest runs on one thread already: the same 64 columns are one block, not
// two, even sized for two threads.
// TWO-LABEL: func @inside_parallel
// TWO: affine.parallel (%[[H:.*]]) = (0) to (4) {
// TWO-NOT: step 32
// TWO: affine.for %{{.*}} = 0 to 16 step 4 {
// TWO-NEXT: affine.for %{{.*}} = 0 to 64 step 16 {
// TWO: vector.fma
func.func @inside_parallel(%a: memref<4x16x64xf32>, %b: memref<4x64x64xf32>, %out: memref<4x16x64xf32>) {
  affine.parallel (%h) = (0) to (4) {
    %c = memref.alloc() : memref<16x64xf32>
    affine.for %i = 0 to 16 {
      affine.for %k = 0 to 64 {
        affine.for %j = 0 to 64 {
          %0 = affine.load %a[%h, %i, %k] : memref<4x16x64xf32>
          %1 = affine.load %b[%h, %k, %j] : memref<4x64x64xf32>
          %2 = affine.load %c[%i, %j] : memref<16x64xf32>
          %3 = arith.mulf %0, %1 : f32
          %4 = arith.addf %2, %3 : f32
          affine.store %4, %c[%i, %j] : memref<16x64xf32>
        }
      }
    }
    affine.for %i = 0 to 16 {
      affine.for %j = 0 to 64 {
        %0 = affine.load %c[%i, %j] : memref<16x64xf32>
        affine.store %0, %out[%h, %i, %j] : memref<4x16x64xf32>
      }
    }
    memref.dealloc %c : memref<16x64xf32>
  }
  return
}

// -----

// 1024 rows: blocks of 5 tiles (80 columns, 60 tiles in 12 blocks, 6 per
// thread) would need the reduction (512) blocked, as their panel of B (160
// KiB) passes half of Haswell's L2, and each reduction block would reload
// the partial sums of 1024 x 80 outputs (320 KiB) from beyond L2. Blocks of
// at most 4 tiles take the whole reduction in half of L2: no reduction
// blocks, and the tiles start from the fill, which goes. Two threads: 3
// tiles (30 per thread; 4 would make 32). One thread: 4 tiles.
// TWO-LABEL: func @whole_reduction
// TWO-NOT: affine.store
// TWO: affine.parallel (%{{.*}}) = (0) to (960) step (48) {
// TWO-NOT: step 80
// TWO: affine.for %{{.*}} = 0 to 1024 step 4 {
// TWO: affine.for %{{.*}} = 0 to 512 iter_args(%{{.*}} = %[[ZERO:[0-9a-z_]+]], %{{.*}} = %[[ZERO]],
// TWO: vector.fma
// ONE-LABEL: func @whole_reduction
// ONE: affine.parallel (%{{.*}}) = (0) to (960) step (64) {
// ONE-NOT: step 80
func.func @whole_reduction(%a: memref<1024x512xf32>, %b: memref<512x960xf32>) -> memref<1024x960xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<1024x960xf32>
  affine.for %i = 0 to 1024 {
    affine.for %j = 0 to 960 {
      affine.store %zero, %c[%i, %j] : memref<1024x960xf32>
    }
  }
  affine.for %i = 0 to 1024 {
    affine.for %k = 0 to 512 {
      affine.for %j = 0 to 960 {
        %0 = affine.load %a[%i, %k] : memref<1024x512xf32>
        %1 = affine.load %b[%k, %j] : memref<512x960xf32>
        %2 = affine.load %c[%i, %j] : memref<1024x960xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<1024x960xf32>
      }
    }
  }
  return %c : memref<1024x960xf32>
}

// -----

// The same reduction over 64 rows: the partial sums of a block (64 x 80,
// 20 KiB) stay in cache, so the blocks keep their width (5 tiles, the
// busiest thread's 25 tiles) and the reduction is blocked (by 80).
// TWO-LABEL: func @partial_sums_in_cache
// TWO: affine.parallel (%{{.*}}) = (0) to (800) step (80) {
// TWO: affine.for %{{.*}} = 0 to 512 step 80 {
// TWO: vector.fma
// ONE-LABEL: func @partial_sums_in_cache
// ONE: affine.for %{{.*}} = 0 to 512 step 80 {
func.func @partial_sums_in_cache(%a: memref<64x512xf32>, %b: memref<512x800xf32>) -> memref<64x800xf32> {
  %c = memref.alloc() : memref<64x800xf32>
  affine.for %i = 0 to 64 {
    affine.for %k = 0 to 512 {
      affine.for %j = 0 to 800 {
        %0 = affine.load %a[%i, %k] : memref<64x512xf32>
        %1 = affine.load %b[%k, %j] : memref<512x800xf32>
        %2 = affine.load %c[%i, %j] : memref<64x800xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<64x800xf32>
      }
    }
  }
  return %c : memref<64x800xf32>
}

// -----

// A depthwise convolution's nest (batch, output row, output column,
// channel; the 3x3 window reduced): the batch loop stays outside the tiles
// and has an iteration per thread, so dl-affine-parallelize runs it on the
// threads and the 32 channels (2 tiles of 16) are not split into blocks
// for them (split, every block read the input rows again, half of each
// pixel's lines at a time).
// TWO-LABEL: func @depthwise_batch_takes_threads
// TWO: affine.parallel (%{{.*}}) = (0) to (2) {
// TWO-NEXT: affine.for %{{.*}} = 0 to 8 {
// TWO-NEXT: affine.for %{{.*}} = 0 to 8 step 4 {
// TWO-NEXT: affine.for %{{.*}} = 0 to 32 step 16 {
// TWO: vector.fma
func.func @depthwise_batch_takes_threads(%x: memref<2x10x10x32xf32>, %w: memref<3x3x32xf32>) -> memref<2x8x8x32xf32> {
  %c = memref.alloc() : memref<2x8x8x32xf32>
  affine.for %n = 0 to 2 {
    affine.for %oh = 0 to 8 {
      affine.for %ow = 0 to 8 {
        affine.for %ch = 0 to 32 {
          affine.for %kh = 0 to 3 {
            affine.for %kw = 0 to 3 {
              %0 = affine.load %x[%n, %oh + %kh, %ow + %kw, %ch] : memref<2x10x10x32xf32>
              %1 = affine.load %w[%kh, %kw, %ch] : memref<3x3x32xf32>
              %2 = affine.load %c[%n, %oh, %ow, %ch] : memref<2x8x8x32xf32>
              %3 = arith.mulf %0, %1 : f32
              %4 = arith.addf %2, %3 : f32
              affine.store %4, %c[%n, %oh, %ow, %ch] : memref<2x8x8x32xf32>
            }
          }
        }
      }
    }
  }
  return %c : memref<2x8x8x32xf32>
}

// -----

// The same nest with one image and one output row: no loop outside the
// tiles has an iteration per thread, so the channels are split for them as
// before (2 blocks of one tile), and the blocks run on the threads.
// TWO-LABEL: func @depthwise_one_row
// TWO: affine.for %{{.*}} = 0 to 1 {
// TWO-NEXT: affine.for %{{.*}} = 0 to 1 {
// TWO-NEXT: affine.parallel (%[[BLOCK:.*]]) = (0) to (32) step (16) {
// TWO: affine.for %{{.*}} = 0 to 8 step 4 {
func.func @depthwise_one_row(%x: memref<1x3x10x32xf32>, %w: memref<3x3x32xf32>) -> memref<1x1x8x32xf32> {
  %c = memref.alloc() : memref<1x1x8x32xf32>
  affine.for %n = 0 to 1 {
    affine.for %oh = 0 to 1 {
      affine.for %ow = 0 to 8 {
        affine.for %ch = 0 to 32 {
          affine.for %kh = 0 to 3 {
            affine.for %kw = 0 to 3 {
              %0 = affine.load %x[%n, %oh + %kh, %ow + %kw, %ch] : memref<1x3x10x32xf32>
              %1 = affine.load %w[%kh, %kw, %ch] : memref<3x3x32xf32>
              %2 = affine.load %c[%n, %oh, %ow, %ch] : memref<1x1x8x32xf32>
              %3 = arith.mulf %0, %1 : f32
              %4 = arith.addf %2, %3 : f32
              affine.store %4, %c[%n, %oh, %ow, %ch] : memref<1x1x8x32xf32>
            }
          }
        }
      }
    }
  }
  return %c : memref<1x1x8x32xf32>
}
