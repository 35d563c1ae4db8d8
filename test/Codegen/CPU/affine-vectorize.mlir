// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-vectorize{vector-width=8}))' | FileCheck %s

// A parallel loop with contiguous accesses is vectorized. The trip count has
// no tail, so every lane was accessed by the scalar loop: the transfers are
// in bounds and become affine vector accesses (no mask).
// CHECK-LABEL: func @parallel
// CHECK: affine.for %[[I:.*]] = 0 to 32 step 8 {
// CHECK: %[[V:.*]] = affine.vector_load %{{.*}}[%[[I]]] : memref<32xf32>, vector<8xf32>
// CHECK: %[[E:.*]] = math.exp %[[V]] : vector<8xf32>
// CHECK: affine.vector_store %[[E]], %{{.*}}[%[[I]]] : memref<32xf32>, vector<8xf32>
// CHECK-NOT: vector.transfer
func.func @parallel(%in: memref<32xf32>, %out: memref<32xf32>) {
  affine.for %i = 0 to 32 {
    %0 = affine.load %in[%i] : memref<32xf32>
    %1 = math.exp %0 : f32
    affine.store %1, %out[%i] : memref<32xf32>
  }
  return
}

// -----

// Refused: a static trip count the width does not divide would need a masked
// tail; LLVM vectorizes such loops itself.
// CHECK-LABEL: func @static_tail
// CHECK-NOT: vector
// CHECK: affine.for %{{.*}} = 0 to 17 {
func.func @static_tail(%in: memref<17xf32>, %out: memref<17xf32>) {
  affine.for %i = 0 to 17 {
    %0 = affine.load %in[%i] : memref<17xf32>
    affine.store %0, %out[%i] : memref<17xf32>
  }
  return
}

// -----

// The matmul nest: the parallel j loop is vectorized, the reduction k loop
// (which carries a dependence through C) is not.
// CHECK-LABEL: func @matmul
// CHECK: affine.for %{{.*}} = 0 to 4 {
// CHECK: affine.for %[[J:.*]] = 0 to 16 step 8 {
// CHECK: affine.for %[[K:.*]] = 0 to 5 {
// CHECK: affine.vector_load %{{.*}}[%[[K]], %[[J]]]
// CHECK: arith.mulf %{{.*}} : vector<8xf32>
func.func @matmul(%a: memref<4x5xf32>, %b: memref<5x16xf32>, %c: memref<4x16xf32>) {
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 16 {
      affine.for %k = 0 to 5 {
        %0 = affine.load %a[%i, %k] : memref<4x5xf32>
        %1 = affine.load %b[%k, %j] : memref<5x16xf32>
        %2 = affine.load %c[%i, %j] : memref<4x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<4x16xf32>
      }
    }
  }
  return
}

// -----

// Refused: accumulating into a 0-d memref. Every iteration writes the same
// element; upstream's affine-super-vectorize turns this into an invalid
// vector.transfer_write. The loop stays scalar.
// CHECK-LABEL: func @full_reduction
// CHECK-NOT: vector
// CHECK: affine.for %{{.*}} = 0 to 129 {
// CHECK: affine.store %{{.*}}, %{{.*}}[] : memref<f32>
func.func @full_reduction(%in: memref<129xf32>, %acc: memref<f32>) {
  affine.for %i = 0 to 129 {
    %0 = affine.load %in[%i] : memref<129xf32>
    %1 = affine.load %acc[] : memref<f32>
    %2 = arith.addf %1, %0 : f32
    affine.store %2, %acc[] : memref<f32>
  }
  return
}

// -----

// Refused: a single-iteration loop whose store does not depend on its
// induction variable (what a size-1 reduced dimension lowers to).
// CHECK-LABEL: func @single_iteration_accumulation
// CHECK-NOT: vector
// CHECK: affine.for %{{.*}} = 0 to 1 {
func.func @single_iteration_accumulation(%in: memref<3x1xf32>, %acc: memref<3xf32>) {
  affine.for %i = 0 to 3 {
    affine.for %j = 0 to 1 {
      %0 = affine.load %in[%i, %j] : memref<3x1xf32>
      %1 = affine.load %acc[%i] : memref<3xf32>
      %2 = arith.addf %1, %0 : f32
      affine.store %2, %acc[%i] : memref<3xf32>
    }
  }
  return
}

// -----

