// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=gpu block-size=128})' | FileCheck %s --check-prefix=GPU
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline)' | FileCheck %s --check-prefix=PTX90
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=gpu})' | FileCheck %s --check-prefix=SHARED
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=gpu matmul-tile=8})' | FileCheck %s --check-prefix=SHARED8
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{matmul-tile=33})' 2>&1 | FileCheck %s --check-prefix=BADTILE
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_80})' | FileCheck %s --check-prefix=PTX80
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_99})' 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{block-size=0})' 2>&1 | FileCheck %s --check-prefix=BADBLOCK
// RUN: not dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{from=vector})' 2>&1 | FileCheck %s --check-prefix=BADFROM
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=gpu})' | dl-opt --pass-pipeline='builtin.module(dl-gpu-pipeline{from=gpu})' | FileCheck %s --check-prefix=PTX90
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{to=cpu})' | FileCheck %s --check-prefix=CPU
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline)' | FileCheck %s --check-prefix=VEC4
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline)' | FileCheck %s --check-prefix=STREAM

// The elementwise chain (fused) and the matmul become kernels: parallel
// loops tiled into blocks of 128 threads spread over the innermost
// dimensions (16 columns x 8 rows, as the rows are only 16 wide), the
// innermost dimension on thread x (consecutive threads, consecutive
// addresses), the dimension of most blocks (the 8 of rows) on block x,
// outlined into gpu.modules; the host launches them.
// GPU: module attributes {{{.*}}gpu.container_module}
// GPU-LABEL: func.func @mlp_layer
// GPU-NOT: scf.parallel
// GPU: gpu.launch_func  @[[K0:[a-z_0-9]+]]::@{{[a-z_0-9]+}} blocks in (%c8, %c1, %c1) threads in (%c16, %c8, %c1)
// Constants and index computations stay in the kernel (immediates, known
// loop bounds): its only parameter is the buffer it writes.
// GPU-SAME: args(%{{[a-z_0-9]+}} : memref<64x16xf32>){{$}}
// GPU: gpu.launch_func
// GPU: gpu.launch_func
// GPU: gpu.module @[[K0]]
// GPU: gpu.func @{{.*}} kernel attributes {known_block_size = array<i32: 16, 8, 1>
// GPU: %[[BX:.*]] = gpu.block_id  x
// GPU: %[[TX:.*]] = gpu.thread_id  x
// GPU: %[[TY:.*]] = gpu.thread_id  y
// GPU: %[[ROWS:.*]] = arith.muli %[[BX]], %{{.*}}
// GPU: %[[ROW:.*]] = arith.addi %[[TY]], %[[ROWS]]
// GPU: memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[TX]]] : memref<64x16xf32>

// The matmul: 16x16 threads per block, tiles of A and B in workgroup memory
// between barriers (dl-gpu-shared-matmul); in PTX, .shared arrays and
// bar.sync.
// SHARED: gpu.launch_func  @{{.*}} blocks in (%c1, %c4, %c1) threads in (%c16, %c16, %c1)
// SHARED: gpu.func @{{.*}} workgroup(%{{.*}} : memref<16x16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x16xf32, #gpu.address_space<workgroup>>) kernel
// SHARED: scf.for
// SHARED: gpu.barrier
// SHARED: scf.for
// SHARED: gpu.barrier
// SHARED8: workgroup(%{{.*}} : memref<8x8xf32, #gpu.address_space<workgroup>>
// BADTILE: dl-gpu-pipeline: matmul-tile must be in 1..32, but got 33
// PTX90: .shared .align 4 .b8 __wg_{{.*}}[1024]
// PTX90: bar.sync

// PTX text in the gpu.binary, one .entry per kernel, for the chip asked.
// PTX90: gpu.binary @{{.*}}#nvvm.target<chip = "sm_90", features = "+ptx80">
// PTX90-SAME: .target sm_90
// PTX90-SAME: .entry
// The matmul kernel stages its tiles with 16-byte loads (K = 32, N = 16).
// VEC4: ld.global.v4.b32
// PTX80: .target sm_80

// The same kernels as loops over blocks and threads on the CPU
// (dl-gpu-to-cpu), lowered to the llvm dialect: blocks run on dlc's thread
// pool, through an outlined body and its trampoline.
// CPU-NOT: gpu.
// CPU: llvm.func @mlp_layer
// CPU: llvm.call @dlc_parallel_for(%{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64) -> ()
// CPU: llvm.func internal @mlp_layer_parallel_{{[0-9]}}(
// CPU: llvm.func internal @mlp_layer_parallel_{{[0-9]}}_entry(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)

// BADFROM: dl-gpu-pipeline: from must be dl, graph, linalg, bufferized or gpu, but got 'vector'
// BADCHIP: dl-gpu-pipeline: unsupported chip 'sm_99'; supported: sm_70, sm_75, sm_80, sm_86, sm_89, sm_90
// BADBLOCK: dl-gpu-pipeline: block-size must be in 1..1024, but got 0
func.func @mlp_layer(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>) -> tensor<64x16xf32> {
  %m = dl.matmul %x, %w : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %a = dl.add %m, %b : (tensor<64x16xf32>, tensor<16xf32>) -> tensor<64x16xf32>
  %r = dl.relu %a : tensor<64x16xf32> -> tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}

// Rank 4, extents not multiples of the tile: 16 x 8 threads over the two
// innermost dimensions (9 and 7 wide, so guarded), the two outer ones
// collapsed into one of 15, on blocks x: no loop inside the kernel.
// GPU-LABEL: func.func @rank4
// GPU: gpu.launch_func  @{{.*}} blocks in (%c15, %c1, %c1) threads in (%c16, %c8, %c1)
// GPU-LABEL: gpu.func @rank4_kernel
// GPU-NOT: scf.for
// GPU: scf.if
func.func @rank4(%x: tensor<3x5x7x9xf32>) -> tensor<3x5x7x9xf32> {
  %e = dl.exp %x : tensor<3x5x7x9xf32> -> tensor<3x5x7x9xf32>
  return %e : tensor<3x5x7x9xf32>
}

// The host side (to=binary): buffers in device memory (mgpuMemAlloc's last
// argument, host_shared, false), and the kernels of a function chained on
// one stream (gpu-async-region), which is waited for once, after them.
// STREAM-LABEL: llvm.func @mlp_layer
// STREAM: %[[FALSE:.*]] = llvm.mlir.constant(0 : i8) : i8
// STREAM: llvm.call @mgpuMemAlloc(%{{.*}}, %{{.*}}, %[[FALSE]])
// STREAM: gpu.launch_func <%[[S:.*]] : !llvm.ptr> @mlp_layer_kernel::
// STREAM-NOT: mgpuStream
// STREAM: gpu.launch_func <%[[S]] : !llvm.ptr> @mlp_layer_kernel_0::
// STREAM-NOT: mgpuStream
// STREAM: gpu.launch_func <%[[S]] : !llvm.ptr> @mlp_layer_kernel_1::
// STREAM-NEXT: llvm.call @mgpuMemFree(%{{.*}}, %[[S]])
// STREAM-NEXT: llvm.call @mgpuStreamSynchronize(%[[S]])
