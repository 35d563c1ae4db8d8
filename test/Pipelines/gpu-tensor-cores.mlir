// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=gpu})' | FileCheck %s --check-prefix=GPU
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_80})' | FileCheck %s --check-prefix=PTX
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_75 to=gpu})' | FileCheck %s --check-prefix=NOTC
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{tensor-cores=false to=gpu})' | FileCheck %s --check-prefix=NOTC
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=cpu})' | FileCheck %s --check-prefix=CPU

// f16 and bf16 matmuls (f32 accumulators) run on tensor cores: 4 warps per
// block, 16 mma.sync m16n8k16 per step of 32 along K.
// GPU-LABEL: func.func @matmul_f16
// GPU: gpu.launch_func  @[[F16:[a-z_0-9]+]]::@{{.*}} blocks in (%c2, %c2, %c1) threads in (%c128, %c1, %c1)
// GPU: gpu.module @[[F16]]
// GPU: gpu.func @{{.*}} workgroup(%{{.*}} : memref<64x40xf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x72xf16, #gpu.address_space<workgroup>>) kernel
// GPU-COUNT-16: nvgpu.mma.sync
// GPU-LABEL: func.func @matmul_bf16
// GPU: gpu.launch_func  @[[BF16:[a-z_0-9]+]]::@{{.*}} blocks in (%c1, %c1, %c2) threads in (%c128, %c1, %c1)
// GPU: gpu.module @[[BF16]]
// GPU: gpu.func @{{.*}} workgroup(%{{.*}} : memref<64x40xbf16, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x72xbf16, #gpu.address_space<workgroup>>) kernel
// GPU-COUNT-16: nvgpu.mma.sync

// The PTX has the f16 mma (upstream's nvgpu lowering) and the bf16 one
// through dl-gpu-bf16-mma-to-nvvm.
// PTX: gpu.binary @matmul_f16_kernel_0 {{.*}}.target sm_80{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: gpu.binary @matmul_bf16_kernel_2 {{.*}}.target sm_80{{.*}}mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// Without tensor cores (sm_75 has no m16n8k16 for bf16; or turned off):
// the f16 matmul (M = 96, N = 72) is register-tiled in float32, the bf16
// one (M = 33, N = 20: too small for its tiles) plain parallel loops.
// NOTC-NOT: nvgpu.mma.sync
// NOTC: gpu.func @matmul_f16_kernel{{.*}} workgroup(%{{.*}} : memref<8x132xf32, #gpu.address_space<workgroup>>
// NOTC-NOT: nvgpu.mma.sync
// NOTC: gpu.module @matmul_bf16
// NOTC-NOT: workgroup(
// NOTC-NOT: nvgpu.mma.sync

// Emulated on the CPU, with no nvgpu op left.
// CPU-NOT: nvgpu.
// CPU: llvm.func @matmul_f16
func.func @matmul_f16(%a: tensor<96x40xf16>, %b: tensor<40x72xf16>) -> tensor<96x72xf16> {
  %m = dl.matmul %a, %b : (tensor<96x40xf16>, tensor<40x72xf16>) -> tensor<96x72xf16>
  return %m : tensor<96x72xf16>
}

func.func @matmul_bf16(%a: tensor<2x33x70xbf16>, %b: tensor<2x70x20xbf16>) -> tensor<2x33x20xbf16> {
  %m = dl.matmul %a, %b : (tensor<2x33x70xbf16>, tensor<2x70x20xbf16>) -> tensor<2x33x20xbf16>
  return %m : tensor<2x33x20xbf16>
}
