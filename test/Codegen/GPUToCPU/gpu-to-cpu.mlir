// RUN: dl-opt %s --dl-gpu-to-cpu --split-input-file --verify-diagnostics | FileCheck %s

// A kernel with workgroup memory and a barrier: each block reverses its 64
// elements through the tile. The barrier splits the thread loops in two;
// %i, computed before it and used after it, is kept per thread.
// CHECK-LABEL: func.func @reverse_blocks
// CHECK-NOT: gpu.
// CHECK: scf.parallel (%[[BX:.*]], %{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-DAG: %[[SPILL:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xindex>
// CHECK-DAG: %[[TILE:.*]] = memref.alloc() : memref<64xf32>
// CHECK: scf.for %[[TZ:.*]] =
// CHECK: scf.for %[[TY:.*]] =
// CHECK: scf.for %[[TX:.*]] =
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK: memref.store %{{.*}}, %[[TILE]][%[[TX]]] : memref<64xf32>
// CHECK: memref.store %[[I]], %[[SPILL]][%[[TZ]], %[[TY]], %[[TX]]]
// CHECK: scf.for %[[TZ2:.*]] =
// CHECK: scf.for %[[TY2:.*]] =
// CHECK: scf.for %[[TX2:.*]] =
// CHECK: %[[I2:.*]] = memref.load %[[SPILL]][%[[TZ2]], %[[TY2]], %[[TX2]]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I2]]] : memref<256xf32>
// CHECK: memref.dealloc
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @reverse(%in: memref<256xf32>, %out: memref<256xf32>)
        workgroup(%tile: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %bx = gpu.block_id x
      %bd = gpu.block_dim x
      %base = arith.muli %bx, %bd : index
      %i = arith.addi %base, %tx : index
      %v = memref.load %in[%i] : memref<256xf32>
      memref.store %v, %tile[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c63 = arith.constant 63 : index
      %r = arith.subi %c63, %tx : index
      %w = memref.load %tile[%r] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %w, %out[%i] : memref<256xf32>
      gpu.return
    }
  }
  func.func @reverse_blocks(%in: memref<256xf32>, %out: memref<256xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@reverse blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%in : memref<256xf32>, %out : memref<256xf32>)
    return
  }
}

// -----

// A barrier inside a loop (the shared-memory tiling pattern): the loop runs
// once per block around the thread loops of its body, and its loop-carried
// accumulator lives in a per-thread buffer.
// CHECK-LABEL: func.func @tiled_sum
// CHECK: scf.parallel
// CHECK-DAG: %[[ACC:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[ACC]]
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[ACC]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[ACC]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[SUM:.*]] = memref.load %[[ACC]]
// CHECK: memref.store %[[SUM]], %{{.*}} : memref<32xf32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sum(%in: memref<32x128xf32>, %out: memref<32xf32>)
        workgroup(%tile: memref<32xf32, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %zero = arith.constant 0.0 : f32
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %total = scf.for %k = %c0 to %c128 step %c32 iter_args(%acc = %zero) -> (f32) {
        %col = arith.addi %k, %tx : index
        %v = memref.load %in[%tx, %col] : memref<32x128xf32>
        memref.store %v, %tile[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %c31 = arith.constant 31 : index
        %r = arith.subi %c31, %tx : index
        %w = memref.load %tile[%r] : memref<32xf32, #gpu.address_space<workgroup>>
        %next = arith.addf %acc, %w : f32
        gpu.barrier
        scf.yield %next : f32
      }
      memref.store %total, %out[%tx] : memref<32xf32>
      gpu.return
    }
  }
  func.func @tiled_sum(%in: memref<32x128xf32>, %out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@sum blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%in : memref<32x128xf32>, %out : memref<32xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @guarded(%out: memref<32xf32>) kernel {
      %tx = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %tx, %c16 : index
      // expected-error @below {{dl-gpu-to-cpu: a gpu.barrier or nvgpu.mma.sync inside 'scf.if' is not supported (only inside scf.for)}}
      scf.if %low {
        gpu.barrier
      }
      gpu.return
    }
  }
  func.func @barrier_in_if(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@guarded blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%out : memref<32xf32>)
    return
  }
}

// -----

