// REQUIRES: ptxas
// Every generated PTX assembles: format=bin runs ptxas on it, for sm_80 and
// sm_90, and the gpu.binary then holds a cubin (an ELF image).
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_80 format=bin})' | FileCheck %s --check-prefix=BIN80
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_90 format=bin})' | FileCheck %s --check-prefix=BIN90
// Every kernel of both functions assembles (dl-opt fails otherwise): the
// softmax's, and the shared-memory matmul's with its tiles staged by 16-byte
// vector loads (ld.global.v4.b32 in the PTX).
// BIN80-COUNT-2: gpu.binary @{{.*}}chip = "sm_80"{{.*}}bin = "\7FELF
// BIN90-COUNT-2: gpu.binary @{{.*}}chip = "sm_90"{{.*}}bin = "\7FELF
func.func @softmax(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %s = dl.softmax %x axis = 1 : tensor<8x100xf32> -> tensor<8x100xf32>
  return %s : tensor<8x100xf32>
}

func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %m = dl.matmul %a, %b : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
  return %m : tensor<64x48xf32>
}
