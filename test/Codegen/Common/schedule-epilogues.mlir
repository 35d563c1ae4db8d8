// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-schedule-epilogues))' | FileCheck %s

// BERT's dynamically quantized Q and K projections as the importer leaves
// them: both products of the shared input, then the zero point's correction
// of each (a [24] nest of the scalar zero point), then both consumers. Each
// consumer moves to just after its product, with the expand_shape of its
// rows and the nests it reads (the correction, the scalar's widening, their
// empty destinations); K's correction, which Q's consumer does not read,
// stays after Q's consumer.
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#col3 = affine_map<(d0, d1, d2) -> (d2)>
#s1 = affine_map<(d0) -> ()>
#id1 = affine_map<(d0) -> (d0)>
#s0 = affine_map<() -> ()>
func.func @q_and_k(%a: tensor<16x8xi8>, %wq: tensor<8x24xi8>, %wk: tensor<8x24xi8>,
                   %zp: tensor<i8>, %colq: tensor<24xi32>, %colk: tensor<24xi32>)
    -> (tensor<1x16x24xf32>, tensor<1x16x24xf32>) {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<16x24xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<16x24xi32>) -> tensor<16x24xi32>
  %q = linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wq : tensor<16x8xi8>, tensor<8x24xi8>) outs(%f : tensor<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<16x24xi32>
  %qe = tensor.expand_shape %q [[0, 1], [2]] output_shape [1, 16, 24] : tensor<16x24xi32> into tensor<1x16x24xi32>
  %ze = tensor.empty() : tensor<i32>
  %zw = linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []} ins(%zp : tensor<i8>) outs(%ze : tensor<i32>) {
  ^bb0(%x: i8, %o: i32):
    %0 = arith.extui %x : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<i32>
  %ce = tensor.empty() : tensor<24xi32>
  %corrq = linalg.generic {indexing_maps = [#s1, #id1, #id1], iterator_types = ["parallel"]} ins(%zw, %colq : tensor<i32>, tensor<24xi32>) outs(%ce : tensor<24xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %0 = arith.muli %x, %y : i32
    linalg.yield %0 : i32
  } -> tensor<24xi32>
  %k = linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wk : tensor<16x8xi8>, tensor<8x24xi8>) outs(%f : tensor<16x24xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<16x24xi32>
  %ke = tensor.expand_shape %k [[0, 1], [2]] output_shape [1, 16, 24] : tensor<16x24xi32> into tensor<1x16x24xi32>
  %corrk = linalg.generic {indexing_maps = [#s1, #id1, #id1], iterator_types = ["parallel"]} ins(%zw, %colk : tensor<i32>, tensor<24xi32>) outs(%ce : tensor<24xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %0 = arith.muli %x, %y : i32
    linalg.yield %0 : i32
  } -> tensor<24xi32>
  %oe = tensor.empty() : tensor<1x16x24xf32>
  %oq = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qe, %corrq : tensor<1x16x24xi32>, tensor<24xi32>) outs(%oe : tensor<1x16x24xf32>) {
  ^bb0(%s: i32, %c: i32, %o: f32):
    %0 = arith.subi %s, %c : i32
    %1 = arith.sitofp %0 : i32 to f32
    linalg.yield %1 : f32
  } -> tensor<1x16x24xf32>
  %ok = linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ke, %corrk : tensor<1x16x24xi32>, tensor<24xi32>) outs(%oe : tensor<1x16x24xf32>) {
  ^bb0(%s: i32, %c: i32, %o: f32):
    %0 = arith.subi %s, %c : i32
    %1 = arith.sitofp %0 : i32 to f32
    linalg.yield %1 : f32
  } -> tensor<1x16x24xf32>
  return %oq, %ok : tensor<1x16x24xf32>, tensor<1x16x24xf32>
}
// CHECK-LABEL: func.func @q_and_k
// CHECK:      %[[Q:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %arg1 :
// CHECK:      %[[QE:.*]] = tensor.expand_shape %[[Q]]
// CHECK:      %[[ZW:.*]] = linalg.generic {{.*}} ins(%arg3 : tensor<i8>)
// CHECK:      %[[CQ:.*]] = linalg.generic {{.*}} ins(%[[ZW]], %arg4 :
// CHECK:      %[[OE:.*]] = tensor.empty() : tensor<1x16x24xf32>
// CHECK-NEXT: %[[OQ:.*]] = linalg.generic {{.*}} ins(%[[QE]], %[[CQ]] :
// CHECK:      %[[K:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %arg2 :
// CHECK:      %[[KE:.*]] = tensor.expand_shape %[[K]]
// CHECK:      %[[CK:.*]] = linalg.generic {{.*}} ins(%[[ZW]], %arg5 :
// CHECK:      } -> tensor<24xi32>
// CHECK-NEXT: %[[OK:.*]] = linalg.generic {{.*}} ins(%[[KE]], %[[CK]] :
// CHECK:      return %[[OQ]], %[[OK]]