// The bounds of a loop holding a barrier computed from the block id (block z
// runs its own slice of the loop, as split-K matmuls do): computed once per
// block, from the block's own id (an abort before: the clone kept a use of
// the kernel's block id).
// CHECK-LABEL: func.func @block_slices
// CHECK: scf.parallel (%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) =
// CHECK: %[[LO:.*]] = arith.muli %[[BZ]], %c8 :
// CHECK-NEXT: %[[HI:.*]] = arith.addi %[[LO]], %c8 :
// CHECK-NEXT: arith.constant 1
// CHECK-NEXT: scf.for %{{.*}} = %[[LO]] to %[[HI]] step
// CHECK-NOT: gpu.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @sliced(%out: memref<32xf32>) kernel {
      %bz = gpu.block_id z
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %lo = arith.muli %bz, %c8 : index
      %hi = arith.addi %lo, %c8 : index
      scf.for %i = %lo to %hi step %c1 {
        gpu.barrier
      }
      gpu.return
    }
  }
  func.func @block_slices(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@sliced blocks in (%c1, %c1, %c4) threads in (%c32, %c1, %c1)
        args(%out : memref<32xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @divergent(%out: memref<32xf32>) kernel {
      // expected-error @below {{dl-gpu-to-cpu: the bounds of a loop holding a gpu.barrier must be the same for every thread of the block}}
      %tx = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      // expected-error @below {{dl-gpu-to-cpu: (the loop is here)}}
      scf.for %i = %c0 to %tx step %c1 {
        gpu.barrier
      }
      gpu.return
    }
  }
  func.func @thread_dependent_bound(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@divergent blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%out : memref<32xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @shuffle(%out: memref<32xf32>) kernel {
      %tx = gpu.thread_id x
      %v = memref.load %out[%tx] : memref<32xf32>
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      // expected-error @below {{dl-gpu-to-cpu: cannot run 'gpu.shuffle' on the CPU (in kernel @shuffle)}}
      %s, %ok = gpu.shuffle xor %v, %c1, %c32 : f32
      memref.store %s, %out[%tx] : memref<32xf32>
      gpu.return
    }
  }
  func.func @warp_shuffle(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@shuffle blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%out : memref<32xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @below {{dl-gpu-to-cpu: private memory attributions are not supported}}
    gpu.func @scratch(%out: memref<32xf32>) private(%p: memref<4xf32, #gpu.address_space<private>>) kernel {
      gpu.return
    }
  }
  func.func @private_memory(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scratch blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%out : memref<32xf32>)
    return
  }
}

// -----

func.func @not_outlined(%out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @below {{dl-gpu-to-cpu: outline the kernels first (gpu-kernel-outlining)}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

// An i1 (a bounds check) kept across a barrier is stored as i8.
// CHECK-LABEL: func.func @condition_across_barrier
// CHECK: %[[COND:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xi8>
// CHECK: %[[LOW:.*]] = arith.cmpi ult
// CHECK: %[[WIDE:.*]] = arith.extui %[[LOW]] : i1 to i8
// CHECK: memref.store %[[WIDE]], %[[COND]]
// CHECK: %[[BYTE:.*]] = memref.load %[[COND]]
// CHECK: %[[BACK:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK: scf.if %[[BACK]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @guarded(%out: memref<32xf32>) kernel {
      %tx = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %tx, %c16 : index
      gpu.barrier
      scf.if %low {
        %one = arith.constant 1.0 : f32
        memref.store %one, %out[%tx] : memref<32xf32>
      }
      gpu.return
    }
  }
  func.func @condition_across_barrier(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@guarded blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%out : memref<32xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%out: memref<32xf32>) kernel {
      gpu.return
    }
  }
  func.func @dynamic_shared(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %bytes = arith.constant 128 : i32
    // expected-error @below {{dl-gpu-to-cpu: dynamic shared memory is not supported}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        dynamic_shared_memory_size %bytes args(%out : memref<32xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%out: memref<32xf32>) kernel {
      gpu.return
    }
  }
  func.func @async_launch(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    // expected-error @below {{dl-gpu-to-cpu: async launches are not supported}}
    %t1 = gpu.launch_func async [%t0] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%out : memref<32xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target, "">]
  func.func @serialized(%out: memref<32xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{dl-gpu-to-cpu: no gpu.func @kernels::@k to run (kernels serialized to a gpu.binary cannot be emulated)}}
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%out : memref<32xf32>)
    return
  }
}

// -----

