// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=1},func.func(dl-affine-register-tile{rows=4 vectors=2 pack=false},canonicalize,cse))' | FileCheck %s

// A matmul nest (i, k, j): 4x16 output tiles stay in 8 vector registers
// across the k loop; B is loaded as vectors, A broadcast, multiply-adds fused.
// 22 rows and 40 columns leave a row remainder (20..22), computed by a
// 2-row tile right after the full row tiles, and a column remainder
// (32..40, one vector), computed by tiles of one vector per row after them.
// CHECK-LABEL: func @matmul
// CHECK: affine.for %[[I:.*]] = 0 to 20 step 4 {
// CHECK-NEXT: affine.for %[[J:.*]] = 0 to 32 step 16 {
// CHECK-COUNT-8: affine.vector_load %[[C:.*]][{{.*}}] : memref<22x40xf32>, vector<8xf32>
// CHECK: %[[R:.*]]:8 = affine.for %[[K:.*]] = 0 to 32 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK: affine.load %{{.*}}[%[[I]], %[[K]]] : memref<22x32xf32>
// CHECK: affine.vector_load %{{.*}}[%[[K]], %[[J]]] : memref<32x40xf32>, vector<8xf32>
// CHECK: vector.broadcast
// CHECK: vector.fma
// CHECK: affine.yield
// CHECK-COUNT-8: affine.vector_store %[[R]]#{{[0-7]}}, %[[C]]
// Row remainder: a 2x16 tile of 4 registers over rows 20 and 21.
// CHECK: affine.for %[[J2:.*]] = 0 to 32 step 16 {
// CHECK: %[[R2:.*]]:4 = affine.for %{{.*}} = 0 to 32 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-4: vector.fma
// CHECK: affine.vector_store %[[R2]]#0, %[[C]][20, %[[J2]]]
// CHECK: affine.vector_store %[[R2]]#3, %[[C]][21, %[[J2]] + 8]
// Column remainder: 4x8 tiles over the full row tiles, a 2x8 tile over the
// row remainder; no scalar loop is left.
// CHECK: affine.for %[[I3:.*]] = 0 to 20 step 4 {
// CHECK-NEXT: affine.for %[[J3:.*]] = 32 to 40 step 8 {
// CHECK: %[[R3:.*]]:4 = affine.for %{{.*}} = 0 to 32 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK-COUNT-4: vector.fma
// CHECK: affine.vector_store %[[R3]]#3, %[[C]][%[[I3]] + 3, %[[J3]]]
// CHECK: affine.for %[[J4:.*]] = 32 to 40 step 8 {
// CHECK: %[[R4:.*]]:2 = affine.for %{{.*}} = 0 to 32 iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>) {
// CHECK: affine.vector_store %[[R4]]#1, %[[C]][21, %[[J4]]]
// CHECK-NOT: arith.mulf
// CHECK: return
func.func @matmul(%a: memref<22x32xf32>, %b: memref<32x40xf32>) -> memref<22x40xf32> {
  %c = memref.alloc() : memref<22x40xf32>
  affine.for %i = 0 to 22 {
    affine.for %k = 0 to 32 {
      affine.for %j = 0 to 40 {
        %0 = affine.load %a[%i, %k] : memref<22x32xf32>
        %1 = affine.load %b[%k, %j] : memref<32x40xf32>
        %2 = affine.load %c[%i, %j] : memref<22x40xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<22x40xf32>
      }
    }
  }
  return %c : memref<22x40xf32>
}

// -----

// A dynamic number of rows (a dynamic batch): full tiles up to the largest
// multiple of 4, the rest in the original loops.
// CHECK-DAG: #[[FULL:.*]] = affine_map<()[s0] -> ((s0 floordiv 4) * 4)>
// CHECK-LABEL: func @dynamic_rows
// CHECK: affine.for %{{.*}} = 0 to #[[FULL]]()[%[[M:.*]]] step 4 {
// CHECK: affine.for %{{.*}} = #[[FULL]]()[%[[M]]] to %[[M]] {
func.func @dynamic_rows(%a: memref<?x8xf32>, %b: memref<8x16xf32>, %m: index) -> memref<?x16xf32> {
  %c = memref.alloc(%m) : memref<?x16xf32>
  affine.for %i = 0 to %m {
    affine.for %k = 0 to 8 {
      affine.for %j = 0 to 16 {
        %0 = affine.load %a[%i, %k] : memref<?x8xf32>
        %1 = affine.load %b[%k, %j] : memref<8x16xf32>
        %2 = affine.load %c[%i, %j] : memref<?x16xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<?x16xf32>
      }
    }
  }
  return %c : memref<?x16xf32>
}

// -----

// A direct convolution (one channel), reduction loops kh and kw: the row
// loop is oh, the vector loop ow; the input window is contiguous along ow.
// CHECK-LABEL: func @convolution
// CHECK: affine.for %{{.*}} = 0 to 8 step 4 {
// CHECK: affine.for %{{.*}} = 0 to 16 step 16 {
// CHECK: affine.for %{{.*}} = 0 to 3 iter_args
// CHECK: affine.for %{{.*}} = 0 to 3 iter_args
// CHECK: affine.vector_load %{{.*}} : memref<10x18xf32>, vector<8xf32>
func.func @convolution(%in: memref<10x18xf32>, %w: memref<3x3xf32>) -> memref<8x16xf32> {
  %out = memref.alloc() : memref<8x16xf32>
  affine.for %oh = 0 to 8 {
    affine.for %kh = 0 to 3 {
      affine.for %kw = 0 to 3 {
        affine.for %ow = 0 to 16 {
          %0 = affine.load %in[%oh + %kh, %ow + %kw] : memref<10x18xf32>
          %1 = affine.load %w[%kh, %kw] : memref<3x3xf32>
          %2 = affine.load %out[%oh, %ow] : memref<8x16xf32>
          %3 = arith.mulf %0, %1 : f32
          %4 = arith.addf %2, %3 : f32
          affine.store %4, %out[%oh, %ow] : memref<8x16xf32>
        }
      }
    }
  }
  return %out : memref<8x16xf32>
}

