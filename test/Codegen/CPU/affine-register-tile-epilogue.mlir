// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2 pack=false},canonicalize,cse))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2 pack=false reduction-block=16}))' | FileCheck %s --check-prefix=BLOCK
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2 pack=false epilogue=false}))' | FileCheck %s --check-prefix=OFF
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{report=true}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Epilogue fusion: the elementwise nest after a matmul (bias + relu, in
// place) runs on each 4x16 tile in registers after the k loop; its bias is
// a vector load (contiguous along the columns). The 8 columns the tiles
// leave (32..40, one vector) get tiles of one vector with the same epilogue.
// CHECK-LABEL: func @bias_relu
// CHECK-SAME: attributes {dl.fused_epilogues = 1 : i64}
// CHECK: affine.for %[[I:.*]] = 0 to 8 step 4 {
// CHECK-NEXT: affine.for %[[J:.*]] = 0 to 32 step 16 {
// CHECK: %[[R:.*]]:8 = affine.for %{{.*}} = 0 to 32 iter_args
// CHECK: vector.fma
// CHECK: affine.yield
// CHECK: %[[B:.*]] = affine.vector_load %arg2[%[[J]]] : memref<40xf32>, vector<8xf32>
// CHECK: %[[S:.*]] = arith.addf %[[R]]#0, %[[B]] : vector<8xf32>
// CHECK: %[[M:.*]] = arith.maximumf %[[S]], %{{.*}} : vector<8xf32>
// CHECK: affine.vector_store %[[M]], %[[C:.*]][%[[I]], %[[J]]] : memref<8x40xf32>, vector<8xf32>
// CHECK-COUNT-7: arith.maximumf
// CHECK: } {dl.fused_epilogue = ["arith.addf", "arith.maximumf"]}
// The column remainder: 4x8 tiles, the epilogue on them too; no scalar
// nest is left.
// CHECK: affine.for %{{.*}} = 0 to 8 step 4 {
// CHECK-NEXT: affine.for %[[J2:.*]] = 32 to 40 step 8 {
// CHECK: %[[R2:.*]]:4 = affine.for %{{.*}} = 0 to 32 iter_args
// CHECK: affine.vector_load %arg2[%[[J2]]] : memref<40xf32>, vector<8xf32>
// CHECK-COUNT-4: arith.maximumf
// CHECK: } {dl.fused_epilogue = ["arith.addf", "arith.maximumf"]}
// CHECK-NOT: arith.mulf
// CHECK: return
// BLOCK-LABEL: func @bias_relu
// The reduction in blocks of 16: only the last block (k from 16) applies
// the epilogue; the first stores its partial sums to C.
// BLOCK: affine.for %[[KB:.*]] = 0 to 32 step 16 {
// BLOCK: affine.if #{{.*}}(%[[KB]]) {
// BLOCK: arith.maximumf {{.*}} : vector<8xf32>
// BLOCK: } else {
// BLOCK-NOT: arith.maximumf
// BLOCK: affine.vector_store
// OFF-LABEL: func @bias_relu
// OFF-NOT: dl.fused_epilogue
// OFF: affine.load %arg2[%{{.*}}] : memref<40xf32>
// OFF: arith.maximumf %{{.*}}, %{{.*}} : f32
// OFF-NOT: dl.fused_epilogue
// OFF: return
func.func @bias_relu(%a: memref<8x32xf32>, %b: memref<32x40xf32>, %bias: memref<40xf32>) -> memref<8x40xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x40xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 40 {
        %0 = affine.load %a[%i, %k] : memref<8x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x40xf32>
        %2 = affine.load %c[%i, %j] : memref<8x40xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x40xf32>
      }
    }
  }
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 40 {
      %0 = affine.load %c[%i, %j] : memref<8x40xf32>
      %1 = affine.load %bias[%j] : memref<40xf32>
      %2 = arith.addf %0, %1 : f32
      %3 = arith.maximumf %2, %zero : f32
      affine.store %3, %c[%i, %j] : memref<8x40xf32>
    }
  }
  return %c : memref<8x40xf32>
}

// -----

