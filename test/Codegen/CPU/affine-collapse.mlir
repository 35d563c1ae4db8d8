// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-collapse))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-affine-collapse,canonicalize))' | FileCheck %s --check-prefix=CANON

// A fill of [4, 12, 49, 49] (Swin-T's attention scores): one loop over
// every element, on a collapsed view made before it.
// (Without the canonicalizer the views chain, one per merge.)
// CHECK-LABEL: func.func @fill
// CHECK-COUNT-3: memref.collapse_shape
// CHECK: affine.for %[[I:.*]] = 0 to 115248 {
// CHECK-NEXT: affine.store %{{.*}}[%[[I]]] : memref<115248xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return
// CANON-LABEL: func.func @fill
// CANON: %[[VIEW:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3]] : memref<4x12x49x49xf32> into memref<115248xf32>
// CANON: affine.for %[[I:.*]] = 0 to 115248 {
// CANON-NEXT: affine.store %{{.*}}, %[[VIEW]][%[[I]]] : memref<115248xf32>
func.func @fill(%out: memref<4x12x49x49xf32>) {
  %cst = arith.constant 0.0 : f32
  affine.for %a = 0 to 4 {
    affine.for %b = 0 to 12 {
      affine.for %c = 0 to 49 {
        affine.for %d = 0 to 49 {
          affine.store %cst, %out[%a, %b, %c, %d] : memref<4x12x49x49xf32>
        }
      }
    }
  }
  return
}

// -----

// A bias broadcast over the first dimension: the three inner loops merge
// (the bias reads them too), the first stays (the bias does not read it).
// CANON-LABEL: func.func @broadcast_bias
// CANON-DAG: %[[X:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1, 2, 3]] : memref<4x12x49x49xf32> into memref<4x28812xf32>
// CANON-DAG: %[[B:.*]] = memref.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : memref<1x12x49x49xf32> into memref<1x28812xf32>
// CANON-DAG: %[[O:.*]] = memref.collapse_shape %arg2 {{\[}}[0], [1, 2, 3]] : memref<4x12x49x49xf32> into memref<4x28812xf32>
// CANON: affine.for %[[A:.*]] = 0 to 4 {
// CANON-NEXT: affine.for %[[I:.*]] = 0 to 28812 {
// CANON-NEXT: affine.load %[[X]][%[[A]], %[[I]]]
// CANON-NEXT: affine.load %[[B]][0, %[[I]]]
// CANON-NEXT: arith.addf
// CANON-NEXT: affine.store %{{.*}}, %[[O]][%[[A]], %[[I]]]
func.func @broadcast_bias(%x: memref<4x12x49x49xf32>, %bias: memref<1x12x49x49xf32>,
                          %out: memref<4x12x49x49xf32>) {
  affine.for %a = 0 to 4 {
    affine.for %b = 0 to 12 {
      affine.for %c = 0 to 49 {
        affine.for %d = 0 to 49 {
          %0 = affine.load %x[%a, %b, %c, %d] : memref<4x12x49x49xf32>
          %1 = affine.load %bias[0, %b, %c, %d] : memref<1x12x49x49xf32>
          %2 = arith.addf %0, %1 : f32
          affine.store %2, %out[%a, %b, %c, %d] : memref<4x12x49x49xf32>
        }
      }
    }
  }
  return
}

// -----

// A value independent of both loops (a scalar scale) and an in-place
// update (the same memref loaded and stored at the same element) merge;
// a dynamic outer bound stays a loop of its own.
// CANON-LABEL: func.func @in_place_dynamic_batch
// CANON: memref.collapse_shape %arg0 {{\[}}[0], [1, 2]] : memref<?x7x96xf32> into memref<?x672xf32>
// CANON: affine.for %[[N:.*]] = 0 to %{{.*}} {
// CANON-NEXT: affine.for %[[I:.*]] = 0 to 672 {
// CANON: affine.load %arg1[] : memref<f32>
func.func @in_place_dynamic_batch(%x: memref<?x7x96xf32>, %scale: memref<f32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x7x96xf32>
  affine.for %a = 0 to %n {
    affine.for %b = 0 to 7 {
      affine.for %c = 0 to 96 {
        %0 = affine.load %x[%a, %b, %c] : memref<?x7x96xf32>
        %1 = affine.load %scale[] : memref<f32>
        %2 = arith.mulf %0, %1 : f32
        affine.store %2, %x[%a, %b, %c] : memref<?x7x96xf32>
      }
    }
  }
  return
}