// -----

// Refused: B is read with stride 2 along the column loop (neither invariant
// nor contiguous), so no vector load fits; the nest is left alone.
// CHECK-LABEL: func @strided_input
// CHECK-NOT: vector<
// CHECK: affine.for %{{.*}} = 0 to 8 {
func.func @strided_input(%a: memref<8x8xf32>, %b: memref<8x64xf32>) -> memref<8x32xf32> {
  %c = memref.alloc() : memref<8x32xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 8 {
      affine.for %j = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<8x8xf32>
        %1 = affine.load %b[%k, 2 * %j] : memref<8x64xf32>
        %2 = affine.load %c[%i, %j] : memref<8x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x32xf32>
      }
    }
  }
  return %c : memref<8x32xf32>
}

// -----

// Refused: the output is a function argument, which may alias the inputs.
// CHECK-LABEL: func @output_may_alias
// CHECK-NOT: vector<
func.func @output_may_alias(%a: memref<8x8xf32>, %b: memref<8x32xf32>, %c: memref<8x32xf32>) {
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 8 {
      affine.for %j = 0 to 32 {
        %0 = affine.load %a[%i, %k] : memref<8x8xf32>
        %1 = affine.load %b[%k, %j] : memref<8x32xf32>
        %2 = affine.load %c[%i, %j] : memref<8x32xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x32xf32>
      }
    }
  }
  return
}

// -----

// Refused: no reduction loop (plain elementwise work is the vectorizer's),
// and fewer columns than one vector.
// CHECK-LABEL: func @not_accumulations
// CHECK-NOT: vector<
func.func @not_accumulations(%a: memref<8x32xf32>, %b: memref<8x4x4xf32>) -> (memref<8x32xf32>, memref<8x4xf32>) {
  %c = memref.alloc() : memref<8x32xf32>
  affine.for %i = 0 to 8 {
    affine.for %j = 0 to 32 {
      %0 = affine.load %a[%i, %j] : memref<8x32xf32>
      %1 = affine.load %c[%i, %j] : memref<8x32xf32>
      %2 = arith.addf %0, %1 : f32
      affine.store %2, %c[%i, %j] : memref<8x32xf32>
    }
  }
  %d = memref.alloc() : memref<8x4xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 4 {
      affine.for %j = 0 to 4 {
        %0 = affine.load %b[%i, %k, %j] : memref<8x4x4xf32>
        %1 = affine.load %d[%i, %j] : memref<8x4xf32>
        %2 = arith.addf %0, %1 : f32
        affine.store %2, %d[%i, %j] : memref<8x4xf32>
      }
    }
  }
  return %c, %d : memref<8x32xf32>, memref<8x4xf32>
}

// -----

// Columns left over that do not fill a vector (8 lanes on haswell): 22 =
// 16 (4x2 tiles) + 4 (tiles of one vector<4xf32>) + 2, the 2 run by the
// original loops over every row.
// CHECK-LABEL: func @sub_vector_columns
// CHECK: affine.for %{{.*}} = 0 to 8 step 4 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 16 step 16 {
// CHECK: vector.fma %{{.*}} : vector<8xf32>
// CHECK: affine.for %{{.*}} = 0 to 8 step 4 {
// CHECK-NEXT: affine.for %[[J:.*]] = 16 to 20 step 4 {
// CHECK: %[[R:.*]]:4 = affine.for %{{.*}} = 0 to 8 iter_args({{.*}}) -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>) {
// CHECK-COUNT-4: vector.fma %{{.*}} : vector<4xf32>
// CHECK: affine.vector_store %[[R]]#3, %{{.*}}[%{{.*}} + 3, %[[J]]] : memref<8x22xf32>, vector<4xf32>
// CHECK: affine.for %{{.*}} = 0 to 8 {
// CHECK-NEXT: affine.for %{{.*}} = 0 to 8 {
// CHECK-NEXT: affine.for %{{.*}} = 20 to 22 {
// CHECK: arith.mulf
func.func @sub_vector_columns(%a: memref<8x8xf32>, %b: memref<8x22xf32>) -> memref<8x22xf32> {
  %c = memref.alloc() : memref<8x22xf32>
  affine.for %i = 0 to 8 {
    affine.for %k = 0 to 8 {
      affine.for %j = 0 to 22 {
        %0 = affine.load %a[%i, %k] : memref<8x8xf32>
        %1 = affine.load %b[%k, %j] : memref<8x22xf32>
        %2 = affine.load %c[%i, %j] : memref<8x22xf32>
        %3 = arith.mulf %0, %1 : f32
        %4 = arith.addf %2, %3 : f32
        affine.store %4, %c[%i, %j] : memref<8x22xf32>
      }
    }
  }
  return %c : memref<8x22xf32>
}
