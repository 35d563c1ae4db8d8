// RUN: dl-opt %s --pass-pipeline='builtin.module(gpu.module(dl-gpu-float-remainder-to-libdevice))' | FileCheck %s

// f32 and f64 arith.remf in a kernel call libdevice's fmod, declared once per
// module; an f16 remf (dl computes f16 remainders in f32) is left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK-DAG: func.func private @__nv_fmodf(f32, f32) -> f32
// CHECK-DAG: func.func private @__nv_fmod(f64, f64) -> f64
// CHECK: gpu.func @remainders
// CHECK: %[[A:.*]] = func.call @__nv_fmodf(%arg0, %arg1) : (f32, f32) -> f32
// CHECK: func.call @__nv_fmodf(%[[A]], %arg1) : (f32, f32) -> f32
// CHECK: func.call @__nv_fmod(%arg2, %arg2) : (f64, f64) -> f64
// CHECK: arith.remf %arg3, %arg3 : f16
// CHECK-NOT: arith.remf
gpu.module @kernels {
  gpu.func @remainders(%a: f32, %b: f32, %c: f64, %h: f16, %p: memref<2xf32>, %q: memref<f64>, %r: memref<f16>) kernel {
    %0 = arith.remf %a, %b : f32
    %1 = arith.remf %0, %b : f32
    %2 = arith.remf %c, %c : f64
    %3 = arith.remf %h, %h : f16
    %i = arith.constant 0 : index
    memref.store %1, %p[%i] : memref<2xf32>
    memref.store %2, %q[] : memref<f64>
    memref.store %3, %r[] : memref<f16>
    gpu.return
  }
}