// A warp-wide mma.sync runs like a barrier: in one thread loop each lane
// stores its fragments of A (8 values) and B (4 values) as f32 into its
// warp's 16 x 16 and 16 x 8 matrices (per block, one per warp); in the next
// each lane computes its 4 values of D = A * B + C over k = 0..15, kept per
// thread for the store after it.
// CHECK-LABEL: func.func @mma
// CHECK: scf.parallel
// CHECK-DAG: %[[WARPS:.*]] = arith.divui %{{.*}}, %c32{{.*}} : index
// CHECK-DAG: %[[MA:.*]] = memref.alloc(%[[WARPS]]) : memref<?x16x16xf32>
// CHECK-DAG: %[[MB:.*]] = memref.alloc(%[[WARPS]]) : memref<?x16x8xf32>
// CHECK-DAG: %[[D:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xvector<2x2xf32>>
// The fragments are built in the first run, kept per thread...
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: vector.from_elements
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<?x?x?xvector<4x2xf16>>
// ... stored into the warp's matrices...
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %{{.*}} : memref<?x?x?xvector<4x2xf16>>
// CHECK-COUNT-8: memref.store %{{.*}}, %[[MA]]
// CHECK-COUNT-4: memref.store %{{.*}}, %[[MB]]
// ... and multiplied.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c1{{.*}} iter_args
// CHECK: memref.load %[[MA]]
// CHECK: memref.load %[[MB]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %[[D]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[D]]
// CHECK: vector.store
// CHECK-NOT: nvgpu.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mma(%a: memref<64x8xf16>, %b: memref<64x4xf16>, %out: memref<64x4xf32>) kernel {
      %tx = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %a0 = vector.load %a[%tx, %c0] : memref<64x8xf16>, vector<2xf16>
      %a1 = vector.load %a[%tx, %c2] : memref<64x8xf16>, vector<2xf16>
      %a2 = arith.constant dense<1.0> : vector<2xf16>
      %e0 = memref.load %a[%tx, %c3] : memref<64x8xf16>
      %e1 = memref.load %a[%tx, %c1] : memref<64x8xf16>
      %a3 = vector.from_elements %e0, %e1 : vector<2xf16>
      %z = arith.constant dense<0.0> : vector<4x2xf16>
      %va0 = vector.insert %a0, %z [0] : vector<2xf16> into vector<4x2xf16>
      %va1 = vector.insert %a1, %va0 [1] : vector<2xf16> into vector<4x2xf16>
      %va2 = vector.insert %a2, %va1 [2] : vector<2xf16> into vector<4x2xf16>
      %va = vector.insert %a3, %va2 [3] : vector<2xf16> into vector<4x2xf16>
      %b0 = vector.load %b[%tx, %c0] : memref<64x4xf16>, vector<2xf16>
      %b1 = vector.load %b[%tx, %c2] : memref<64x4xf16>, vector<2xf16>
      %zb = arith.constant dense<0.0> : vector<2x2xf16>
      %vb0 = vector.insert %b0, %zb [0] : vector<2xf16> into vector<2x2xf16>
      %vb = vector.insert %b1, %vb0 [1] : vector<2xf16> into vector<2x2xf16>
      %vc = arith.constant dense<0.5> : vector<2x2xf32>
      %d = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %d0 = vector.extract %d[0] : vector<2xf32> from vector<2x2xf32>
      %d1 = vector.extract %d[1] : vector<2xf32> from vector<2x2xf32>
      vector.store %d0, %out[%tx, %c0] : memref<64x4xf32>, vector<2xf32>
      vector.store %d1, %out[%tx, %c2] : memref<64x4xf32>, vector<2xf32>
      gpu.return
    }
  }
  func.func @mma(%a: memref<64x8xf16>, %b: memref<64x4xf16>, %out: memref<64x4xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @kernels::@mma blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%a : memref<64x8xf16>, %b : memref<64x4xf16>, %out : memref<64x4xf32>)
    return
  }
}

// -----

// mma.sync needs whole warps: 48 threads are one and a half.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mma48(%out: memref<48x4xf32>) kernel {
      %va = arith.constant dense<1.0> : vector<4x2xf16>
      %vb = arith.constant dense<1.0> : vector<2x2xf16>
      %vc = arith.constant dense<0.0> : vector<2x2xf32>
      %d = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      gpu.return
    }
  }
  func.func @mma_partial_warp(%out: memref<48x4xf32>) {
    %c1 = arith.constant 1 : index
    %c48 = arith.constant 48 : index
    // expected-error @below {{dl-gpu-to-cpu: kernel @mma48 uses nvgpu.mma.sync, which needs whole warps: the block size must be a constant multiple of 32 threads}}
    gpu.launch_func @kernels::@mma48 blocks in (%c1, %c1, %c1) threads in (%c48, %c1, %c1)
        args(%out : memref<48x4xf32>)
    return
  }
}

// -----

// Only m16n8k16 with 16-bit float inputs and an f32 accumulator is run:
// not tf32 m16n8k8.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @tf32() kernel {
      %va = arith.constant dense<1.0> : vector<4x1xf32>
      %vb = arith.constant dense<1.0> : vector<2x1xf32>
      %vc = arith.constant dense<0.0> : vector<2x2xf32>
      // expected-error @below {{dl-gpu-to-cpu: cannot run this nvgpu.mma.sync on the CPU (supported: m16n8k16 with f16 or bf16 A and B and an f32 accumulator)}}
      %d = nvgpu.mma.sync (%va, %vb, %vc) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      gpu.return
    }
  }
  func.func @mma_tf32() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@tf32 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
    return
  }
}

// -----

// Other nvgpu ops (warp-wide loads among them) are not run.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @ldmatrix(%m: memref<16x16xf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      // expected-error @below {{dl-gpu-to-cpu: cannot run 'nvgpu.ldmatrix' on the CPU (in kernel @ldmatrix)}}
      %r = nvgpu.ldmatrix %m[%c0, %c0] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      gpu.return
    }
  }
  func.func @ldmatrix(%m: memref<16x16xf16, #gpu.address_space<workgroup>>) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @kernels::@ldmatrix blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%m : memref<16x16xf16, #gpu.address_space<workgroup>>)
    return
  }
}
