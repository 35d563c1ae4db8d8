// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},dl-integer-matmul{min-parallel-work=4096})' | FileCheck %s --check-prefix=ZMM
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=alderlake},dl-integer-matmul)' | FileCheck %s --check-prefix=YMM
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-integer-matmul)' | FileCheck %s --check-prefix=AVX2
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell},dl-integer-matmul)' | FileCheck %s --check-prefix=AVX2
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=skylake-avx512},dl-integer-matmul)' | FileCheck %s --check-prefix=BW
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=x86-64},dl-integer-matmul)' | FileCheck %s --check-prefix=SSE
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},dl-integer-matmul{parallel=false})' | FileCheck %s --check-prefix=SERIAL

// The linalg.generic convert-dl-to-linalg writes for dl.matmul_integer, on
// memrefs. A signed A (extsi) times a constant int8 weight [8, 20]: the
// weight is packed at compile time into panels [N/lanes][K/4][4 x lanes]
// (2 panels of 16 columns on zmm, 3 of 8 on ymm; K = 8: 2 quads) with 128 x
// its column sums, and the original global is dropped; A's quads are shifted
// to u8 (xor 0x80) and broadcast to every lane; the register tile is 6 rows
// x 4 vectors with 32 registers (Zen 4), 4 x 3 with 16 (Alder Lake: AVX-VNNI
// on ymm, no AVX-512); C gets its old contents plus the sums minus the
// correction, masked past column 20.
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
memref.global "private" constant @w : memref<8x20xi8> = dense<[[-3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2], [3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1], [2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0], [1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1], [0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2], [-1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3], [-2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3], [-3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2, 3, -3, -2, -1, 0, 1, 2]]>
func.func @signed_constant(%a: memref<?x8xi8>, %c: memref<?x20xi32>) {
  %w = memref.get_global @w : memref<8x20xi8>
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<?x8xi8>, memref<8x20xi8>) outs(%c : memref<?x20xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
// ZMM-NOT: @w :
// ZMM: memref.global "private" constant @w_vnni16 : memref<2x2x64xi8>
// ZMM: memref.global "private" constant @w_colsum128 : memref<32xi32>
// ZMM-LABEL: func @signed_constant
// ZMM-NOT: linalg.generic
// ZMM: memref.get_global @w_vnni16
// ZMM: memref.get_global @w_colsum128
// ZMM: scf.parallel
// ZMM: :24 = scf.for {{.*}} -> (vector<16xi32>
// ZMM-COUNT-4: vector.load {{.*}} : memref<2x2x64xi8>, vector<64xi8>
// ZMM: vector.load %{{.*}} : memref<?x8xi8>, vector<4xi8>
// ZMM: arith.xori %{{.*}}, %{{.*}} : vector<4xi8>
// ZMM: vector.broadcast %{{.*}} : i32 to vector<16xi32>
// ZMM-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ZMM: vector.create_mask %{{.*}} : vector<16xi1>
// ZMM: vector.maskedload
// ZMM: arith.subi %{{.*}} : vector<16xi32>
// ZMM: vector.maskedstore
// YMM: memref.global "private" constant @w_vnni8 : memref<3x2x32xi8>
// YMM-LABEL: func @signed_constant
// YMM: :12 = scf.for {{.*}} -> (vector<8xi32>
// YMM-COUNT-3: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"
// Without an 8-bit dot product (Zen 3, Haswell: AVX2; Skylake: AVX-512 BW)
// the exact path: B packed as 16-bit values (sign-extended) in panels
// [N/lanes][K/2][2 x lanes]; A's rows first widened by their sign into a
// buffer [M][K rounded up to 16] (16 at a time, the row's last chunk a
// masked load: zeros past K), so each step broadcasts two of its i16 values
// as one i32 from memory; vpmaddwd (i16 x i16 pairs summed into i32: no
// saturation) added to the accumulators; no shift, no correction. 16
// registers: a 6 x 2 tile (12 accumulators, 2 of B, A, the products). The
// tiles whose columns are inside C store with plain vector moves, those
// reaching past column 20 masked. The work estimate reads the static N and K
// (64 rows assumed for the dynamic M): 64 x 20 x 8 multiply-adds are below
// the default min-parallel-work (the ZMM run lowers it to 4096), so the loops
// stay serial.
// AVX2-NOT: @w :
// AVX2: memref.global "private" constant @w_i16x8 : memref<3x4x16xi16>
// AVX2-NOT: colsum
// AVX2-LABEL: func @signed_constant
// AVX2: %[[WIDE:.*]] = memref.alloc(%{{.*}}, %{{.*}}) {alignment = 64 : i64} : memref<?x?xi16>
// AVX2: vector.load %{{.*}} : memref<?x8xi8>, vector<16xi8>
// AVX2: arith.extsi %{{.*}} : vector<16xi8> to vector<16xi16>
// AVX2: vector.store %{{.*}}, %[[WIDE]]
// AVX2: vector.maskedload %{{.*}} : memref<?x8xi8>, vector<16xi1>, vector<16xi8> into vector<16xi8>
// AVX2-NOT: scf.parallel
// AVX2: :12 = scf.for {{.*}} -> (vector<8xi32>
// AVX2: vector.load %[[WIDE]][%{{.*}}, %{{.*}}] : memref<?x?xi16>, vector<2xi16>
// AVX2: vector.bitcast %{{.*}} : vector<2xi16> to vector<1xi32>
// AVX2: vector.broadcast %{{.*}} : i32 to vector<8xi32>
// AVX2: %[[S:.*]] = llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// AVX2-NEXT: arith.addi %{{.*}}, %[[S]] : vector<8xi32>
// AVX2-NOT: arith.xori
// AVX2: scf.if
// AVX2-NOT: vector.maskedstore
// AVX2: vector.store %{{.*}} : memref<?x20xi32>, vector<8xi32>
// AVX2: } else {
// AVX2: vector.maskedstore
// AVX2: memref.dealloc %[[WIDE]]
// BW: memref.global "private" constant @w_i16x16 : memref<2x4x32xi16>
// BW-LABEL: func @signed_constant
// BW: llvm.call_intrinsic "llvm.x86.avx512.pmaddw.d.512"
// A CPU with neither (x86-64's baseline, SSE2): the generic stays, which
// the affine passes vectorize exactly.
// SSE: memref.global "private" constant @w : memref<8x20xi8>
// SSE-LABEL: func @signed_constant
// SSE: linalg.generic
// SSE-NOT: call_intrinsic
// SERIAL-LABEL: func @signed_constant
// SERIAL-NOT: scf.parallel
// SERIAL: llvm.call_intrinsic

// -----

// An unsigned A (extui: what vpdpbusd takes, no shift, no correction) times
// B from an argument: B is packed at run time into a buffer freed after.
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @unsigned_runtime(%a: memref<128x30xi8>, %b: memref<30x70xi8>, %c: memref<128x70xi32>) {
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<128x30xi8>, memref<30x70xi8>) outs(%c : memref<128x70xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %1, %0 : i32
    %3 = arith.addi %2, %acc : i32
    linalg.yield %3 : i32
  }
  return
}
// ZMM-LABEL: func @unsigned_runtime
// ZMM: %[[PACKED:.*]] = memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x?x64xi8>
// ZMM: memref.load %{{.*}} : memref<30x70xi8>
// ZMM: memref.store %{{.*}}, %[[PACKED]]
// ZMM-NOT: arith.xori
// ZMM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// The K % 4 = 2 last columns: A's bytes past K masked.
// ZMM: vector.maskedload %{{.*}} : memref<128x30xi8>, vector<4xi1>, vector<4xi8> into vector<4xi8>
// ZMM: memref.dealloc %[[PACKED]]

