// RUN: dl-opt %s --dl-gpu-bf16-mma-to-nvvm --split-input-file --verify-diagnostics | FileCheck %s

// A bf16 mma.sync (which upstream's convert-nvgpu-to-nvvm cannot type)
// becomes nvvm.mma.sync: the 4 registers of A and 2 of B each two bf16
// bitcast to an i32, C as 4 f32, the result struct unpacked into the
// vector<2x2xf32> nvgpu describes.
// CHECK-LABEL: func.func @bf16
// CHECK: %[[C11:.*]] = vector.extract %arg2[1, 1] : f32 from vector<2x2xf32>
// CHECK: %[[A0:.*]] = vector.extract %arg0[0] : vector<2xbf16> from vector<4x2xbf16>
// CHECK: %[[A0W:.*]] = vector.bitcast %[[A0]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[A0I:.*]] = vector.extract %[[A0W]][0] : i32 from vector<1xi32>
// CHECK: %[[R:.*]] = nvvm.mma.sync A[%[[A0I]], %{{.*}}, %{{.*}}, %{{.*}}]  B[%{{.*}}, %{{.*}}]  C[%{{.*}}, %{{.*}}, %{{.*}}, %[[C11]]]
// CHECK-SAME: layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>
// CHECK-SAME: multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>
// CHECK-SAME: shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-SAME: (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[D0:.*]] = llvm.extractvalue %[[R]][0]
// CHECK: %[[D3:.*]] = llvm.extractvalue %[[R]][3]
// CHECK: %[[D:.*]] = vector.from_elements %[[D0]], %{{.*}}, %{{.*}}, %[[D3]] : vector<2x2xf32>
// CHECK: return %[[D]]
// CHECK-NOT: nvgpu.mma.sync
func.func @bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}

// -----

// f16 is left to upstream.
// CHECK-LABEL: func.func @f16
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvvm.mma.sync
func.func @f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>) -> vector<2x2xf32> {
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
  return %d : vector<2x2xf32>
}

// -----

// A bf16 accumulator has no bf16 mma in PTX.
func.func @bf16_accumulator(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xbf16>) -> vector<2x2xbf16> {
  // expected-error @below {{'nvgpu.mma.sync' op dl-gpu-bf16-mma-to-nvvm: bf16 mma.sync needs bf16 B and an f32 accumulator, but got 'vector<2x2xbf16>' and 'vector<2x2xbf16>'}}
  %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xbf16>) -> vector<2x2xbf16>
  return %d : vector<2x2xbf16>
}