// Out of place, a residual input read at [i, j] (vector loads) and a scalar
// scale (broadcast); 6 rows: a 4-row tile and a 2-row tile, both fused, C
// never stored.
// CHECK-LABEL: func @residual
// CHECK: memref.alloc() : memref<6x16xf32>
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<6x16xf32>
// CHECK: affine.for %[[I:.*]] = 0 to 4 step 4 {
// CHECK: affine.for %[[J:.*]] = 0 to 16 step 16 {
// CHECK: affine.vector_load %arg2[%[[I]], %[[J]]] : memref<6x16xf32>, vector<8xf32>
// CHECK: vector.broadcast %arg3 : f32 to vector<8xf32>
// CHECK: arith.mulf
// CHECK: affine.vector_store %{{.*}}, %[[D]][%[[I]], %[[J]]] : memref<6x16xf32>, vector<8xf32>
// CHECK: } {dl.fused_epilogue = ["arith.addf", "arith.mulf"]}
// CHECK: affine.for %[[J2:.*]] = 0 to 16 step 16 {
// CHECK: affine.vector_store %{{.*}}, %[[D]][5, %[[J2]] + 8] : memref<6x16xf32>, vector<8xf32>
// CHECK: } {dl.fused_epilogue = ["arith.addf", "arith.mulf"]}
// CHECK-NOT: affine.for
// CHECK: return %[[D]]
func.func @residual(%a: memref<6x32xf32>, %b: memref<32x16xf32>, %r: memref<6x16xf32>, %s: f32) -> memref<6x16xf32> {
  %c = memref.alloc() : memref<6x16xf32>
  affine.for %i = 0 to 6 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<6x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<6x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<6x16xf32>
      }
    }
  }
  %d = memref.alloc() : memref<6x16xf32>
  affine.for %i = 0 to 6 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<6x16xf32>
      %1 = affine.load %r[%i, %j] : memref<6x16xf32>
      %2 = arith.addf %0, %1 : f32
      %3 = arith.mulf %2, %s : f32
      affine.store %3, %d[%i, %j] : memref<6x16xf32>
    }
  }
  memref.dealloc %c : memref<6x16xf32>
  return %d : memref<6x16xf32>
}

// -----

// An im2col GEMM's output [N*OH*OW, F] = [12, 16] read as [N, OH, OW, F] =
// [1, 3, 4, 16]: the epilogue's indices are the tile's rows split over
// (oh, ow) = (row floordiv 4, row mod 4), here folded into the stores (a
// tile's 4 rows start at a multiple of 4).
// CHECK-LABEL: func @expanded
// CHECK: affine.for %[[I:.*]] = 0 to 12 step 4 {
// CHECK-NEXT: affine.for %[[J:.*]] = 0 to 16 step 16 {
// CHECK: arith.maximumf
// CHECK-NEXT: affine.vector_store %{{.*}}, %{{.*}}[0, %[[I]] floordiv 4, 0, %[[J]]] : memref<1x3x4x16xf32>, vector<8xf32>
// CHECK: affine.vector_store %{{.*}}, %{{.*}}[0, %[[I]] floordiv 4, 3, %[[J]] + 8] : memref<1x3x4x16xf32>, vector<8xf32>
// CHECK: dl.fused_epilogue = ["arith.maximumf"]
// CHECK-NOT: affine.for
// CHECK: return
func.func @expanded(%a: memref<12x32xf32>, %b: memref<32x16xf32>) -> memref<1x3x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<12x16xf32>
  affine.for %i = 0 to 12 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<12x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<12x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<12x16xf32>
      }
    }
  }
  %e = memref.expand_shape %c [[0, 1, 2], [3]] output_shape [1, 3, 4, 16] : memref<12x16xf32> into memref<1x3x4x16xf32>
  %d = memref.alloc() : memref<1x3x4x16xf32>
  affine.for %n = 0 to 1 {
    affine.for %h = 0 to 3 {
      affine.for %w = 0 to 4 {
        affine.for %f = 0 to 16 {
          %0 = affine.load %e[%n, %h, %w, %f] : memref<1x3x4x16xf32>
          %1 = arith.maximumf %0, %zero : f32
          affine.store %1, %d[%n, %h, %w, %f] : memref<1x3x4x16xf32>
        }
      }
    }
  }
  memref.dealloc %c : memref<12x16xf32>
  return %d : memref<1x3x4x16xf32>
}