// Refused: a loop that ends before the memref dimension does, with a trip
// count the width does not divide: its last vector would write past the loop
// (transfers mask only at the memref's end). What tiling produces.
// CHECK-LABEL: func @partial_dimension
// CHECK-NOT: vector
// CHECK: affine.for %{{.*}} = 0 to 10 {
func.func @partial_dimension(%in: memref<17xf32>, %out: memref<17xf32>) {
  affine.for %i = 0 to 10 {
    %0 = affine.load %in[%i] : memref<17xf32>
    affine.store %0, %out[%i] : memref<17xf32>
  }
  return
}

// -----

// Refused: an intra-tile loop (it does not start at 0).
// CHECK-LABEL: func @intra_tile
// CHECK-NOT: vector
func.func @intra_tile(%in: memref<128xf32>, %out: memref<128xf32>) {
  affine.for %ii = 0 to 128 step 4 {
    affine.for %i = affine_map<(d0) -> (d0)>(%ii) to affine_map<(d0) -> (d0 + 4)>(%ii) {
      %0 = affine.load %in[%i] : memref<128xf32>
      affine.store %0, %out[%i] : memref<128xf32>
    }
  }
  return
}

// -----

// Accepted: a trip count the width divides, even inside a larger dimension.
// CHECK-LABEL: func @divisible_trip_count
// CHECK: affine.for %{{.*}} = 0 to 16 step 8 {
// CHECK: affine.vector_load {{.*}} : memref<17xf32>, vector<8xf32>
func.func @divisible_trip_count(%in: memref<17xf32>, %out: memref<17xf32>) {
  affine.for %i = 0 to 16 {
    %0 = affine.load %in[%i] : memref<17xf32>
    affine.store %0, %out[%i] : memref<17xf32>
  }
  return
}

// -----

// Accepted: a dynamic dimension walked up to its own memref.dim. The last
// vector may be partial: the transfers stay, masked at the memref's end.
// CHECK-LABEL: func @dynamic_dimension
// CHECK: affine.for %{{.*}} = 0 to %{{.*}} step 8 {
// CHECK: vector.transfer_read {{.*}} : memref<?xf32>, vector<8xf32>
func.func @dynamic_dimension(%buf: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %buf, %c0 : memref<?xf32>
  affine.for %i = 0 to %n {
    %0 = affine.load %buf[%i] : memref<?xf32>
    %1 = math.exp %0 : f32
    affine.store %1, %buf[%i] : memref<?xf32>
  }
  return
}

// -----

// Refused: a dynamic bound taken from another memref than the one accessed
// (nothing proves the sizes equal).
// CHECK-LABEL: func @dynamic_bound_of_other_memref
// CHECK-NOT: vector
func.func @dynamic_bound_of_other_memref(%in: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?xf32>
  affine.for %i = 0 to %n {
    %0 = affine.load %in[%i] : memref<?xf32>
    affine.store %0, %out[%i] : memref<?xf32>
  }
  return
}

// -----

// Refused: j bounds the loop nested in it (j mod 7 + 32 rows, found by
// tools/fuzz/dlopt_fuzz.py; a triangular nest is the same case). Vectorizing
// j would need a bound per lane: upstream's vectorizer erased the nest while
// the bound still used j (an assertion). Both loops stay scalar.
// CHECK-LABEL: func @bound_from_the_loop
// CHECK: affine.for %[[J:.*]] = 0 to 64 {
// CHECK-NEXT: affine.for %[[I:.*]] = 0 to #{{.*}}(%[[J]]) {
// CHECK-NEXT: affine.load %{{.*}}[%[[I]], %[[J]]] : memref<40x64xf32>
// CHECK-NOT: vector
// CHECK: return
func.func @bound_from_the_loop(%in: memref<40x64xf32>, %out: memref<40x64xf32>) {
  affine.for %j = 0 to 64 {
    affine.for %i = 0 to affine_map<(d0) -> (d0 mod 7 + 32)>(%j) {
      %x = affine.load %in[%i, %j] : memref<40x64xf32>
      affine.store %x, %out[%i, %j] : memref<40x64xf32>
    }
  }
  return
}

// -----

// The same through an affine.apply of j (a triangular nest).
// CHECK-LABEL: func @bound_from_an_apply_of_the_loop
// CHECK-NOT: vector
// CHECK: return
func.func @bound_from_an_apply_of_the_loop(%in: memref<64x64xf32>, %out: memref<64x64xf32>) {
  affine.for %j = 0 to 64 {
    %n = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
    affine.for %i = 0 to affine_map<(d0) -> (d0)>(%n) {
      %x = affine.load %in[%i, %j] : memref<64x64xf32>
      affine.store %x, %out[%i, %j] : memref<64x64xf32>
    }
  }
  return
}
