// RUN: dl-opt %s --dl-gpu-device-memory --split-input-file --verify-diagnostics | FileCheck %s

// Host buffers become device memory (not managed: no host_shared). A
// constant the kernels read is resident: its device copy is made by the
// first call (dlc_cuda_resident, the address kept in a module global) and
// is neither copied nor freed by the function; its descriptor is built in
// the LLVM dialect and cast back to the memref type. The returned buffer is
// the caller's.
// CHECK-LABEL: func.func @host
// CHECK: %[[W:.*]] = memref.get_global @weights
// CHECK: %[[SLOT:.*]] = llvm.mlir.addressof @__dlc_resident_weights
// CHECK: %[[HOSTI:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: %[[HOST:.*]] = llvm.inttoptr
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(16 : i64)
// CHECK: %[[DEV:.*]] = llvm.call @dlc_cuda_resident(%[[SLOT]], %[[HOST]], %[[BYTES]])
// CHECK: llvm.insertvalue %[[DEV]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[DEV]], %{{.*}}[1]
// CHECK: %[[WD:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// CHECK-NOT: gpu.memcpy
// CHECK-NOT: memref.copy
// Allocations and deallocations are synchronous ops, for gpu-async-region
// to chain on the kernels' stream (no wait for the device at each one).
// CHECK-NOT: gpu.wait
// CHECK: %[[T:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: %[[R:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK: gpu.launch_func @k::@f {{.*}} args(%[[WD]] : memref<4xf32>, %[[T]] : memref<4xf32>, %[[R]] : memref<?xf32>)
// The resident copy stays.
// CHECK-NEXT: gpu.dealloc %[[T]] : memref<4xf32>
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: memref.alloc
// CHECK-NOT: host_shared
// CHECK: llvm.func @dlc_cuda_resident(!llvm.ptr, !llvm.ptr, i64) -> !llvm.ptr
// CHECK: llvm.mlir.global internal @__dlc_resident_weights() {{.*}} : !llvm.ptr
// CHECK-NEXT: %[[Z:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: llvm.return %[[Z]]
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

// Not resident: a constant the function returns (the caller frees its
// results) and a mutable global are copied into device memory at each
// call (synchronous ops, chained later on the kernels' stream); the
// returned copy is the caller's, the other is freed before the return.
// CHECK-LABEL: func.func @returned
// CHECK-NOT: dlc_cuda_resident
// CHECK: %[[G:.*]] = memref.get_global @table
// CHECK: %[[GD:.*]] = gpu.alloc () : memref<2xi32>
// CHECK: gpu.memcpy %[[GD]], %[[G]] : memref<2xi32>, memref<2xi32>
// CHECK: %[[M:.*]] = memref.get_global @state
// CHECK: %[[MD:.*]] = gpu.alloc
// CHECK: gpu.memcpy %[[MD]], %[[M]]
// CHECK: gpu.launch_func @k::@g {{.*}} args(%[[MD]] : memref<3xf32>)
// CHECK: gpu.dealloc %[[MD]]
// CHECK-NOT: gpu.dealloc
// CHECK: return %[[GD]]
module attributes {gpu.container_module} {
  memref.global "private" constant @table : memref<2xi32> = dense<[7, 8]>
  memref.global "private" @state : memref<3xf32> = dense<0.0>
  gpu.module @k {
    gpu.func @g(%s: memref<3xf32>) kernel {
      gpu.return
    }
  }
  func.func @returned() -> memref<2xi32> {
    %c1 = arith.constant 1 : index
    %t = memref.get_global @table : memref<2xi32>
    %s = memref.get_global @state : memref<3xf32>
    gpu.launch_func @k::@g blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%s : memref<3xf32>)
    return %t : memref<2xi32>
  }
}

// -----

func.func @stack() {
  // expected-error @below {{dl-gpu-device-memory: a stack buffer in a host function cannot be reached by GPU kernels}}
  %a = memref.alloca() : memref<4xf32>
  return
}

// -----

// A shape buffer (a reshape with several run-time sizes in one group) folds
// away: the reshape is a reinterpret cast to the stored sizes with row-major
// strides, and no buffer is left, host or device (upstream's gpu-to-llvm
// does not lower memref.reshape).
// CHECK-LABEL: func.func @shape_buffer
// CHECK-NOT: memref.alloc
// CHECK: %[[S0:.*]] = arith.muli %{{.*}}, %arg2 : index
// CHECK: %[[V:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%arg1, %arg2], strides: [%[[S0]], %{{.*}}] : memref<?xf32> to memref<?x?xf32, strided<[?, ?]>>
// CHECK: %[[R:.*]] = memref.cast %[[V]] : memref<?x?xf32, strided<[?, ?]>> to memref<?x?xf32>
// CHECK-NOT: gpu.alloc
// CHECK-NOT: dealloc
// CHECK: return %[[R]]
module attributes {gpu.container_module} {
  func.func @shape_buffer(%a: memref<?xf32>, %m: index, %n: index) -> memref<?x?xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %shape = memref.alloc() : memref<2xindex>
    memref.store %m, %shape[%c0] : memref<2xindex>
    memref.store %n, %shape[%c1] : memref<2xindex>
    %r = memref.reshape %a(%shape) : (memref<?xf32>, memref<2xindex>) -> memref<?x?xf32>
    memref.dealloc %shape : memref<2xindex>
    return %r : memref<?x?xf32>
  }
}
