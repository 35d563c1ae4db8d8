// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2 pack=false}))' | FileCheck %s

// The output filled with a constant just before the accumulation (the nest
// of linalg.fill): each tile starts from that constant in registers instead
// of loading it, and the fill goes, since the tiles write every element
// (8 x 32 = 2 row tiles x 2 column tiles of 4 x 16).
func.func @filled(%a: memref<8x12xf32>, %b: memref<12x32xf32>) -> memref<8x32xf32> {
  %c = memref.alloc() : memref<8x32xf32>
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 32 {
      affine.store %zero, %c[%i, %j] : memref<8x32xf32>
    }
  }
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 12 {
      affine.for %j = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<8x12xf32>
        %1 = affine.load %b[%k, %j] : memref<12x32xf32>
        %2 = affine.load %c[%i, %j] : memref<8x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x32xf32>
      }
    }
  }
  return %c : memref<8x32xf32>
}
// CHECK-LABEL: func.func @filled
// CHECK:         %[[C:.*]] = memref.alloc
// CHECK-NOT:     affine.store
// CHECK:         affine.for %{{.*}} = 0 to 8 step 4 {
// CHECK:           affine.for %{{.*}} = 0 to 32 step 16 {
// CHECK-NOT:         affine.vector_load %[[C]]
// CHECK:             %[[START:.*]] = vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK:             affine.for %{{.*}} = 0 to 12 iter_args(%{{.*}} = %[[START]], %{{.*}} = %[[START]]
// CHECK:           affine.vector_store %{{.*}}, %[[C]]

// -----

// 18 columns: the tiles cover 16, the original nest the 2 left over (fewer
// than a 4-lane vector), which reads the fill: only those 2 columns are
// filled, and the tiles start from the constant.
func.func @remainder(%a: memref<8x12xf32>, %b: memref<12x18xf32>) -> memref<8x18xf32> {
  %c = memref.alloc() : memref<8x18xf32>
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 18 {
      affine.store %zero, %c[%i, %j] : memref<8x18xf32>
    }
  }
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 12 {
      affine.for %j = 0 to 18 {
        %0 = affine.load %a[%i, %k] : memref<8x12xf32>
        %1 = affine.load %b[%k, %j] : memref<12x18xf32>
        %2 = affine.load %c[%i, %j] : memref<8x18xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x18xf32>
      }
    }
  }
  return %c : memref<8x18xf32>
}
// CHECK-LABEL: func.func @remainder
// CHECK:         affine.for %{{.*}} = 0 to 8 {
// CHECK-NEXT:      affine.for %{{.*}} = 16 to 18 {
// CHECK-NEXT:        affine.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<8x18xf32>
// CHECK-NOT:     affine.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<8x18xf32>
// CHECK:         vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK:         affine.vector_store
// CHECK:         affine.for %{{.*}} = 0 to 8 {
// CHECK:           affine.for %{{.*}} = 16 to 18 {
// CHECK:             affine.load %{{.*}} : memref<8x18xf32>

// -----

// Something between the fill and the accumulation reads the output: the
// tiles load their start from memory, and the fill stays.
func.func @read_between(%a: memref<8x12xf32>, %b: memref<12x32xf32>, %d: memref<8x32xf32>) -> memref<8x32xf32> {
  %c = memref.alloc() : memref<8x32xf32>
  %zero = arith.constant 1.0 : f32
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 32 {
      affine.store %zero, %c[%i, %j] : memref<8x32xf32>
    }
  }
  memref.copy %c, %d : memref<8x32xf32> to memref<8x32xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 12 {
      affine.for %j = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<8x12xf32>
        %1 = affine.load %b[%k, %j] : memref<12x32xf32>
        %2 = affine.load %c[%i, %j] : memref<8x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x32xf32>
      }
    }
  }
  return %c : memref<8x32xf32>
}
// CHECK-LABEL: func.func @read_between
// CHECK:         affine.store
// CHECK:         memref.copy
// CHECK-NOT:     vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK:         affine.vector_load %{{.*}} : memref<8x32xf32>, vector<8xf32>

// -----

// A write through a view of the output between the fill and the
// accumulation: the output no longer holds only the constant; the tiles
// load their start from memory, and the fill stays.
func.func @view_written_between(%a: memref<8x12xf32>, %b: memref<12x32xf32>) -> memref<8x32xf32> {
  %c = memref.alloc() : memref<8x32xf32>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 32 {
      affine.store %zero, %c[%i, %j] : memref<8x32xf32>
    }
  }
  %row = memref.subview %c[0, 0] [1, 32] [1, 1] : memref<8x32xf32> to memref<1x32xf32, strided<[32, 1]>>
  affine.store %one, %row[0, 3] : memref<1x32xf32, strided<[32, 1]>>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 12 {
      affine.for %j = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<8x12xf32>
        %1 = affine.load %b[%k, %j] : memref<12x32xf32>
        %2 = affine.load %c[%i, %j] : memref<8x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x32xf32>
      }
    }
  }
  return %c : memref<8x32xf32>
}
// CHECK-LABEL: func.func @view_written_between
// CHECK:         affine.store
// CHECK:         memref.subview
// CHECK-NOT:     vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK:         affine.vector_load %{{.*}} : memref<8x32xf32>, vector<8xf32>

// -----

// The epilogue reads C through an expand_shape (an NHWC 1x1 convolution's
// [N*H*W, F] GEMM read as [N, H, W, F] by its bias + relu): the view is C,
// nothing else reads it, so the fill goes here too and the tiles start
// from the constant.
// CHECK-LABEL: func.func @epilogue_through_a_view
// CHECK-NOT:     affine.store
// CHECK:         vector.broadcast %{{.*}} : f32 to vector<8xf32>
// CHECK:         arith.maximumf
// CHECK:         affine.vector_store %{{.*}}, %{{.*}} : memref<2x4x32xf32>, vector<8xf32>
// CHECK:         } {dl.fused_epilogue = ["arith.maximumf"]}
func.func @epilogue_through_a_view(%a: memref<8x12xf32>, %b: memref<12x32xf32>) -> memref<2x4x32xf32> {
  %c = memref.alloc() : memref<8x32xf32>
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 32 {
      affine.store %zero, %c[%i, %j] : memref<8x32xf32>
    }
  }
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 12 {
      affine.for %j = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<8x12xf32>
        %1 = affine.load %b[%k, %j] : memref<12x32xf32>
        %2 = affine.load %c[%i, %j] : memref<8x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x32xf32>
      }
    }
  }
  %v = memref.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 32] : memref<8x32xf32> into memref<2x4x32xf32>
  %d = memref.alloc() : memref<2x4x32xf32>
  affine.for %n = 0 to 2 {
    affine.for %h = 0 to 4 {
      affine.for %f = 0 to 32 {
        %0 = affine.load %v[%n, %h, %f] : memref<2x4x32xf32>
        %1 = arith.maximumf %0, %zero : f32
        affine.store %1, %d[%n, %h, %f] : memref<2x4x32xf32>
      }
    }
  }
  memref.dealloc %c : memref<8x32xf32>
  return %d : memref<2x4x32xf32>
}