// -----

// Batch dimensions: B with its own batch (attention's scores) is packed per
// batch element, inside the batch loop; 16 columns fill a zmm panel, so C is
// stored with plain vector moves at the batch element's indices.
#mapA = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#mapB = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#mapC = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @batched(%a: memref<4x16x64xi8>, %b: memref<4x64x16xi8>, %c: memref<4x16x16xi32>) {
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x16x64xi8>, memref<4x64x16xi8>) outs(%c : memref<4x16x16xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
// ZMM-LABEL: func @batched
// ZMM: memref.alloc
// ZMM: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// ZMM: memref.load %{{.*}}[%[[B]], %{{.*}}, %{{.*}}] : memref<4x64x16xi8>
// ZMM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ZMM-NOT: vector.maskedstore
// ZMM: vector.store %{{.*}}, %{{.*}}[%[[B]], %{{.*}}, %{{.*}}]

// -----

// N a constant multiple of the lanes (32 columns: 2 zmm or 4 ymm panels):
// every tile's columns are inside C, so the epilogue loads, adds and stores
// with plain vector moves and no tile is masked (masked moves are microcoded
// on AMD). A K of 6 is one partial chunk of A's widened copy (AVX2).
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @whole_columns(%a: memref<?x6xi8>, %b: memref<6x32xi8>, %c: memref<?x32xi32>) {
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<?x6xi8>, memref<6x32xi8>) outs(%c : memref<?x32xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
// ZMM-LABEL: func @whole_columns
// ZMM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// ZMM-NOT: vector.maskedstore
// ZMM: vector.store %{{.*}} : memref<?x32xi32>, vector<16xi32>
// ZMM-NOT: vector.maskedstore
// ZMM: return
// AVX2-LABEL: func @whole_columns
// AVX2: vector.maskedload %{{.*}} : memref<?x6xi8>, vector<16xi1>, vector<16xi8> into vector<16xi8>
// AVX2: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// AVX2-NOT: vector.maskedstore
// AVX2: vector.store %{{.*}} : memref<?x32xi32>, vector<8xi32>
// AVX2-NOT: vector.maskedstore
// AVX2: return

// -----

// An unsigned B (extui): vpdpbusd's second operand is signed, so the
// widening product computes it, even where VNNI is (its 16-bit panels hold
// B zero-extended). Refused: an A whose last dimension is strided (its
// groups are not contiguous bytes), a body that is not acc + ext(a) *
// ext(b).
#mapA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mapB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mapC = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @refused(%a: memref<16x64xi8>, %b: memref<64x16xi8>, %c: memref<16x16xi32>,
                   %s: memref<16x64xi8, strided<[128, 2]>>) {
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x64xi8>, memref<64x16xi8>) outs(%c : memref<16x16xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extui %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s, %b : memref<16x64xi8, strided<[128, 2]>>, memref<64x16xi8>) outs(%c : memref<16x16xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  linalg.generic {indexing_maps = [#mapA, #mapB, #mapC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<16x64xi8>, memref<64x16xi8>) outs(%c : memref<16x16xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.subi %acc, %2 : i32
    linalg.yield %3 : i32
  }
  return
}
// ZMM-LABEL: func @refused
// ZMM: arith.extui %{{.*}} : i8 to i16
// ZMM: llvm.call_intrinsic "llvm.x86.avx512.pmaddw.d.512"
// ZMM-COUNT-2: linalg.generic
// ZMM-NOT: call_intrinsic
// ZMM: return
