// RUN: dl-opt %s --dl-gpu-mma-matmul --cse --split-input-file | FileCheck %s
// RUN: dl-opt %s --dl-gpu-mma-matmul=report=true --split-input-file --verify-diagnostics -o /dev/null

// An f16 matmul with an f32 accumulator (dlc's half-precision matmul) at
// sizes no tile divides: blocks of 128 threads (4 warps) over 64 x 64 tiles
// of C; tiles of A (64 x 32) and B (32 x 64) staged in padded workgroup
// memory (0 outside A and B) between barriers, in one of two forms; per step of 32 along K, two
// steps of 16, each 2 A fragments x 4 B fragments = 8 mma.sync m16n8k16
// carried in 8 accumulators; then C += the accumulators inside C.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[M:.*]] = memref.dim %arg0, %c0
// CHECK-DAG: %[[K:.*]] = memref.dim %arg0, %c1
// CHECK-DAG: %[[N:.*]] = memref.dim %arg1, %c1
// CHECK: %[[GX:.*]] = arith.ceildivui %[[N]], %c64
// CHECK: %[[GY:.*]] = arith.ceildivui %[[M]], %c64
// The host decides whether rows are whole 16-byte vectors: A and B aligned
// to 16 bytes, K and N multiples of 8 (false at run time for these sizes).
// CHECK-DAG: memref.extract_aligned_pointer_as_index %arg1
// CHECK-DAG: memref.extract_aligned_pointer_as_index %arg0
// CHECK-DAG: arith.remui %[[N]], %c8
// CHECK-DAG: arith.remui %[[K]], %c8
// CHECK: arith.andi
// CHECK: arith.andi
// CHECK: %[[VEC:.*]] = arith.andi
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9_]+]], %[[BY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %[[GX]], %{{[a-z0-9_]+}} = %[[GY]], %{{[a-z0-9_]+}} = %c1) threads(%[[TX:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %c128, %{{[a-z0-9_]+}} = %c1, %{{[a-z0-9_]+}} = %c1)
// CHECK-SAME: workgroup(%[[AS:.*]] : memref<64x40xf16, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<32x72xf16, #gpu.address_space<workgroup>>)
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2x2xf32>
// CHECK: %[[ACC:.*]]:8 = scf.for %{{.*}} = %c0 to %[[K]] step %c32 iter_args(%{{.*}} = %[[ZERO]], {{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// Staged by vectors of 8 (2 per thread and tile, zeros outside)...
// CHECK: scf.if %[[VEC]] {
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<37x53xf16>, vector<8xf16>
// CHECK: arith.constant dense<0.000000e+00> : vector<8xf16>
// CHECK: vector.store %{{.*}}, %[[AS]][%{{.*}}, %{{.*}}] : memref<64x40xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<53x29xf16>, vector<8xf16>
// CHECK: vector.store %{{.*}}, %[[BS]]
// ... or element by element (16 per thread and tile).
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1
// CHECK: scf.if %{{.*}} -> (f16)
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %[[AS]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1
// CHECK: memref.load %arg1
// CHECK: memref.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[AS]]
// CHECK: vector.insert %{{.*}} [3] : vector<2xf16> into vector<4x2xf16>
// CHECK: memref.load %[[BS]]
// CHECK: vector.insert %{{.*}} [1] : vector<2xf16> into vector<2x2xf16>
// CHECK-COUNT-8: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: memref.load %[[AS]]
// CHECK-COUNT-8: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: arith.cmpi ult, %{{.*}}, %[[N]]
// CHECK: scf.if
// CHECK: vector.extract %[[ACC]]#0[0, 0] : f32 from vector<2x2xf32>
// CHECK: memref.load %arg2
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: gpu.terminator
// CHECK-NOT: linalg.matmul
func.func @matmul(%a: memref<37x53xf16>, %b: memref<53x29xf16>, %c: memref<37x29xf32>) {
  linalg.matmul ins(%a, %b : memref<37x53xf16>, memref<53x29xf16>) outs(%c : memref<37x29xf32>)
  return
}

// -----

// Which value of a fragment each lane holds: upstream's layout of the PTX
// mma.m16n8k16 operands (group = lane / 4 picks the row of A and C and the
// column of B, 2 * (lane % 4) the pair of columns of A and C and of rows
// of B; +8 for the second half).
// CHECK-DAG: #[[GROUP:.*]] = affine_map<(d0) -> (d0 floordiv 4)>
// CHECK-DAG: #[[PAIR:.*]] = affine_map<(d0) -> ((d0 mod 4) * 2)>
// CHECK-DAG: #[[PAIR1:.*]] = affine_map<(d0) -> ((d0 mod 4) * 2 + 1)>
// CHECK-DAG: #[[GROUP8:.*]] = affine_map<(d0) -> (d0 floordiv 4 + 8)>
// CHECK-DAG: #[[PAIR8:.*]] = affine_map<(d0) -> ((d0 mod 4) * 2 + 8)>
// CHECK-LABEL: func.func @layout
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: gpu.barrier
// The first register of A: (group, pair) and (group, pair + 1); the second
// (group + 8, pair); the third (group, pair + 8).
// CHECK: affine.apply #[[GROUP]](%[[LANE]])
// CHECK: affine.apply #[[PAIR]](%[[LANE]])
// CHECK: affine.apply #[[PAIR1]](%[[LANE]])
// CHECK: vector.insert %{{.*}} [0] : vector<2xf16> into vector<4x2xf16>
// CHECK: affine.apply #[[GROUP8]](%[[LANE]])
// CHECK: vector.insert %{{.*}} [1] : vector<2xf16> into vector<4x2xf16>
// CHECK: affine.apply #[[PAIR8]](%[[LANE]])
// CHECK: vector.insert %{{.*}} [2] : vector<2xf16> into vector<4x2xf16>
func.func @layout(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// bf16, batched: the batch on blocks z, indexing every access of A, B, C.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: %[[B:.*]] = memref.dim %arg0, %c0
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[BZ:[a-z0-9_]+]]) in (%{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = %[[B]])
// CHECK-SAME: workgroup(%{{.*}} : memref<64x40xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x72xbf16, #gpu.address_space<workgroup>>)
// CHECK: memref.load %arg0[%[[BZ]],
// CHECK: memref.load %arg1[%[[BZ]],
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: memref.store %{{.*}}, %arg2[%[[BZ]],
// CHECK-NOT: linalg.batch_matmul
func.func @batch_matmul(%a: memref<3x5x70xbf16>, %b: memref<3x70x9xbf16>, %c: memref<3x5x9xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x5x70xbf16>, memref<3x70x9xbf16>) outs(%c : memref<3x5x9xf32>)
  return
}

// -----

// Dynamic sizes: the grid and the K loop from memref.dim.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[K:.*]] = memref.dim %arg0, %c1
// CHECK: gpu.launch
// CHECK: scf.for %{{.*}} = %c0 to %[[K]] step %c32
// CHECK: nvgpu.mma.sync
func.func @dynamic(%a: memref<?x?xf16>, %b: memref<?x?xf16>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf16>, memref<?x?xf16>) outs(%c : memref<?x?xf32>)
  return
}

// -----

// Left alone, each with a remark under report=true: f32 (tf32 tensor cores
// would round the inputs), A and B of different types, a 16-bit
// accumulator, user-defined indexing maps (a transposed B), tensors.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK-COUNT-4: linalg.matmul
// CHECK: linalg.batch_matmul
// CHECK-NOT: gpu.launch
func.func @left_alone(%a32: memref<8x16xf32>, %b32: memref<16x8xf32>, %c32: memref<8x8xf32>,
                      %a: memref<8x16xf16>, %bb: memref<16x8xbf16>, %b: memref<16x8xf16>,
                      %c16: memref<8x8xf16>, %bt: memref<8x16xf16>, %c: memref<8x8xf32>,
                      %ta: tensor<2x8x16xf16>, %tb: tensor<2x16x8xf16>, %tc: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  // expected-remark @below {{dl-gpu-mma-matmul: left alone (tensor cores take f16 or bf16 inputs here)}}
  linalg.matmul ins(%a32, %b32 : memref<8x16xf32>, memref<16x8xf32>) outs(%c32 : memref<8x8xf32>)
  // expected-remark @below {{dl-gpu-mma-matmul: left alone (A and B have different element types)}}
  linalg.matmul ins(%a, %bb : memref<8x16xf16>, memref<16x8xbf16>) outs(%c : memref<8x8xf32>)
  // expected-remark @below {{dl-gpu-mma-matmul: left alone (the accumulator must be f32)}}
  linalg.matmul ins(%a, %b : memref<8x16xf16>, memref<16x8xf16>) outs(%c16 : memref<8x8xf16>)
  // expected-remark @below {{dl-gpu-mma-matmul: left alone (user-defined indexing maps)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %bt : memref<8x16xf16>, memref<8x16xf16>) outs(%c : memref<8x8xf32>)
  // expected-remark @below {{dl-gpu-mma-matmul: left alone (not on memrefs)}}
  %r = linalg.batch_matmul ins(%ta, %tb : tensor<2x8x16xf16>, tensor<2x16x8xf16>) outs(%tc : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %r : tensor<2x8x8xf32>
}
