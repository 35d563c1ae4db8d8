// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=gpu block-size=128})' | FileCheck %s --check-prefix=GPU
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline)' | FileCheck %s --check-prefix=PTX90
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_80})' | FileCheck %s --check-prefix=PTX80
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_99})' 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{block-size=0})' 2>&1 | FileCheck %s --check-prefix=BADBLOCK
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{from=vector})' 2>&1 | FileCheck %s --check-prefix=BADFROM
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=gpu})' | dl-opt --pass-pipeline='builtin.module(dl-gpu-pipeline{from=gpu})' | FileCheck %s --check-prefix=PTX90
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=cpu})' | FileCheck %s --check-prefix=CPU

// The elementwise chain (fused) and the matmul become kernels: parallel
// loops tiled by the block size, blocks and threads mapped to the GPU ids,
// outlined into one gpu.module; the host launches them.
// GPU: module attributes {gpu.container_module}
// GPU-LABEL: func.func @mlp_layer
// GPU-NOT: scf.parallel
// GPU: gpu.launch_func  @[[K0:[a-z_0-9]+]]::@{{[a-z_0-9]+}} blocks in (%c64, %c1, %c1) threads in (%c1, %c128, %c1)
// GPU: gpu.launch_func
// GPU: gpu.launch_func
// GPU: gpu.module @[[K0]]
// GPU: gpu.func @{{.*}} kernel attributes {known_block_size = array<i32: 1, 128, 1>
// GPU: gpu.block_id  x
// GPU: gpu.thread_id  y

// PTX text in the gpu.binary, one .entry per kernel, for the chip asked.
// PTX90: gpu.binary @{{.*}}#nvvm.target<chip = "sm_90", features = "+ptx80">
// PTX90-SAME: .target sm_90
// PTX90-SAME: .entry
// PTX80: .target sm_80

// The same kernels as loops over blocks and threads on the CPU
// (dl-gpu-to-cpu), lowered to the llvm dialect: blocks are async tasks.
// CPU-NOT: gpu.
// CPU: llvm.func @mlp_layer
// CPU: llvm.call @mlirAsyncRuntime

// BADFROM: dl-gpu-pipeline: from must be dl, graph, linalg, bufferized or gpu, but got 'vector'
// BADCHIP: dl-gpu-pipeline: unsupported chip 'sm_99'; supported: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90
// BADBLOCK: dl-gpu-pipeline: block-size must be in 1..1024, but got 0
func.func @mlp_layer(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>) -> tensor<64x16xf32> {
  %m = dl.matmul %x, %w : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %a = dl.add %m, %b : (tensor<64x16xf32>, tensor<16xf32>) -> tensor<64x16xf32>
  %r = dl.relu %a : tensor<64x16xf32> -> tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}
