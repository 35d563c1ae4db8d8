// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dl-gpu-check-mapped))' --verify-diagnostics | FileCheck %s

// A parallel loop left after convert-parallel-loops-to-gpu would run on the
// host, on device buffers: an error names it.
func.func @unmapped(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  // expected-error @+1 {{dl-gpu-check-mapped: this parallel loop could not be mapped to GPU blocks and threads}}
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %f, %a[%i] : memref<4xf32>
    scf.reduce
  }
  return
}

// -----

// Without parallel loops, nothing to say.
// CHECK-LABEL: func @mapped
func.func @mapped(%a: memref<4xf32>) {
  return
}

// -----

// A loop left on the host (a reduction convert-linalg-to-parallel-loops made
// scf.for) would read device memory there: refused too.
func.func @host_loop(%a: memref<4xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @+1 {{dl-gpu-check-mapped: this operation would read or write a device buffer on the host, outside the GPU kernels}}
    %x = memref.load %a[%i] : memref<4xf32>
    // expected-error @+1 {{would read or write a device buffer on the host}}
    memref.store %x, %s[] : memref<f32>
  }
  return
}

// -----

// Inside a kernel, loads and stores are the device's; allocations and views
// on the host only handle pointers.
// CHECK-LABEL: func @kernel_access
// CHECK: gpu.launch
func.func @kernel_access(%a: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<4xf32>
  %v = memref.subview %b[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %w = %c1, %q = %c1) {
    %f = memref.load %a[%tx] : memref<4xf32>
    memref.store %f, %v[%tx] : memref<2xf32, strided<[1], offset: 1>>
    gpu.terminator
  }
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A shape buffer (a reshape with several run-time sizes in one group) is
// filled, read and handed to memref.reshape on the host: no kernel reads it
// (dl-gpu-device-memory folds it into a reinterpret cast), so the host may.
// CHECK-LABEL: func @shape_buffer
func.func @shape_buffer(%a: memref<?xf32>, %m: index, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %shape = memref.alloc() : memref<2xindex>
  memref.store %m, %shape[%c0] : memref<2xindex>
  memref.store %n, %shape[%c1] : memref<2xindex>
  %r = memref.reshape %a(%shape) : (memref<?xf32>, memref<2xindex>) -> memref<?x?xf32>
  %d = memref.load %shape[%c1] : memref<2xindex>
  memref.dealloc %shape : memref<2xindex>
  return %d : index
}

// -----

// The same buffer read by anything else is a device buffer like any other.
func.func @not_a_shape_buffer(%m: index, %o: memref<f32>) {
  %c0 = arith.constant 0 : index
  %b = memref.alloc() : memref<2xindex>
  // expected-error @+1 {{would read or write a device buffer on the host}}
  memref.store %m, %b[%c0] : memref<2xindex>
  // expected-error @+1 {{would read or write a device buffer on the host}}
  memref.copy %b, %b : memref<2xindex> to memref<2xindex>
  return
}