// -----

// A grouped product (a grouped convolution's shape): C [4, 32] written as
// [rows, group, column] = [4, 2, 16] through an expand_shape, and an
// epilogue whose loops run (g, i, j) while it indexes [i, g, j]
// (dl-affine-interchange puts the group loop outside): each loop is matched
// to the index it walks, so the bias is read at [g, j] on the tile.
// CHECK-LABEL: func @grouped_view
// CHECK-SAME: attributes {dl.fused_epilogues = 1 : i64}
// CHECK: affine.for %[[G:.*]] = 0 to 2 {
// CHECK: affine.for %[[I:.*]] = 0 to 4 step 4 {
// CHECK-NEXT: affine.for %[[J:.*]] = 0 to 16 step 16 {
// CHECK: vector.fma
// CHECK: %[[B:.*]] = affine.vector_load %arg2[%[[G]], %[[J]]] : memref<2x16xf32>, vector<8xf32>
// CHECK: arith.addf %{{.*}}, %[[B]] : vector<8xf32>
// CHECK: affine.vector_store %{{.*}}, %{{.*}}[%[[I]], %[[G]], %[[J]]] : memref<4x2x16xf32>, vector<8xf32>
// CHECK: dl.fused_epilogue = ["arith.addf"]
// CHECK-NOT: affine.for
// CHECK: return
func.func @grouped_view(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>, %bias: memref<2x16xf32>) -> memref<4x2x16xf32> {
  %c = memref.alloc() : memref<4x32xf32>
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [4, 2, 16] : memref<4x32xf32> into memref<4x2x16xf32>
  affine.for %g = 0 to 2 {
    affine.for %i = 0 to 4 {
      affine.for %k = 0 to 8 {
        affine.for %j = 0 to 16 {
          %0 = affine.load %a[%g, %i, %k] : memref<2x4x8xf32>
          %1 = affine.load %b[%g, %k, %j] : memref<2x8x16xf32>
          %2 = affine.load %cv[%i, %g, %j] : memref<4x2x16xf32>
          %3 = arith.mulf %0, %1 : f32
          %4 = arith.addf %2, %3 : f32
          affine.store %4, %cv[%i, %g, %j] : memref<4x2x16xf32>
        }
      }
    }
  }
  %d = memref.alloc() : memref<4x2x16xf32>
  affine.for %g = 0 to 2 {
    affine.for %i = 0 to 4 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %cv[%i, %g, %j] : memref<4x2x16xf32>
        %1 = affine.load %bias[%g, %j] : memref<2x16xf32>
        %2 = arith.addf %0, %1 : f32
        affine.store %2, %d[%i, %g, %j] : memref<4x2x16xf32>
      }
    }
  }
  memref.dealloc %c : memref<4x32xf32>
  return %d : memref<4x2x16xf32>
}

// -----

// Refused: the epilogue's innermost loop walks the group, not the columns
// (its vectors would not be the tile's).
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: its innermost loop does not walk the output's last dimension
// CHECK-LABEL: func @grouped_view_columns_outside
// CHECK-NOT: dl.fused_epilogue
// CHECK: arith.negf
func.func @grouped_view_columns_outside(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>) -> memref<4x2x16xf32> {
  %c = memref.alloc() : memref<4x32xf32>
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [4, 2, 16] : memref<4x32xf32> into memref<4x2x16xf32>
  affine.for %g = 0 to 2 {
    affine.for %i = 0 to 4 {
      affine.for %k = 0 to 8 {
        affine.for %j = 0 to 16 {
          %0 = affine.load %a[%g, %i, %k] : memref<2x4x8xf32>
          %1 = affine.load %b[%g, %k, %j] : memref<2x8x16xf32>
          %2 = affine.load %cv[%i, %g, %j] : memref<4x2x16xf32>
          %3 = arith.mulf %0, %1 : f32
          %4 = arith.addf %2, %3 : f32
          affine.store %4, %cv[%i, %g, %j] : memref<4x2x16xf32>
        }
      }
    }
  }
  %d = memref.alloc() : memref<4x2x16xf32>
  affine.for %i = 0 to 4 {
    affine.for %j = 0 to 16 {
      affine.for %g = 0 to 2 {
        %0 = affine.load %cv[%i, %g, %j] : memref<4x2x16xf32>
        %1 = arith.negf %0 : f32
        affine.store %1, %d[%i, %g, %j] : memref<4x2x16xf32>
      }
    }
  }
  memref.dealloc %c : memref<4x32xf32>
  return %d : memref<4x2x16xf32>
}

