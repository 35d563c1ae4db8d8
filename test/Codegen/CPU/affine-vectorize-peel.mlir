// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},func.func(dl-affine-vectorize))' | FileCheck %s --check-prefix=AVX512
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},func.func(dl-affine-vectorize))' | FileCheck %s --check-prefix=AVX2

// A static trip count the register's lanes do not divide: where halving the
// lanes until they divide it would lose half of them or more, the loop is
// split at the last multiple of the full width: whole vectors, then the
// rest in a scalar loop of its own. 1500 (Whisper's frames): 16 lanes over
// 1488 + 12 scalar on AVX-512 (not 4 lanes over all), 8 lanes over 1496 + 4
// scalar on AVX2 (not 4 lanes: the softmax's exponentials of Whisper's
// attention ran on 128-bit vectors).
func.func @exp_rows(%x: memref<8x1500xf32>, %y: memref<8x1500xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 1500 {
      %0 = affine.load %x[%i, %j] : memref<8x1500xf32>
      %1 = math.exp %0 : f32
      affine.store %1, %y[%i, %j] : memref<8x1500xf32>
    }
  }
  return
}
// AVX512-LABEL: func.func @exp_rows
// AVX512:         affine.for %[[J:.*]] = 0 to 1488 step 16 {
// AVX512:           math.exp %{{.*}} : vector<16xf32>
// AVX512:         affine.for %{{.*}} = 1488 to 1500 {
// AVX512:           math.exp %{{.*}} : f32
// AVX2-LABEL:   func.func @exp_rows
// AVX2:           affine.for %{{.*}} = 0 to 1496 step 8 {
// AVX2:             math.exp %{{.*}} : vector<8xf32>
// AVX2:           affine.for %{{.*}} = 1496 to 1500 {
// AVX2:             math.exp %{{.*}} : f32

// -----

// A reduction over 197 (ViT's tokens, a prime): without the split no lane
// width divides it and the sum stays scalar (LLVM does not reassociate a
// float sum either). The rest starts from the vector part's sum.
func.func @sum_197(%x: memref<197xf32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %s = affine.for %j = 0 to 197 iter_args(%acc = %zero) -> (f32) {
    %0 = affine.load %x[%j] : memref<197xf32>
    %1 = arith.addf %acc, %0 : f32
    affine.yield %1 : f32
  }
  affine.store %s, %out[] : memref<f32>
  return
}
// AVX512-LABEL: func.func @sum_197
// AVX512:         %[[V:.*]] = affine.for %{{.*}} = 0 to 192 step 16 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// AVX512:         %[[PART:.*]] = vector.reduction <add>, %[[V]]
// AVX512:         %[[ALL:.*]] = affine.for %{{.*}} = 192 to 197 iter_args(%{{.*}} = %[[PART]]) -> (f32)
// AVX512:         affine.store %[[ALL]]
// AVX2-LABEL:   func.func @sum_197
// AVX2:           affine.for %{{.*}} = 0 to 192 step 8 iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// AVX2:           affine.for %{{.*}} = 192 to 197 iter_args

// -----

// Not split: 1000 (a classifier) on AVX2, where 8 lanes divide it, and 40
// (EfficientNet's channels), under four full vectors: 8 lanes, no second
// loop. With AVX-512, 1000 is 16 lanes over 992 and 8 scalar (8 lanes over
// all of it would lose half the width).
func.func @kept(%x: memref<1000xf32>, %y: memref<1000xf32>, %a: memref<40xf32>, %b: memref<40xf32>) {
  affine.for %j = 0 to 1000 {
    %0 = affine.load %x[%j] : memref<1000xf32>
    %1 = arith.negf %0 : f32
    affine.store %1, %y[%j] : memref<1000xf32>
  }
  affine.for %j = 0 to 40 {
    %0 = affine.load %a[%j] : memref<40xf32>
    %1 = arith.negf %0 : f32
    affine.store %1, %b[%j] : memref<40xf32>
  }
  return
}
// AVX512-LABEL: func.func @kept
// AVX512:         affine.for %{{.*}} = 0 to 992 step 16 {
// AVX512:         affine.for %{{.*}} = 992 to 1000 {
// AVX512:         affine.for %{{.*}} = 0 to 40 step 8 {
// AVX512-NOT:     affine.for
// AVX512:         return
// AVX2-LABEL:   func.func @kept
// AVX2:           affine.for %{{.*}} = 0 to 1000 step 8 {
// AVX2:           affine.for %{{.*}} = 0 to 40 step 8 {
// AVX2-NOT:       affine.for
// AVX2:           return
