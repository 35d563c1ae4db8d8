// RUN: dl-opt %s --dl-gpu-device-memory --split-input-file --verify-diagnostics | FileCheck %s

// Host buffers become CUDA managed memory; a constant is copied into it
// for the kernels and freed before the return; the returned buffer is the
// caller's.
// CHECK-LABEL: func.func @host
// CHECK: %[[W:.*]] = memref.get_global @weights
// CHECK: %[[WD:.*]] = gpu.alloc  host_shared () : memref<4xf32>
// CHECK: memref.copy %[[W]], %[[WD]]
// CHECK: %[[T:.*]] = gpu.alloc  host_shared () : memref<4xf32>
// CHECK: %[[R:.*]] = gpu.alloc  host_shared (%{{.*}}) : memref<?xf32>
// CHECK: gpu.launch_func @k::@f {{.*}} args(%[[WD]] : memref<4xf32>, %[[T]] : memref<4xf32>, %[[R]] : memref<?xf32>)
// Deallocations are asynchronous on a stream and waited for: gpu-to-llvm
// lowers only those (mgpuMemFree(ptr, stream)).
// CHECK: %[[S0:.*]] = gpu.wait async
// CHECK: %[[D0:.*]] = gpu.dealloc async [%[[S0]]] %[[T]] : memref<4xf32>
// CHECK: gpu.wait [%[[D0]]]
// CHECK: %[[S1:.*]] = gpu.wait async
// CHECK: %[[D1:.*]] = gpu.dealloc async [%[[S1]]] %[[WD]] : memref<4xf32>
// CHECK: gpu.wait [%[[D1]]]
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: memref.alloc
module attributes {gpu.container_module} {
  memref.global "private" constant @weights : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  gpu.module @k {
    gpu.func @f(%w: memref<4xf32>, %t: memref<4xf32>, %r: memref<?xf32>) kernel {
      gpu.return
    }
  }
  func.func @host(%n: index) -> memref<?xf32> {
    %c1 = arith.constant 1 : index
    %w = memref.get_global @weights : memref<4xf32>
    %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    %r = memref.alloc(%n) : memref<?xf32>
    gpu.launch_func @k::@f blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%w : memref<4xf32>, %t : memref<4xf32>, %r : memref<?xf32>)
    memref.dealloc %t : memref<4xf32>
    return %r : memref<?xf32>
  }
}

// -----

func.func @stack() {
  // expected-error @below {{dl-gpu-device-memory: a stack buffer in a host function cannot be reached by GPU kernels}}
  %a = memref.alloca() : memref<4xf32>
  return
}
