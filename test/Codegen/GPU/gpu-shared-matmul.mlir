// RUN: dl-opt %s --dl-gpu-shared-matmul --split-input-file | FileCheck %s
// RUN: dl-opt %s --dl-gpu-shared-matmul=tile=8 --split-input-file | FileCheck %s --check-prefix=TILE8
// RUN: not dl-opt %s --dl-gpu-shared-matmul=tile=64 --split-input-file 2>&1 | FileCheck %s --check-prefix=BADTILE
// RUN: dl-opt %s --dl-gpu-shared-matmul=register-tiles=false --split-input-file | FileCheck %s --check-prefix=NOREG

// A matmul with sizes no tile divides: 16x16 threads per block, tiles of A
// and B staged in workgroup memory between barriers, loads outside A and B
// replaced by zeros, the store guarded. Staging has two forms, picked by a
// flag computed on the host (K and N multiples of 4, A and B aligned to 16
// bytes; false for these sizes at run time): 4 elements per thread with one
// aligned vector load, or one element per thread.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[M:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[K:.*]] = memref.dim %arg0, %c1
// CHECK-DAG: %[[N:.*]] = memref.dim %arg1, %c1
// CHECK: %[[GX:.*]] = arith.ceildivui %[[N]], %c16
// CHECK: %[[GY:.*]] = arith.ceildivui %[[M]], %c16
// CHECK-DAG: %[[PB:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK-DAG: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %[[BY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %[[GX]], %{{[a-z0-9_]+}} = %[[GY]], %{{[a-z0-9_]+}} = %c1{{[_0-9]*}}) threads(%[[TX:[a-z0-9_]+]], %[[TY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c16, %{{[a-z0-9_]+}} = %c16, %{{[a-z0-9_]+}} = %c1{{[_0-9]*}})
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %[[K]] step %{{.*}} iter_args
// CHECK: scf.if %[[VEC:.*]] {
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<37x53xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[AS]][%{{.*}}, %{{.*}}] : memref<16x16xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<53x29xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[BS]]
// CHECK: } else {
// CHECK: scf.if
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %[[AS]][%[[TY]], %[[TX]]]
// CHECK: memref.load %arg1
// CHECK: memref.store %{{.*}}, %[[BS]][%[[TY]], %[[TX]]]
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.load %[[AS]]
// CHECK: memref.load %[[BS]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: gpu.terminator
// CHECK-NOT: linalg.matmul
// TILE8: memref<8x8xf32, #gpu.address_space<workgroup>>
// TILE8: vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<37x53xf32>, vector<4xf32>
// BADTILE: dl-gpu-shared-matmul: tile must be in 1..32 (tile x tile threads per block), but got 64
func.func @matmul(%a: memref<37x53xf32>, %b: memref<53x29xf32>, %c: memref<37x29xf32>) {
  linalg.matmul ins(%a, %b : memref<37x53xf32>, memref<53x29xf32>) outs(%c : memref<37x29xf32>)
  return
}

// -----