// -----

// Refused: the epilogue reads C transposed (an element another tile holds).
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: it reads the output at another index than its loops' (an element the tile does not hold)
// CHECK-LABEL: func @transposed_read
// CHECK-NOT: dl.fused_epilogue
// CHECK: affine.load %{{.*}}[%[[J:.*]], %[[I:.*]]] : memref<16x16xf32>
// CHECK: arith.negf
func.func @transposed_read(%a: memref<16x32xf32>, %b: memref<32x16xf32>) -> memref<16x16xf32> {
  %c = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  %d = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%j, %i] : memref<16x16xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %d[%i, %j] : memref<16x16xf32>
    }
  }
  memref.dealloc %c : memref<16x16xf32>
  return %d : memref<16x16xf32>
}

// -----

// Refused: C is returned too (out of place, its tiles would never hold the
// final sums).
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: the output is used after it (it would keep partial sums in the tiles' place)
// CHECK-LABEL: func @used_after
// CHECK-NOT: dl.fused_epilogue
// CHECK: arith.negf
func.func @used_after(%a: memref<16x32xf32>, %b: memref<32x16xf32>) -> (memref<16x16xf32>, memref<16x16xf32>) {
  %c = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  %d = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %d[%i, %j] : memref<16x16xf32>
    }
  }
  return %c, %d : memref<16x16xf32>, memref<16x16xf32>
}

// -----

// Refused: D shares the arena bytes of A (as dl-plan-memory could place
// them), and the tiles still read A while the epilogue writes D.
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: its result may overlap an input of the accumulation, which the tiles still read while it is written
// CHECK-LABEL: func @overlaps_input
// CHECK-NOT: dl.fused_epilogue
// CHECK: arith.negf
func.func @overlaps_input(%b: memref<32x16xf32>) -> memref<16x16xf32> {
  %arena = memref.alloc() : memref<4096xi8>
  %c0 = arith.constant 0 : index
  %c2048 = arith.constant 2048 : index
  %one = arith.constant 1.0 : f32
  %a = memref.view %arena[%c0][] : memref<4096xi8> to memref<16x32xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.store %one, %a[%i, %k] : memref<16x32xf32>
    }
  }
  %c = memref.view %arena[%c2048][] : memref<4096xi8> to memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  %d = memref.view %arena[%c0][] : memref<4096xi8> to memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %d[%i, %j] : memref<16x16xf32>
    }
  }
  %r = memref.alloc() : memref<16x16xf32>
  memref.copy %d, %r : memref<16x16xf32> to memref<16x16xf32>
  memref.dealloc %arena : memref<4096xi8>
  return %r : memref<16x16xf32>
}

// -----

// Refused: a loop index used as a value, and an input read across the
// columns (R[j, i]).
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: it uses a loop index as a value
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: it reads an input neither invariant in nor contiguous along the columns
// CHECK-LABEL: func @index_and_strided
// CHECK-NOT: dl.fused_epilogue
// CHECK: arith.index_cast
// CHECK-NOT: dl.fused_epilogue
// CHECK: return
func.func @index_and_strided(%a: memref<16x32xf32>, %b: memref<32x16xf32>, %r: memref<16x16xf32>) -> (memref<16x16xf32>, memref<16x16xf32>) {
  %c = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      %1 = arith.index_cast %j : index to i32
      %2 = arith.sitofp %1 : i32 to f32
      %3 = arith.addf %0, %2 : f32
      affine.store %3, %c[%i, %j] : memref<16x16xf32>
    }
  }
  %e = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %e[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %e[%i, %j] : memref<16x16xf32>
      }
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %e[%i, %j] : memref<16x16xf32>
      %1 = affine.load %r[%j, %i] : memref<16x16xf32>
      %2 = arith.addf %0, %1 : f32
      affine.store %2, %e[%i, %j] : memref<16x16xf32>
    }
  }
  return %c, %e : memref<16x16xf32>, memref<16x16xf32>
}

