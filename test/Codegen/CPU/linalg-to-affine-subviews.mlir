// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-linalg-to-affine-loops,canonicalize))' | FileCheck %s
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-linalg-to-affine-loops{fold-subviews=false}))' | FileCheck %s --check-prefix=KEEP
// The vector width is the target's: pinned, so that the test reads the same on every host.
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},func.func(dl-linalg-to-affine-loops,canonicalize,dl-affine-vectorize))' | FileCheck %s --check-prefix=VEC
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},func.func(dl-linalg-to-affine-loops,canonicalize,dl-affine-vectorize))' | FileCheck %s --check-prefix=AVX2

// A window of a padded image copied into its place in an im2col matrix (what
// dl.slice and dl.concat bufferize to): both subviews have static offsets
// and strides, so the copy's loads and stores go to the source memrefs at
// offset + stride * index, and the subviews are gone. The copy then
// vectorizes (identity layouts only); through the subviews it stayed scalar.
// CHECK-LABEL: func.func @window_into_columns
// CHECK-NOT: memref.subview
// CHECK: affine.for %[[N:.*]] = 0 to 1 {
// CHECK: affine.for %[[H:.*]] = 0 to 2 {
// CHECK: affine.for %[[W:.*]] = 0 to 2 {
// CHECK: affine.for %[[C:.*]] = 0 to 16 {
// CHECK: %[[V:.*]] = affine.load %arg0[%[[N]], %[[H]] * 2 + 1, %[[W]] * 2 + 2, %[[C]]] : memref<1x5x5x16xf32>
// CHECK: affine.store %[[V]], %arg1[%[[N]], %[[H]], %[[W]], %[[C]] + 80] : memref<1x2x2x144xf32>
// KEEP-LABEL: func.func @window_into_columns
// KEEP-COUNT-2: memref.subview
// VEC-LABEL: func.func @window_into_columns
// VEC: affine.vector_load %arg0{{.*}} : memref<1x5x5x16xf32>, vector<16xf32>
// VEC: affine.vector_store {{.*}}, %arg1{{.*}} : memref<1x2x2x144xf32>, vector<16xf32>
// AVX2-LABEL: func.func @window_into_columns
// AVX2: affine.vector_load %arg0{{.*}} : memref<1x5x5x16xf32>, vector<8xf32>
// AVX2: affine.vector_store {{.*}}, %arg1{{.*}} : memref<1x2x2x144xf32>, vector<8xf32>
func.func @window_into_columns(%padded: memref<1x5x5x16xf32>, %columns: memref<1x2x2x144xf32>) {
  %window = memref.subview %padded[0, 1, 2, 0] [1, 2, 2, 16] [1, 2, 2, 1] : memref<1x5x5x16xf32> to memref<1x2x2x16xf32, strided<[400, 160, 32, 1], offset: 112>>
  %place = memref.subview %columns[0, 0, 0, 80] [1, 2, 2, 16] [1, 1, 1, 1] : memref<1x2x2x144xf32> to memref<1x2x2x16xf32, strided<[576, 288, 144, 1], offset: 80>>
  linalg.copy ins(%window : memref<1x2x2x16xf32, strided<[400, 160, 32, 1], offset: 112>>) outs(%place : memref<1x2x2x16xf32, strided<[576, 288, 144, 1], offset: 80>>)
  return
}

// -----