// The batch on blocks z, indexing every access.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: %[[B:.*]] = memref.dim %arg0, %c0
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[BZ:[a-z0-9_]+]]) in (%{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = %[[B]])
// CHECK: memref.load %arg0[%[[BZ]],
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul(%a: memref<3x5x7xf16>, %b: memref<3x7x9xf16>, %c: memref<3x5x9xf16>) {
  linalg.batch_matmul ins(%a, %b : memref<3x5x7xf16>, memref<3x7x9xf16>) outs(%c : memref<3x5x9xf16>)
  return
}

// -----

// Left to the parallel-loop path: integers, mixed types, tensors.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul ins(%arg0, %arg1 : memref<4x4xi32>
// CHECK: linalg.matmul ins(%arg3, %arg4 : memref<4x4xf16>, memref<4x4xf16>) outs(%arg5 : memref<4x4xf32>)
// CHECK: linalg.matmul ins(%arg6, %arg7 : tensor<4x4xf32>
func.func @left_alone(%a: memref<4x4xi32>, %b: memref<4x4xi32>, %c: memref<4x4xi32>,
                      %d: memref<4x4xf16>, %e: memref<4x4xf16>, %f: memref<4x4xf32>,
                      %g: tensor<4x4xf32>, %h: tensor<4x4xf32>, %i: tensor<4x4xf32>) -> tensor<4x4xf32> {
  linalg.matmul ins(%a, %b : memref<4x4xi32>, memref<4x4xi32>) outs(%c : memref<4x4xi32>)
  linalg.matmul ins(%d, %e : memref<4x4xf16>, memref<4x4xf16>) outs(%f : memref<4x4xf32>)
  %r = linalg.matmul ins(%g, %h : tensor<4x4xf32>, tensor<4x4xf32>) outs(%i : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// A strided B (a column slice): no vector staging, one element per thread.
// CHECK-LABEL: func.func @strided_b
// CHECK: gpu.launch
// CHECK-NOT: vector.load
// CHECK: gpu.terminator
func.func @strided_b(%a: memref<8x8xf32>, %b: memref<8x8xf32, strided<[16, 1]>>, %c: memref<8x8xf32>) {
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32, strided<[16, 1]>>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// A float32 matmul with M and N of at least 64 (here M dynamic): the
// register-tiled kernel. 16 x 16 threads per 128 x 128 tile of C, A's tile
// staged transposed into 8 x 132 (rows padded), B's into 8 x 128; 8 steps
// of k unrolled, each two vector loads from each tile and 32 vector FMAs
// into 16 vector<4> accumulators carried by the loop over block z's slice
// of K (split where C has fewer tiles than min-blocks: 264, and at most
// K / 256 slices); each block writes its partial tile into the workspace
// (guarded by row and column), and a second kernel adds the slices into C.
// With register-tiles=false: the classic kernel.
// CHECK-LABEL: func.func @large
// CHECK: %[[GX:.*]] = arith.ceildivui %{{.*}}, %c128
// CHECK: %[[GY:.*]] = arith.ceildivui %{{.*}}, %c128
// CHECK: arith.muli
// CHECK: %[[TILES:.*]] = arith.muli
// CHECK: %[[WANT:.*]] = arith.ceildivui %c264, %[[TILES]]
// CHECK: %[[MOST:.*]] = arith.maxui %{{.*}}, %c1
// CHECK: %[[FEW:.*]] = arith.minui %[[WANT]], %[[MOST]]
// CHECK: %[[SPLITS:.*]] = arith.maxui %[[FEW]], %c1
// CHECK: %[[GZ:.*]] = arith.muli %c1{{[_0-9]*}}, %[[SPLITS]]
// CHECK: %[[W:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[BZ:[a-z0-9_]+]]) in (%{{[a-z0-9_]+}} = %[[GX]], %{{[a-z0-9_]+}} = %[[GY]], %{{[a-z0-9_]+}} = %[[GZ]]) threads(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c16, %{{[a-z0-9_]+}} = %c16, %{{[a-z0-9_]+}} = %c1{{[_0-9]*}})
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<8x132xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<8x128xf32, #gpu.address_space<workgroup>>)
// CHECK: arith.remui %[[BZ]], %[[SPLITS]]
// CHECK: %{{.*}}:16 = scf.for {{.*}} -> (vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// CHECK: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<?x96xf32>, vector<4xf32>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[AS]]
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<96x200xf32>, vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK-COUNT-32: vector.fma
// CHECK: vector.load %[[AS]]
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK-COUNT-64: memref.store %{{.*}}, %[[W]][%[[BZ]], %{{.*}}, %{{.*}}]
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: scf.for %{{.*}} = %c0{{[_0-9]*}} to %[[SPLITS]]
// CHECK: memref.load %[[W]]
// CHECK: memref.load %arg2
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: gpu.terminator
// CHECK: memref.dealloc %[[W]]
// NOREG-LABEL: func.func @large
// NOREG: workgroup(%{{.*}} : memref<16x16xf32, #gpu.address_space<workgroup>>
// Too narrow (N = 32), or float64: the classic kernel.
// CHECK-LABEL: func.func @narrow
// CHECK: memref<16x16xf32, #gpu.address_space<workgroup>>
// CHECK-LABEL: func.func @large_f64
// CHECK: memref<16x16xf64, #gpu.address_space<workgroup>>
func.func @large(%a: memref<?x96xf32>, %b: memref<96x200xf32>, %c: memref<?x200xf32>) {
  linalg.matmul ins(%a, %b : memref<?x96xf32>, memref<96x200xf32>)
                outs(%c : memref<?x200xf32>)
  return
}
func.func @narrow(%a: memref<300x96xf32>, %b: memref<96x32xf32>, %c: memref<300x32xf32>) {
  linalg.matmul ins(%a, %b : memref<300x96xf32>, memref<96x32xf32>)
                outs(%c : memref<300x32xf32>)
  return
}
func.func @large_f64(%a: memref<300x96xf64>, %b: memref<96x200xf64>, %c: memref<300x200xf64>) {
  linalg.matmul ins(%a, %b : memref<300x96xf64>, memref<96x200xf64>)
                outs(%c : memref<300x200xf64>)
  return
}

// -----

// float16 and bfloat16 (tensor cores off, or a chip before sm_80): the same
// register-tiled kernel, A and B widened to float32 as they are staged
// (8-byte vector loads of 4 halves), float32 tiles, accumulators and
// workspace; C read, added to and rounded once.
// CHECK-LABEL: func.func @large_f16
// CHECK: memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK: workgroup(%[[AS:.*]] : memref<8x132xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<8x128xf32, #gpu.address_space<workgroup>>)
// CHECK: vector.load %arg0[{{.*}}] {alignment = 8 : i64} : memref<256x96xf16>, vector<4xf16>
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[AS]]
// CHECK: vector.load %arg1[{{.*}}] {alignment = 8 : i64} : memref<96x200xf16>, vector<4xf16>
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK: vector.store %{{.*}}, %[[BS]]
// CHECK-COUNT-32: vector.fma {{.*}} : vector<4xf32>
// CHECK: gpu.launch
// CHECK: %[[OLD:.*]] = memref.load %arg2
// CHECK: %[[WIDE:.*]] = arith.extf %[[OLD]] : f16 to f32
// CHECK: %[[SUM:.*]] = arith.addf %[[WIDE]]
// CHECK: %[[ROUND:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK: memref.store %[[ROUND]], %arg2
// CHECK-LABEL: func.func @large_bf16
// CHECK: memref<8x132xf32, #gpu.address_space<workgroup>>
// CHECK: arith.extf %{{.*}} : vector<4xbf16> to vector<4xf32>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// Halves into float32 (dlc's half matmuls): nothing to round.
// CHECK-LABEL: func.func @large_f16_into_f32
// CHECK: memref<8x132xf32, #gpu.address_space<workgroup>>
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK: gpu.launch
// CHECK-NOT: arith.truncf
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: return
func.func @large_f16(%a: memref<256x96xf16>, %b: memref<96x200xf16>, %c: memref<256x200xf16>) {
  linalg.matmul ins(%a, %b : memref<256x96xf16>, memref<96x200xf16>)
                outs(%c : memref<256x200xf16>)
  return
}
func.func @large_bf16(%a: memref<2x128x64xbf16>, %b: memref<2x64x128xbf16>, %c: memref<2x128x128xbf16>) {
  linalg.batch_matmul ins(%a, %b : memref<2x128x64xbf16>, memref<2x64x128xbf16>)
                      outs(%c : memref<2x128x128xbf16>)
  return
}
func.func @large_f16_into_f32(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>)
                outs(%c : memref<64x64xf32>)
  return
}