// -----

// Into the interior of a padded buffer (a depthwise convolution's input, as
// dl-unshare-fills leaves it): the zero borders written between the
// accumulation and the epilogue touch nothing the accumulation reads or
// writes, so they move before it, and the epilogue stores each tile at
// [i + 1, j + 1] of P.
// CHECK-LABEL: func @padded_interior
// CHECK-SAME: attributes {dl.fused_epilogues = 1 : i64}
// CHECK: %[[P:.*]] = memref.alloc() : memref<18x18xf32>
// CHECK: affine.store %{{.*}}, %[[P]][0, %{{.*}}]
// CHECK: affine.store %{{.*}}, %[[P]][%{{.*}} + 1, 0]
// CHECK: affine.for %[[I:.*]] = 0 to 16 step 4 {
// CHECK: vector.fma
// CHECK: %[[M:.*]] = arith.maximumf
// CHECK: affine.vector_store %[[M]], %[[P]][%[[I]] + 1, %{{.*}} + 1] : memref<18x18xf32>, vector<8xf32>
// CHECK: } {dl.fused_epilogue = ["arith.maximumf"]}
// CHECK-NOT: affine.store %{{.*}}, %[[P]][0,
// CHECK: return %[[P]]
func.func @padded_interior(%a: memref<16x32xf32>, %b: memref<32x16xf32>) -> memref<18x18xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  %p = memref.alloc() : memref<18x18xf32>
  affine.for %j = 0 to 18 {
    affine.store %zero, %p[0, %j] : memref<18x18xf32>
    affine.store %zero, %p[17, %j] : memref<18x18xf32>
  }
  affine.for %i = 0 to 16 {
    affine.store %zero, %p[%i + 1, 0] : memref<18x18xf32>
    affine.store %zero, %p[%i + 1, 17] : memref<18x18xf32>
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      %1 = arith.maximumf %0, %zero : f32
      affine.store %1, %p[%i + 1, %j + 1] : memref<18x18xf32>
    }
  }
  memref.dealloc %c : memref<16x16xf32>
  return %p : memref<18x18xf32>
}

// -----

// Refused: a nest between them writes B, which the accumulation reads: it
// may not move before the accumulation, so the epilogue is not next to it.
// CHECK-LABEL: func @writes_an_input_between
// CHECK-NOT: dl.fused_epilogue
// CHECK: arith.negf
func.func @writes_an_input_between(%a: memref<16x32xf32>, %b: memref<32x16xf32>) -> memref<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  affine.for %j = 0 to 16 {
    affine.store %zero, %b[0, %j] : memref<32x16xf32>
  }
  %d = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %d[%i, %j] : memref<16x16xf32>
    }
  }
  memref.dealloc %c : memref<16x16xf32>
  return %d : memref<16x16xf32>
}

// -----

// Refused: in place, but one row down: the tiles would overwrite sums of C
// not yet final.
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: it stores into the output at another element
// CHECK-LABEL: func @in_place_shifted
// CHECK-NOT: dl.fused_epilogue
// CHECK: arith.negf
func.func @in_place_shifted(%a: memref<16x32xf32>, %b: memref<32x16xf32>) -> memref<17x16xf32> {
  %c = memref.alloc() : memref<17x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<17x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<17x16xf32>
      }
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<17x16xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %c[%i + 1, %j] : memref<17x16xf32>
    }
  }
  return %c : memref<17x16xf32>
}

// -----

// C used after the epilogue, but first filled all over (the memory plan
// gives the next convolution the same arena view): the sums are dead after
// the epilogue, so it is fused; the later nest reads the new values.
// CHECK-LABEL: func @refilled_after
// CHECK-SAME: attributes {dl.fused_epilogues = 1 : i64}
// CHECK: } {dl.fused_epilogue = ["arith.negf"]}
// CHECK: affine.store %{{.*}}, %[[C:.*]][%{{.*}}, %{{.*}}] : memref<16x16xf32>
// CHECK: affine.load %[[C]]
func.func @refilled_after(%a: memref<16x32xf32>, %b: memref<32x16xf32>, %e: memref<16x16xf32>) -> memref<16x16xf32> {
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  %d = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %d[%i, %j] : memref<16x16xf32>
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      affine.store %one, %c[%i, %j] : memref<16x16xf32>
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      affine.store %0, %e[%i, %j] : memref<16x16xf32>
    }
  }
  memref.dealloc %c : memref<16x16xf32>
  return %d : memref<16x16xf32>
}