// Left as they are: a rank-reducing subview and one of a memref that has a
// layout itself. A subview only read at an offset known at run time (an
// argument: a valid affine symbol) goes to its source at that offset.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: memref.subview
// CHECK: affine.load %arg2[%{{.*}} + symbol(%arg1)] : memref<8xf32>
// CHECK: affine.load %{{.*}} : memref<4xf32, strided<[1], offset: 4>>
// CHECK: affine.load %{{.*}} : memref<2xf32, strided<[2], offset: 1>>
func.func @kept(%x: memref<2x4xf32>, %i: index, %y: memref<8xf32>, %out: memref<3x4xf32>) {
  %dynamic = memref.subview %y[%i] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  %reduced = memref.subview %x[1, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  %strided = memref.subview %y[1] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2], offset: 1>>
  %nested = memref.subview %strided[0] [2] [1] : memref<4xf32, strided<[2], offset: 1>> to memref<2xf32, strided<[2], offset: 1>>
  %row0 = memref.subview %out[0, 0] [1, 4] [1, 1] : memref<3x4xf32> to memref<4xf32, strided<[1]>>
  %row1 = memref.subview %out[1, 0] [1, 4] [1, 1] : memref<3x4xf32> to memref<4xf32, strided<[1], offset: 4>>
  %row2 = memref.subview %out[2, 0] [1, 2] [1, 1] : memref<3x4xf32> to memref<2xf32, strided<[1], offset: 8>>
  linalg.copy ins(%dynamic : memref<4xf32, strided<[1], offset: ?>>) outs(%row0 : memref<4xf32, strided<[1]>>)
  linalg.copy ins(%reduced : memref<4xf32, strided<[1], offset: 4>>) outs(%row1 : memref<4xf32, strided<[1], offset: 4>>)
  linalg.copy ins(%nested : memref<2xf32, strided<[2], offset: 1>>) outs(%row2 : memref<2xf32, strided<[1], offset: 8>>)
  return
}

// -----

// dl-fuse-attention's tiles read K^T and V through subviews at the tile
// loop's induction variable: a valid affine dim there, so the reads go to
// the source (and the packing copies of the micro-kernels vectorize). The
// output block, also written, keeps its subview (an accumulation's output
// indexed by its loops alone is what dl-affine-register-tile matches), and
// an offset that is no affine expression of the loops (i * i) keeps its.
// CHECK-LABEL: func.func @tile_reads
// CHECK: affine.parallel (%[[T:.*]]) = (0) to (8) step (4) {
// CHECK: %[[OUT:.*]] = memref.subview %arg1[%[[T]], 0] [4, 16] [1, 1]
// CHECK: affine.for %[[I:.*]] = 0 to 4 {
// CHECK: affine.for %[[J:.*]] = 0 to 16 {
// CHECK: %[[V:.*]] = affine.load %arg0[%[[I]] + %[[T]], %[[J]]] : memref<8x16xf32>
// CHECK: affine.store %[[V]], %[[PACKED:.*]][%[[I]], %[[J]]] : memref<4x16xf32>
// CHECK: affine.load %[[OUT]][%{{.*}}, %{{.*}}]
// CHECK: affine.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}]
// CHECK: %[[SQUARE:.*]] = arith.muli
// CHECK: memref.subview %arg0[%[[SQUARE]], 0] [1, 16] [1, 1]
// KEEP-LABEL: func.func @tile_reads
// KEEP-COUNT-3: memref.subview
// VEC-LABEL: func.func @tile_reads
// VEC: %[[BLOCK:.*]] = affine.vector_load %arg0{{.*}} : memref<8x16xf32>, vector<16xf32>
// VEC: affine.vector_store %[[BLOCK]], %{{.*}} : memref<4x16xf32>, vector<16xf32>
func.func @tile_reads(%v: memref<8x16xf32>, %out: memref<8x16xf32>, %row: memref<1x16xf32>) {
  affine.parallel (%t) = (0) to (8) step (4) {
    %block = memref.subview %v[%t, 0] [4, 16] [1, 1] : memref<8x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    %dest = memref.subview %out[%t, 0] [4, 16] [1, 1] : memref<8x16xf32> to memref<4x16xf32, strided<[16, 1], offset: ?>>
    %packed = memref.alloc() : memref<4x16xf32>
    linalg.copy ins(%block : memref<4x16xf32, strided<[16, 1], offset: ?>>) outs(%packed : memref<4x16xf32>)
    linalg.add ins(%packed, %dest : memref<4x16xf32>, memref<4x16xf32, strided<[16, 1], offset: ?>>) outs(%dest : memref<4x16xf32, strided<[16, 1], offset: ?>>)
    memref.dealloc %packed : memref<4x16xf32>
  }
  affine.for %i = 0 to 2 {
    %square = arith.muli %i, %i : index
    %picked = memref.subview %v[%square, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
    linalg.copy ins(%picked : memref<1x16xf32, strided<[16, 1], offset: ?>>) outs(%row : memref<1x16xf32>)
  }
  return
}
