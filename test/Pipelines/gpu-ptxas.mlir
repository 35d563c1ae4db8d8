// REQUIRES: ptxas
// Every generated PTX assembles: format=bin runs ptxas on it, for sm_80 and
// sm_90, and the gpu.binary then holds a cubin (an ELF image).
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_80 format=bin})' | FileCheck %s --check-prefix=BIN80
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-gpu-pipeline{chip=sm_90 format=bin})' | FileCheck %s --check-prefix=BIN90
// Every kernel of both functions assembles (dl-opt fails otherwise): the
// softmax's, and the shared-memory matmul's with its tiles staged by 16-byte
// vector loads (ld.global.v4.b32 in the PTX), and the tensor-core kernels
// of the f16 and bf16 matmuls (mma.sync m16n8k16; each matmul also has a
// kernel that zeroes its f32 accumulator and one that rounds it).
// All 14 kernels: the softmax's 6, the f32 matmul's 2, 3 per 16-bit matmul.
// BIN80-COUNT-14: gpu.binary @{{.*}}chip = "sm_80"{{.*}}bin = "\7FELF
// BIN80-NOT: gpu.binary
// BIN90-COUNT-14: gpu.binary @{{.*}}chip = "sm_90"{{.*}}bin = "\7FELF
// BIN90-NOT: gpu.binary
func.func @softmax(%x: tensor<8x100xf32>) -> tensor<8x100xf32> {
  %s = dl.softmax %x axis = 1 : tensor<8x100xf32> -> tensor<8x100xf32>
  return %s : tensor<8x100xf32>
}

func.func @matmul(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %m = dl.matmul %a, %b : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
  return %m : tensor<64x48xf32>
}

func.func @matmul_f16(%a: tensor<70x40xf16>, %b: tensor<40x33xf16>) -> tensor<70x33xf16> {
  %m = dl.matmul %a, %b : (tensor<70x40xf16>, tensor<40x33xf16>) -> tensor<70x33xf16>
  return %m : tensor<70x33xf16>
}

func.func @matmul_bf16(%a: tensor<2x64x64xbf16>, %b: tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16> {
  %m = dl.matmul %a, %b : (tensor<2x64x64xbf16>, tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16>
  return %m : tensor<2x64x64xbf16>
}
