// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=haswell threads=2},func.func(dl-fuse-attention{explain=true}))' -o /dev/null 2>&1 | FileCheck %s
// RUN: dl-opt %s --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4 threads=2},func.func(dl-fuse-attention{explain=true}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZEN4

// Block rows for 1000 keys: as many as keep one [rows, 1000] block of
// scores (4000 bytes a row) within half of L2, in multiples of the register
// tile's rows (6): Haswell's 128 KiB hold 32 rows, 30 per block; Zen 4's 512
// KiB 131, 126. Each block reads all of K^T and V, so more rows read them
// fewer times: sized for the softmax's three blocks (scores, exponentials,
// probabilities) it was 6 and 42, and Whisper's attention (1500 keys) ran
// 40.7 ms per layer against 38.2 (Zen 3, 2 threads).
// CHECK: remark: dl-fuse-attention: 30 rows per block
// ZEN4: remark: dl-fuse-attention: 126 rows per block
#qk = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#kv = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @attention(%q: tensor<1x2x1000x16xf32>, %k: tensor<1x2x1000x16xf32>, %v: tensor<1x2x1000x16xf32>) -> tensor<1x2x1000x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %e0 = tensor.empty() : tensor<1x2x16x1000xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x1000x16xf32>) outs(%e0 : tensor<1x2x16x1000xf32>) permutation = [0, 1, 3, 2]
  %e1 = tensor.empty() : tensor<1x2x1000x1000xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x2x1000x1000xf32>) -> tensor<1x2x1000x1000xf32>
  %s = linalg.generic {indexing_maps = [#qk, #kv, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kt : tensor<1x2x1000x16xf32>, tensor<1x2x16x1000xf32>) outs(%f1 : tensor<1x2x1000x1000xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x1000x1000xf32>
  %e2 = tensor.empty() : tensor<1x2x1000xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x2x1000xf32>) -> tensor<1x2x1000xf32>
  %max = linalg.reduce { arith.maximumf } ins(%s : tensor<1x2x1000x1000xf32>) outs(%f2 : tensor<1x2x1000xf32>) dimensions = [3]
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %max : tensor<1x2x1000x1000xf32>, tensor<1x2x1000xf32>) outs(%e1 : tensor<1x2x1000x1000xf32>) {
  ^bb0(%a: f32, %m: f32, %c: f32):
    %0 = arith.subf %a, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x1000x1000xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x2x1000xf32>) -> tensor<1x2x1000xf32>
  %sum = linalg.reduce { arith.addf } ins(%exp : tensor<1x2x1000x1000xf32>) outs(%f3 : tensor<1x2x1000xf32>) dimensions = [3]
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x1000x1000xf32>, tensor<1x2x1000xf32>) outs(%e1 : tensor<1x2x1000x1000xf32>) {
  ^bb0(%a: f32, %t: f32, %c: f32):
    %0 = arith.divf %a, %t : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x1000x1000xf32>
  %e3 = tensor.empty() : tensor<1x2x1000x16xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x2x1000x16xf32>) -> tensor<1x2x1000x16xf32>
  %o = linalg.generic {indexing_maps = [#qk, #kv, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x1000x1000xf32>, tensor<1x2x1000x16xf32>) outs(%f4 : tensor<1x2x1000x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x1000x16xf32>
  return %o : tensor<1x2x1000x16xf32>
}