// -----

// A subview contiguous in its two inner dimensions but not across the
// first (rows of 64 in a buffer of rows of 128): the inner pair merges,
// the outer one does not.
// CHECK-LABEL: func.func @strided_subview
// CHECK: affine.for %{{.*}} = 0 to 8 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 64 {
// CANON-LABEL: func.func @strided_subview
// CANON: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<8x4x16xf32, strided<[8192, 16, 1]>> into memref<8x64xf32, strided<[8192, 1]>>
// CANON: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : memref<8x4x16xf32> into memref<8x64xf32>
// CANON: affine.for %{{.*}} = 0 to 8 {
// CANON-NEXT: affine.for %{{.*}} = 0 to 64 {
func.func @strided_subview(%x: memref<8x4x16xf32, strided<[8192, 16, 1]>>, %out: memref<8x4x16xf32>) {
  affine.for %a = 0 to 8 {
    affine.for %b = 0 to 4 {
      affine.for %c = 0 to 16 {
        %0 = affine.load %x[%a, %b, %c] : memref<8x4x16xf32, strided<[8192, 16, 1]>>
        affine.store %0, %out[%a, %b, %c] : memref<8x4x16xf32>
      }
    }
  }
  return
}

// -----

// Refused: a row broadcast (the row maximum read by the outer loop only).
// CHECK-LABEL: func.func @row_broadcast
// CHECK-NOT: collapse_shape
// CHECK: affine.for %{{.*}} = 0 to 49 {
// CHECK: affine.for %{{.*}} = 0 to 49 {
func.func @row_broadcast(%x: memref<49x49xf32>, %max: memref<49xf32>, %out: memref<49x49xf32>) {
  affine.for %c = 0 to 49 {
    affine.for %d = 0 to 49 {
      %0 = affine.load %x[%c, %d] : memref<49x49xf32>
      %1 = affine.load %max[%c] : memref<49xf32>
      %2 = arith.subf %0, %1 : f32
      affine.store %2, %out[%c, %d] : memref<49x49xf32>
    }
  }
  return
}

// -----

// Refused: the inner loop covers part of its dimension (a tile), so the
// rows are not one contiguous range.
// CHECK-LABEL: func.func @partial_rows
// CHECK-NOT: collapse_shape
// CHECK: affine.for %{{.*}} = 0 to 4 {
// CHECK: affine.for %{{.*}} = 0 to 32 {
func.func @partial_rows(%out: memref<4x49xf32>) {
  %cst = arith.constant 1.0 : f32
  affine.for %a = 0 to 4 {
    affine.for %b = 0 to 32 {
      affine.store %cst, %out[%a, %b] : memref<4x49xf32>
    }
  }
  return
}

// -----

// Refused: an index used as a value (linalg.index lowered), and a
// transpose (the loops in the other order in one access).
// CHECK-LABEL: func.func @index_value
// CHECK-NOT: collapse_shape
// CHECK-LABEL: func.func @transpose
// CHECK-NOT: collapse_shape
func.func @index_value(%out: memref<4x8xindex>) {
  affine.for %a = 0 to 4 {
    affine.for %b = 0 to 8 {
      affine.store %b, %out[%a, %b] : memref<4x8xindex>
    }
  }
  return
}
func.func @transpose(%x: memref<8x4xf32>, %out: memref<4x8xf32>) {
  affine.for %a = 0 to 4 {
    affine.for %b = 0 to 8 {
      %0 = affine.load %x[%b, %a] : memref<8x4xf32>
      affine.store %0, %out[%a, %b] : memref<4x8xf32>
    }
  }
  return
}