// -----

// Refused: the first use after the epilogue reads C (a fill of only a part
// of it would not do either).
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: the output is used after it (it would keep partial sums in the tiles' place)
// CHECK-LABEL: func @read_before_refill
// CHECK-NOT: dl.fused_epilogue
// CHECK: arith.negf
func.func @read_before_refill(%a: memref<16x32xf32>, %b: memref<32x16xf32>, %e: memref<16x16xf32>) -> memref<16x16xf32> {
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  %d = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %d[%i, %j] : memref<16x16xf32>
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      affine.store %0, %e[%i, %j] : memref<16x16xf32>
    }
  }
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 8 {
      affine.store %one, %c[%i, %j] : memref<16x16xf32>
    }
  }
  memref.dealloc %c : memref<16x16xf32>
  return %d : memref<16x16xf32>
}

// -----

// Refused: C is read after the epilogue through a view made before the
// accumulation (as dl-split-function{early} recomputes every view at the
// start of a part): the view is not the use, the nest reading it is.
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: the output is used after it (it would keep partial sums in the tiles' place)
// CHECK-LABEL: func @read_through_earlier_view
// CHECK-NOT: dl.fused_epilogue
// CHECK: arith.negf
func.func @read_through_earlier_view(%a: memref<16x32xf32>, %b: memref<32x16xf32>, %e: memref<256xf32>) -> memref<16x16xf32> {
  %c = memref.alloc() : memref<16x16xf32>
  %flat = memref.collapse_shape %c [[0, 1]] : memref<16x16xf32> into memref<256xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j] : memref<16x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<16x16xf32>
      }
    }
  }
  %d = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x16xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %d[%i, %j] : memref<16x16xf32>
    }
  }
  affine.for %i = 0 to 256 {
    %0 = affine.load %flat[%i] : memref<256xf32>
    affine.store %0, %e[%i] : memref<256xf32>
  }
  memref.dealloc %c : memref<16x16xf32>
  return %d : memref<16x16xf32>
}

// -----

// A product written into columns 16..31 of a wider buffer (a convolution's
// channels in a concatenation: dl-linalg-to-affine-loops folds the subview
// into the indices) is tiled, its tiles loaded and stored at the shifted
// columns. The nest after it reads C at its own loop indices, elements the
// tiles do not hold: not fused.
// REMARK: remark: dl-affine-register-tile: the elementwise nest after this accumulation is not fused: the accumulation writes its output at shifted indices (a slice of a larger buffer)
// CHECK-LABEL: func @shifted_output
// CHECK: vector.fma
// CHECK: affine.vector_store %{{.*}}, %[[C:.*]][%{{.*}}, %{{.*}} + 24] : memref<16x48xf32>, vector<8xf32>
// CHECK-NOT: dl.fused_epilogue
// CHECK: affine.load %[[C]][%{{.*}}, %{{.*}}] : memref<16x48xf32>
// CHECK: arith.negf
func.func @shifted_output(%a: memref<16x32xf32>, %b: memref<32x16xf32>) -> memref<16x16xf32> {
  %c = memref.alloc() : memref<16x48xf32>
  affine.for %i = 0 to 16 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<16x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x16xf32>
        %2 = affine.load %c[%i, %j + 16] : memref<16x48xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j + 16] : memref<16x48xf32>
      }
    }
  }
  %d = memref.alloc() : memref<16x16xf32>
  affine.for %i = 0 to 16 {
    affine.for %j = 0 to 16 {
      %0 = affine.load %c[%i, %j] : memref<16x48xf32>
      %1 = arith.negf %0 : f32
      affine.store %1, %d[%i, %j] : memref<16x16xf32>
    }
  }
  memref.dealloc %c : memref<16x48xf32>
  return %d : memref<16x16xf32>
}
