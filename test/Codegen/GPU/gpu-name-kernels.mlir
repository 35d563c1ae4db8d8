// RUN: dl-opt %s --dl-gpu-name-kernels | FileCheck %s

// Outlining named both kernels @host_kernel: each takes its module's name,
// and the launches follow. A module of two kernels keeps their names.
// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func  @host_kernel::@host_kernel
// CHECK: gpu.launch_func  @host_kernel_0::@host_kernel_0
// CHECK: gpu.launch_func  @pair::@first
// CHECK: gpu.module @host_kernel
// CHECK: gpu.func @host_kernel() kernel
// CHECK: gpu.module @host_kernel_0
// CHECK: gpu.func @host_kernel_0() kernel
// CHECK: gpu.module @pair
// CHECK: gpu.func @first() kernel
// CHECK: gpu.func @second() kernel
module attributes {gpu.container_module} {
  func.func @host() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @host_kernel::@host_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @host_kernel_0::@host_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @pair::@first blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @host_kernel {
    gpu.func @host_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @host_kernel_0 {
    gpu.func @host_kernel() kernel {
      gpu.return
    }
  }
  gpu.module @pair {
    gpu.func @first() kernel {
      gpu.return
    }
    gpu.func @second() kernel {
      gpu.return
    }
  }
}