// -----

// Refused: a memref read both through the loops and at one element
// (dependence analysis would see the collapsed view and the memref as two
// memrefs), a reduction carried in iter_args, and a loop of step 2.
// CHECK-LABEL: func.func @mixed_access
// CHECK-NOT: collapse_shape
// CHECK-LABEL: func.func @carried
// CHECK-NOT: collapse_shape
// CHECK-LABEL: func.func @step_two
// CHECK-NOT: collapse_shape
// CHECK: affine.for %{{.*}} = 0 to 8 step 2
func.func @mixed_access(%x: memref<4x8xf32>) {
  affine.for %a = 0 to 4 {
    affine.for %b = 0 to 8 {
      %0 = affine.load %x[%a, %b] : memref<4x8xf32>
      %1 = affine.load %x[0, 0] : memref<4x8xf32>
      %2 = arith.addf %0, %1 : f32
      affine.store %2, %x[%a, %b] : memref<4x8xf32>
    }
  }
  return
}
func.func @carried(%x: memref<4x8xf32>, %out: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  affine.for %a = 0 to 4 {
    %sum = affine.for %b = 0 to 8 iter_args(%acc = %zero) -> f32 {
      %0 = affine.load %x[%a, %b] : memref<4x8xf32>
      %1 = arith.addf %acc, %0 : f32
      affine.yield %1 : f32
    }
    affine.store %sum, %out[%a] : memref<4xf32>
  }
  return
}
func.func @step_two(%out: memref<4x8xf32>) {
  %cst = arith.constant 1.0 : f32
  affine.for %a = 0 to 4 {
    affine.for %b = 0 to 8 step 2 {
      affine.store %cst, %out[%a, %b] : memref<4x8xf32>
    }
  }
  return
}

// -----

// A per-channel scale of an image (EfficientNet's squeeze-excitation): the
// channel loop cannot merge (the scale is read by it alone), the rows and
// columns around it do; a nested loop whose bound reads an outer index
// keeps both.
// CANON-LABEL: func.func @channel_scale
// CANON-DAG: memref.collapse_shape %arg0 {{\[}}[0], [1, 2], [3]] : memref<2x14x14x480xf32> into memref<2x196x480xf32>
// CANON: affine.for %{{.*}} = 0 to 2 {
// CANON-NEXT: affine.for %[[P:.*]] = 0 to 196 {
// CANON-NEXT: affine.for %[[C:.*]] = 0 to 480 {
// CANON-NEXT: affine.load %{{.*}}[%{{.*}}, %[[P]], %[[C]]] : memref<2x196x480xf32>
// CANON-NEXT: affine.load %arg1[%{{.*}}, %[[C]]] : memref<2x480xf32>
// CHECK-LABEL: func.func @triangle
// CHECK-NOT: collapse_shape
// CHECK: return
func.func @channel_scale(%x: memref<2x14x14x480xf32>, %scale: memref<2x480xf32>,
                         %out: memref<2x14x14x480xf32>) {
  affine.for %n = 0 to 2 {
    affine.for %h = 0 to 14 {
      affine.for %w = 0 to 14 {
        affine.for %c = 0 to 480 {
          %0 = affine.load %x[%n, %h, %w, %c] : memref<2x14x14x480xf32>
          %1 = affine.load %scale[%n, %c] : memref<2x480xf32>
          %2 = arith.mulf %0, %1 : f32
          affine.store %2, %out[%n, %h, %w, %c] : memref<2x14x14x480xf32>
        }
      }
    }
  }
  return
}
func.func @triangle(%x: memref<8x8x8xf32>) {
  %cst = arith.constant 0.0 : f32
  affine.for %a = 0 to 8 {
    affine.for %b = 0 to 8 {
      affine.for %c = 0 to affine_map<(d0) -> (d0)>(%b) {
        affine.store %cst, %x[%a, %b, %c] : memref<8x8x8xf32>
      }
    }
  }
  return
}
