// RUN: dl-opt %s --dl-gpu-device-memory --split-input-file --verify-diagnostics | FileCheck %s

// Host buffers become device memory (not managed: no host_shared); a
// constant is copied into it on a stream, waited for, for the kernels, and
// freed before the return; the returned buffer is the caller's.
// CHECK-LABEL: func.func @host
// CHECK: %[[W:.*]] = memref.get_global @weights
// CHECK: %[[A0:.*]] = gpu.wait async
// CHECK: %[[WD:.*]], %[[A1:.*]] = gpu.alloc async [%[[A0]]] () : memref<4xf32>
// CHECK: gpu.wait [%[[A1]]]
// CHECK: %[[C0:.*]] = gpu.wait async
// CHECK: %[[C1:.*]] = gpu.memcpy async [%[[C0]]] %[[WD]], %[[W]] : memref<4xf32>, memref<4xf32>
// CHECK: gpu.wait [%[[C1]]]
// CHECK-NOT: memref.copy
// CHECK: %[[T:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<4xf32>
// CHECK: %[[R:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] (%{{.*}}) : memref<?xf32>
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
// CHECK-NOT: host_shared
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
