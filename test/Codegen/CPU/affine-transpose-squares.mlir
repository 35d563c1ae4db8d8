// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-transpose-squares))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-transpose-squares,dl-affine-interchange,dl-affine-tile{only-strided}))' | FileCheck %s --check-prefix=KEPT
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-transpose-squares,canonicalize,cse,dl-lower-vector-transpose))' | FileCheck %s --check-prefix=LOWERED

// NCHW -> NHWC of a 10x10 image with 32 channels, for a target with 256-bit
// vectors: 8x8 squares (8 loads along W, a transpose, 8 stores along C);
// W's last 2 columns are the scalar edge. The other loops come first, in
// the output's order.
// CHECK-LABEL: func.func @nchw_to_nhwc
// CHECK: affine.for %[[N:.*]] = 0 to 2 {
// CHECK-NEXT: affine.for %[[H:.*]] = 0 to 10 {
// CHECK-NEXT: affine.for %[[C:.*]] = 0 to 32 step 8 {
// CHECK-NEXT: affine.for %[[W:.*]] = 0 to 8 step 8 {
// CHECK-COUNT-8: affine.vector_load %{{.*}} : memref<2x32x10x10xf32>, vector<8xf32>
// CHECK: vector.shape_cast %{{.*}} : vector<64xf32> to vector<8x8xf32>
// CHECK-NEXT: vector.transpose %{{.*}}, [1, 0] : vector<8x8xf32> to vector<8x8xf32>
// CHECK-COUNT-8: affine.vector_store %{{.*}} : memref<2x10x10x32xf32>, vector<8xf32>
// CHECK: affine.for %{{.*}} = 0 to 32 {
// CHECK-NEXT: affine.for %{{.*}} = 8 to 10 {
// CHECK-NEXT: affine.load
// CHECK-NEXT: affine.store
// CHECK: } {dl.transpose_squares}
// KEPT-LABEL: func.func @nchw_to_nhwc
// KEPT: affine.for %{{.*}} = 0 to 32 step 8 {
// KEPT-NEXT: affine.for %{{.*}} = 0 to 8 step 8 {
// KEPT: } {dl.transpose_squares}
// LOWERED-LABEL: func.func @nchw_to_nhwc
// LOWERED-NOT: vector.transpose
// LOWERED: vector.shuffle %{{.*}}, %{{.*}} [0, 8, 16, 24, 32, 40, 48, 56, 1, 9,
module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "haswell", features = "+avx2,+fma", vector_bits = 256>} {
func.func @nchw_to_nhwc(%in: memref<2x32x10x10xf32>, %out: memref<2x10x10x32xf32>) {
  affine.for %n = 0 to 2 {
    affine.for %h = 0 to 10 {
      affine.for %w = 0 to 10 {
        affine.for %c = 0 to 32 {
          %v = affine.load %in[%n, %c, %h, %w] : memref<2x32x10x10xf32>
          affine.store %v, %out[%n, %h, %w, %c] : memref<2x10x10x32xf32>
        }
      }
    }
  }
  return
}
}

// -----

// A 2-D transpose on an AVX-512 target: 16x16 squares, lowered by the
// 16x16 shuffle sequence; 20 rows leave an edge of 4.
// CHECK-LABEL: func.func @matrix
// CHECK: affine.for %{{.*}} = 0 to 32 step 16 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 16 step 16 {
// CHECK-COUNT-16: affine.vector_load %{{.*}} : memref<32x20xf32>, vector<16xf32>
// CHECK: vector.transpose %{{.*}}, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
// CHECK: } {dl.transpose_squares}
// CHECK: affine.for %{{.*}} = 0 to 32 {
// CHECK-NEXT: affine.for %{{.*}} = 16 to 20 {
// LOWERED-LABEL: func.func @matrix
// LOWERED-NOT: vector.transpose
module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "znver4", features = "+avx512f", vector_bits = 512>} {
func.func @matrix(%in: memref<32x20xf32>, %out: memref<20x32xf32>) {
  affine.for %i = 0 to 20 {
    affine.for %j = 0 to 32 {
      %v = affine.load %in[%j, %i] : memref<32x20xf32>
      affine.store %v, %out[%i, %j] : memref<20x32xf32>
    }
  }
  return
}
}

// -----

// Left alone: a plain copy (contiguous on both sides: the vectorizer's), a
// transpose with a dimension under 4 (a single channel), dynamic bounds, a
// nest that computes (not a copy), and an output strided along its last
// dimension.
// CHECK-LABEL: func.func @refused
// CHECK-NOT: vector.transpose
// CHECK-NOT: dl.transpose_squares
// CHECK: return
module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "haswell", features = "+avx2,+fma", vector_bits = 256>} {
func.func @refused(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %c: memref<16x3xf32>,
                   %d: memref<3x16xf32>, %e: memref<?x16xf32>, %f: memref<16x?xf32>, %n: index,
                   %g: memref<16x16xf32, strided<[1, 16]>>) {
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %v = affine.load %a[%i, %j] : memref<16x16xf32>
      affine.store %v, %b[%i, %j] : memref<16x16xf32>
    }
  }
  affine.for %i = 0 to 3 {
    affine.for %j = 0 to 16 {
      %v = affine.load %c[%j, %i] : memref<16x3xf32>
      affine.store %v, %d[%i, %j] : memref<3x16xf32>
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to %n {
      %v = affine.load %e[%j, %i] : memref<?x16xf32>
      affine.store %v, %f[%i, %j] : memref<16x?xf32>
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %v = affine.load %a[%j, %i] : memref<16x16xf32>
      %w = arith.negf %v : f32
      affine.store %w, %b[%i, %j] : memref<16x16xf32>
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %v = affine.load %a[%j, %i] : memref<16x16xf32>
      affine.store %v, %g[%i, %j] : memref<16x16xf32, strided<[1, 16]>>
    }
  }
  return
}
}

// -----

// K^T read from a fused QKV buffer (Swin-T: the slice is an index a
// constant away from its loop): squares too, the offset kept in each load;
// an index scaled by its loop (a strided slice) is refused.
// CHECK-LABEL: func.func @k_from_qkv
// CHECK: affine.for %{{.*}} = 0 to 48 step 8 {
// CHECK: affine.vector_load %arg0[%{{.*}} + 1, %{{.*}}, %{{.*}}] : memref<3x49x32xf32>, vector<8xf32>
// CHECK: vector.transpose
// CHECK-LABEL: func.func @strided_slice
// CHECK-NOT: vector.transpose
module attributes {dl.target = #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "haswell", features = "+avx2,+fma", vector_bits = 256>} {
func.func @k_from_qkv(%qkv: memref<3x49x32xf32>, %out: memref<1x32x49xf32>) {
  affine.for %a = 0 to 1 {
    affine.for %d = 0 to 32 {
      affine.for %e = 0 to 49 {
        %0 = affine.load %qkv[%a + 1, %e, %d] : memref<3x49x32xf32>
        affine.store %0, %out[%a, %d, %e] : memref<1x32x49xf32>
      }
    }
  }
  return
}
func.func @strided_slice(%x: memref<3x98x32xf32>, %out: memref<1x32x49xf32>) {
  affine.for %a = 0 to 1 {
    affine.for %d = 0 to 32 {
      affine.for %e = 0 to 49 {
        %0 = affine.load %x[%a, %e * 2, %d] : memref<3x98x32xf32>
        affine.store %0, %out[%a, %d, %e] : memref<1x32x49xf32>
      }
    }
  }
  return
}
}
