// RUN: dl-opt %s --dl-collapse-batch-matmul --split-input-file | FileCheck %s

#a = affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>
#b = affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>
#c = affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>

// Two batch dimensions in A, B and C (attention's [batch, heads, ...]): one
// linalg.batch_matmul over views merging them; f16 inputs widened to the
// f32 accumulator as the named op does.
// CHECK-LABEL: func.func @two_batch_dims
// CHECK: %[[A:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1], [2], [3]] : memref<4x3x17x40xf16> into memref<12x17x40xf16>
// CHECK: %[[B:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : memref<4x3x40x9xf16> into memref<12x40x9xf16>
// CHECK: %[[C:.*]] = memref.collapse_shape %arg2 {{\[}}[0, 1], [2], [3]] : memref<4x3x17x9xf32> into memref<12x17x9xf32>
// CHECK: linalg.batch_matmul ins(%[[A]], %[[B]] : memref<12x17x40xf16>, memref<12x40x9xf16>) outs(%[[C]] : memref<12x17x9xf32>)
// CHECK-NOT: linalg.generic
func.func @two_batch_dims(%x: memref<4x3x17x40xf16>, %y: memref<4x3x40x9xf16>, %z: memref<4x3x17x9xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<4x3x17x40xf16>, memref<4x3x40x9xf16>) outs(%z : memref<4x3x17x9xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  }
  return
}

// -----

// A batch against a 2-D B (x @ W with a batched x): one linalg.matmul, the
// batch merged into the rows of A and C; dynamic batch sizes too.
// CHECK-LABEL: func.func @batch_against_2d
// CHECK: %[[A:.*]] = memref.collapse_shape %arg0 {{\[}}[0, 1, 2], [3]] : memref<?x3x17x40xf32> into memref<?x40xf32>
// CHECK: %[[C:.*]] = memref.collapse_shape %arg2 {{\[}}[0, 1, 2], [3]] : memref<?x3x17x9xf32> into memref<?x9xf32>
// CHECK: linalg.matmul ins(%[[A]], %arg1 : memref<?x40xf32>, memref<40x9xf32>) outs(%[[C]] : memref<?x9xf32>)
func.func @batch_against_2d(%x: memref<?x3x17x40xf32>, %y: memref<40x9xf32>, %z: memref<?x3x17x9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (k, n)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<?x3x17x40xf32>, memref<40x9xf32>) outs(%z : memref<?x3x17x9xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Left alone: a broadcast batch dimension (A's first is 1), a transposed B,
// a strided view, an integer product, a body that is not out + a * b.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: collapse_shape
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: linalg.batch_matmul
// CHECK-NOT: linalg.matmul
func.func @left_alone(%x1: memref<1x3x17x40xf32>, %y: memref<4x3x40x9xf32>, %z: memref<4x3x17x9xf32>,
                      %yt: memref<4x3x9x40xf32>, %xs: memref<4x3x17x40xf32, strided<[4080, 1360, 80, 1]>>,
                      %xi: memref<4x3x17x40xi32>, %yi: memref<4x3x40x9xi32>, %zi: memref<4x3x17x9xi32>,
                      %x: memref<4x3x17x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n, k) -> (0, b1, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x1, %y : memref<1x3x17x40xf32>, memref<4x3x40x9xf32>) outs(%z : memref<4x3x17x9xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, n, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %yt : memref<4x3x17x40xf32>, memref<4x3x9x40xf32>) outs(%z : memref<4x3x17x9xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%xs, %y : memref<4x3x17x40xf32, strided<[4080, 1360, 80, 1]>>, memref<4x3x40x9xf32>) outs(%z : memref<4x3x17x9xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%xi, %yi : memref<4x3x17x40xi32>, memref<4x3x40x9xi32>) outs(%zi : memref<4x3x17x9xi32>) {
  ^bb0(%in: i32, %in_0: i32, %out: i32):
    %0 = arith.muli %in, %in_0 : i32
    %1 = arith.addi %out, %0 : i32
    linalg.yield %1 : i32
  }
  linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>,
                                   affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<4x3x17x40xf32>, memref<4x3x40x9xf32>) outs(%z : memref<4x3x17x9xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.maximumf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