// -----

// Refused, nothing moves: a product whose result has a second user
// (@two_users); a consumer that reads what an op with memory effects made
// between them (@effects_between: a tensor read from a buffer written
// after the product); a consumer in another block (@other_block).
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_users(%a: tensor<16x8xf32>, %b: tensor<8x24xf32>, %c: tensor<16x24xf32>, %d: tensor<16x24xf32>)
    -> (tensor<16x24xf32>, tensor<16x24xf32>) {
  %p = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x24xf32>) outs(%c : tensor<16x24xf32>) -> tensor<16x24xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<16x24xf32>) outs(%d : tensor<16x24xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.mulf %v, %v : f32
    linalg.yield %0 : f32
  } -> tensor<16x24xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<16x24xf32>) outs(%c : tensor<16x24xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.addf %v, %v : f32
    linalg.yield %0 : f32
  } -> tensor<16x24xf32>
  %z = arith.addf %p, %x : tensor<16x24xf32>
  return %y, %z : tensor<16x24xf32>, tensor<16x24xf32>
}
// CHECK-LABEL: func.func @two_users
// CHECK:      linalg.matmul
// CHECK-NEXT: %[[X:.*]] = linalg.generic
// CHECK:      arith.mulf
// CHECK:      linalg.generic
// CHECK:      arith.addf %{{.*}}, %{{.*}} : f32

func.func @effects_between(%a: tensor<16x8xf32>, %b: tensor<8x24xf32>, %c: tensor<16x24xf32>,
                           %buf: memref<16x24xf32>, %v: f32) -> tensor<16x24xf32> {
  %p = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x24xf32>) outs(%c : tensor<16x24xf32>) -> tensor<16x24xf32>
  linalg.fill ins(%v : f32) outs(%buf : memref<16x24xf32>)
  %t = bufferization.to_tensor %buf restrict : memref<16x24xf32> to tensor<16x24xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %t : tensor<16x24xf32>, tensor<16x24xf32>) outs(%c : tensor<16x24xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %0 = arith.addf %x, %w : f32
    linalg.yield %0 : f32
  } -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}
// CHECK-LABEL: func.func @effects_between
// CHECK:      linalg.matmul
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: bufferization.to_tensor
// CHECK-NEXT: linalg.generic

func.func @other_block(%a: tensor<16x8xf32>, %b: tensor<8x24xf32>, %c: tensor<16x24xf32>, %d: tensor<16x24xf32>,
                       %cond: i1) -> tensor<16x24xf32> {
  %p = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x24xf32>) outs(%c : tensor<16x24xf32>) -> tensor<16x24xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%d : tensor<16x24xf32>) outs(%d : tensor<16x24xf32>) {
  ^bb0(%v: f32, %o: f32):
    %0 = arith.mulf %v, %v : f32
    linalg.yield %0 : f32
  } -> tensor<16x24xf32>
  %r = scf.if %cond -> tensor<16x24xf32> {
    %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<16x24xf32>) outs(%x : tensor<16x24xf32>) {
    ^bb0(%v: f32, %o: f32):
      %0 = arith.addf %v, %o : f32
      linalg.yield %0 : f32
    } -> tensor<16x24xf32>
    scf.yield %y : tensor<16x24xf32>
  } else {
    scf.yield %x : tensor<16x24xf32>
  }
  return %r : tensor<16x24xf32>
}
// CHECK-LABEL: func.func @other_block
// CHECK:      linalg.matmul
// CHECK-NEXT: linalg.generic
// CHECK:      arith.mulf
// CHECK:      scf.if
