// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-cpu-pipeline{parallel=false})' \
// RUN:   | mlir-translate --mlir-to-llvmir \
// RUN:   | llc -O3 -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4 \
// RUN:   | FileCheck %s

// The register-tiled matmul micro-kernel, compiled for AMD Zen 4: its inner
// loop is AVX-512 fused multiply-adds on zmm registers (16 f32 lanes), with
// the accumulators in registers (vfmadd231ps zmm_b, zmm_a, zmm_acc).
// CHECK-LABEL: dlc_matmul:
// CHECK: vfmadd{{[0-9]+}}ps {{.*}}%zmm{{[0-9]+}}, %zmm{{[0-9]+}}
// CHECK-COUNT-15: vfmadd{{[0-9]+}}ps {{.*}}%zmm
func.func @dlc_matmul(%a: tensor<64x96xf32>, %b: tensor<96x128xf32>) -> tensor<64x128xf32> attributes {llvm.emit_c_interface} {
  %0 = dl.matmul %a, %b : (tensor<64x96xf32>, tensor<96x128xf32>) -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}
