// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},dl-select-strategies)' | FileCheck %s --check-prefix=ZEN4
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-select-strategies)' | FileCheck %s --check-prefix=ZEN3
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver3},dl-explain)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},dl-select-strategies{max-direct-filter-bytes=131072})' | FileCheck %s --check-prefix=LIMIT
// RUN: dl-opt %s --split-input-file --pass-pipeline='builtin.module(dl-resolve-target{cpu=znver4},dl-select-strategies{max-direct-filter-bytes=-1})' | FileCheck %s --check-prefix=NEVER

// Each compute-heavy op gets the strategy its lowering follows, chosen for
// the target: the micro-kernel's tile from its registers (Zen 4, 32 zmm: 6
// x 4 vectors; Zen 3, 16 ymm: 6 x 2, whose rows of B are whole 64-byte
// cache lines, where 4 x 3 would read 96 bytes of each; grouped and
// depthwise convolutions keep 4 x 3), the layout the convolution runs in.
// A strategy given in the IR is kept.
// ZEN4-LABEL: func @strategies
// ZEN4: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm, rows = 6, vectors = 4, layout = "NCHW">}
// ZEN4: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 6, vectors = 4, layout = "NCHW">}
// ZEN4: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct>}
// ZEN4: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 4>}
// ZEN4: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 4>}
// ZEN4: dl.softmax {{.*}} {dl.strategy = #dl.strategy<kind = vectorized_reduction>}
// ZEN4: dl.add
// ZEN4-NOT: dl.strategy
// ZEN4: return
// ZEN3-LABEL: func @strategies
// ZEN3: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm, rows = 6, vectors = 2, layout = "NCHW">}
// ZEN3: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 4, vectors = 3, layout = "NCHW">}
// ZEN3: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 2>}
// ZEN3: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 2>}

// dl-explain names the target, then each op's strategy and why.
// EXPLAIN: remark: target znver3 (x86_64-unknown-linux-gnu, from the IR): 16 x 256-bit vector registers, 2 FMA/cycle of latency 4, L1d 32 KiB, L2 512 KiB, 1 thread(s); micro-kernel 4 x 3 vectors (6 x 2 where B is read in rows of whole 64-byte lines); #dl.target<triple = "x86_64-unknown-linux-gnu", cpu = "znver3"
// EXPLAIN: remark: dl.conv2d: #dl.strategy<kind = im2col_gemm, rows = 6, vectors = 2, layout = "NCHW"> (heuristic: groups = 1, f32: patches as a matrix, one GEMM with a micro-kernel of 6 x 2 vectors of 256 bits (16 vector registers))
// EXPLAIN: remark: dl.conv2d: #dl.strategy<kind = direct, rows = 4, vectors = 3, layout = "NCHW"> (heuristic: grouped, or depthwise in NCHW: no GEMM to share)
// EXPLAIN: remark: dl.conv2d: #dl.strategy<kind = direct> (given in the IR)
// EXPLAIN: remark: dl.matmul: #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 2> (heuristic: cache-blocked, packed micro-kernel of 6 x 2 vectors of 256 bits (16 vector registers) (rows of B in whole 64-byte lines))
// EXPLAIN: remark: dl.softmax: #dl.strategy<kind = vectorized_reduction> (heuristic: reduced loops innermost, vectorized where contiguous)
func.func @strategies(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %d: tensor<8x1x3x3xf32>,
                      %a: tensor<4x8xi32>, %b: tensor<8x3xi32>, %f: tensor<?x8xf32>, %g: tensor<8x16xf32>)
    -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<4x3xi32>, tensor<?x16xf32>) {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %1 = dl.conv2d %0, %d strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 8 layout = "NCHW" : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32>
  %2 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" {dl.strategy = #dl.strategy<kind = direct>} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %3 = dl.matmul %a, %b : (tensor<4x8xi32>, tensor<8x3xi32>) -> tensor<4x3xi32>
  %4 = dl.matmul %f, %g : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %5 = dl.softmax %4 axis = 1 : tensor<?x16xf32> -> tensor<?x16xf32>
  %6 = dl.add %5, %5 : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %0, %1, %2, %3, %6 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<4x3xi32>, tensor<?x16xf32>
}

// -----

// NHWC f32 convolutions: a direct (register-tiled) convolution while the
// filter stays in the target's L2 (half of it: 512 KiB on Zen 4, 256 KiB
// on Zen 3), im2col + GEMM beyond. The 3x3x8x8 filter (2304 bytes) is
// direct everywhere, the 3x3x128x64 one (294912 bytes) on Zen 4 only. The
// limit is also an option (128 KiB here; -1: never direct).
// ZEN4-LABEL: func @nhwc
// ZEN4: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 6, vectors = 4, layout = "NHWC">}
// ZEN4: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 6, vectors = 4, layout = "NHWC">}
// ZEN3-LABEL: func @nhwc
// ZEN3: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 6, vectors = 2, layout = "NHWC">}
// ZEN3: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm, rows = 6, vectors = 2, layout = "NHWC">}
// EXPLAIN: remark: dl.conv2d: #dl.strategy<kind = direct, rows = 6, vectors = 2, layout = "NHWC"> (heuristic: NHWC, f32, a filter of 2 KiB that stays in cache (at most 256 KiB, half of L2): micro-kernel of 6 x 2 vectors of 256 bits (16 vector registers) on the convolution's nest, no patch matrix)
// EXPLAIN: remark: dl.conv2d: #dl.strategy<kind = im2col_gemm, rows = 6, vectors = 2, layout = "NHWC"> (heuristic: groups = 1, f32, a filter larger than the direct convolution's limit: patches as a matrix, one GEMM with a micro-kernel of 6 x 2 vectors of 256 bits (16 vector registers))
// LIMIT-LABEL: func @nhwc
// LIMIT: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct,
// LIMIT: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm,
// NEVER-LABEL: func @nhwc
// NEVER: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm,
// NEVER: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm,
func.func @nhwc(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x8x8xf32>, %y: tensor<1x6x6x128xf32>, %v: tensor<3x3x128x64xf32>)
    -> (tensor<1x6x6x8xf32>, tensor<1x6x6x64xf32>) {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x6x6x8xf32>, tensor<3x3x8x8xf32>) -> tensor<1x6x6x8xf32>
  %1 = dl.conv2d %y, %v strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x6x6x128xf32>, tensor<3x3x128x64xf32>) -> tensor<1x6x6x64xf32>
  return %0, %1 : tensor<1x6x6x8xf32>, tensor<1x6x6x64xf32>
}

// -----

// Depthwise NHWC convolutions (one filter per channel) have no broadcast
// operand: the fewest accumulators that hide the FMA latency in rows of
// whole 64-byte lines: 4 x 2 on Zen 3 (2 FMA pipes x 4 cycles), 4 x 1 on
// Zen 4 (one 512-bit FMA per cycle x 4 cycles). A channel multiplier of 2 (16 filters over 8 channels) is not
// depthwise in that sense: the GEMM model's 4 x 3 (Zen 3) / 6 x 4 (Zen 4).
// ZEN4-LABEL: func @depthwise_nhwc
// ZEN4: dl.conv2d {{.*}} groups = 24 {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 4, vectors = 1, layout = "NHWC">}
// ZEN4: dl.conv2d {{.*}} groups = 8 {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 6, vectors = 4, layout = "NHWC">}
// ZEN3-LABEL: func @depthwise_nhwc
// ZEN3: dl.conv2d {{.*}} groups = 24 {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 4, vectors = 2, layout = "NHWC">}
// ZEN3: dl.conv2d {{.*}} groups = 8 {{.*}} {dl.strategy = #dl.strategy<kind = direct, rows = 4, vectors = 3, layout = "NHWC">}
// EXPLAIN: remark: dl.conv2d: #dl.strategy<kind = direct, rows = 4, vectors = 2, layout = "NHWC"> (heuristic: depthwise: 4 x 2 vectors of 256 bits (16 vector registers), both operands vectors along the channels (the fewest accumulators that hide the FMA latency))
// EXPLAIN: remark: dl.conv2d: #dl.strategy<kind = direct, rows = 4, vectors = 3, layout = "NHWC"> (heuristic: grouped, or depthwise in NCHW: no GEMM to share)
func.func @depthwise_nhwc(%x: tensor<2x9x9x24xf32>, %w: tensor<5x5x1x24xf32>, %y: tensor<1x6x6x8xf32>, %v: tensor<3x3x1x16xf32>)
    -> (tensor<2x9x9x24xf32>, tensor<1x6x6x16xf32>) {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [2, 2, 2, 2] dilations = [1, 1] groups = 24 layout = "NHWC" : (tensor<2x9x9x24xf32>, tensor<5x5x1x24xf32>) -> tensor<2x9x9x24xf32>
  %1 = dl.conv2d %y, %v strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 8 layout = "NHWC" : (tensor<1x6x6x8xf32>, tensor<3x3x1x16xf32>) -> tensor<1x6x6x16xf32>
  return %0, %1 : tensor<2x9x9x24xf32>, tensor<1x6x6x16xf32>
}

// -----

// f16 and bf16 convolutions keep linalg's convolution (accumulating in f32),
// unless every convolution is to be a GEMM (max-direct-filter-bytes=-1, as
// in dl-gpu-pipeline, where 16-bit GEMMs run on tensor cores).
// ZEN4-LABEL: func @half
// ZEN4: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct,
// ZEN4: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = direct,
// EXPLAIN: (heuristic: not f32: linalg's convolution accumulating in f32)
// NEVER-LABEL: func @half
// NEVER: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm,
// NEVER: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm,
func.func @half(%x: tensor<1x8x6x6xf16>, %w: tensor<8x8x3x3xf16>, %y: tensor<1x6x6x8xbf16>, %v: tensor<3x3x8x8xbf16>)
    -> (tensor<1x8x6x6xf16>, tensor<1x6x6x8xbf16>) {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<1x8x6x6xf16>, tensor<8x8x3x3xf16>) -> tensor<1x8x6x6xf16>
  %1 = dl.conv2d %y, %v strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NHWC" : (tensor<1x6x6x8xbf16>, tensor<3x3x8x8xbf16>) -> tensor<1x6x6x8xbf16>
  return %0, %1 : tensor<1x8x6x6xf16>, tensor<1x6x6x8xbf16>
}

// -----

// An image of run-time size takes the same strategies: its im2col GEMM has
// a run-time row count.
// ZEN3-LABEL: func @dynamic_image
// ZEN3: dl.conv2d {{.*}} {dl.strategy = #dl.strategy<kind = im2col_gemm, rows = 6, vectors = 2, layout = "NCHW">}
func.func @dynamic_image(%x: tensor<?x64x?x?xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<?x64x?x?xf32> {
  %0 = dl.conv2d %x, %w strides = [1, 1] padding = [1, 1, 1, 1] dilations = [1, 1] groups = 1 layout = "NCHW" : (tensor<?x64x?x?xf32>, tensor<64x64x3x3xf32>) -> tensor<?x64x?x?xf32>
  return %0 : tensor<?x64x?x?xf32>
}

// -----

// A strategy applied from dlc.tune's records carries what was measured
// (dl.tuned); dl-explain says it is a tuned record, not the heuristic, and
// dl-select-strategies keeps it.
// ZEN4-LABEL: func @tuned
// ZEN4: dl.matmul {{.*}}dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 4, vectors = 2, reduction_block = 128>, dl.tuned = "0.100 ms
// EXPLAIN: remark: dl.matmul: #dl.strategy<kind = register_tiled_gemm, rows = 4, vectors = 2, reduction_block = 128> (tuned record: 0.100 ms, heuristic 0.150 ms, 40 trials)
func.func @tuned(%a: tensor<64x256xf32>, %b: tensor<256x96xf32>) -> tensor<64x96xf32> {
  %0 = dl.matmul %a, %b {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 4, vectors = 2, reduction_block = 128>, dl.tuned = "0.100 ms, heuristic 0.150 ms, 40 trials"} : (tensor<64x256xf32>, tensor<256x96xf32>) -> tensor<64x96xf32>
  return %0 : tensor<64x96xf32>
}

// -----

// A product whose B comes in panels as wide as the plain model's tile (what
// dl-pack-weights makes: [J, K, p], p = 24 columns on AVX2) reads each panel
// contiguously and keeps that tile (4 x 3 on Zen 3); the same product with
// 32 columns reads B in rows of its own and takes the tile of whole lines.
// AVX-512's tile is the same either way (every zmm is one line).
// ZEN3-LABEL: func @panels
// ZEN3: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 4, vectors = 3>} : (tensor<1x8x64xf32>, tensor<3x64x24xf32>)
// ZEN3: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 2>} : (tensor<1x8x64xf32>, tensor<3x64x32xf32>)
// ZEN4-LABEL: func @panels
// ZEN4: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 4>}
// ZEN4: dl.matmul {{.*}} {dl.strategy = #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 4>}
// EXPLAIN: remark: dl.matmul: #dl.strategy<kind = register_tiled_gemm, rows = 4, vectors = 3> (heuristic: cache-blocked, packed micro-kernel of 4 x 3 vectors of 256 bits (16 vector registers) (B in panels of the tile's width))
// EXPLAIN: remark: dl.matmul: #dl.strategy<kind = register_tiled_gemm, rows = 6, vectors = 2> (heuristic: cache-blocked, packed micro-kernel of 6 x 2 vectors of 256 bits (16 vector registers) (rows of B in whole 64-byte lines))
func.func @panels(%x: tensor<1x8x64xf32>, %p: tensor<3x64x24xf32>, %q: tensor<3x64x32xf32>) -> (tensor<3x8x24xf32>, tensor<3x8x32xf32>) {
  %0 = dl.matmul %x, %p : (tensor<1x8x64xf32>, tensor<3x64x24xf32>) -> tensor<3x8x24xf32>
  %1 = dl.matmul %x, %q : (tensor<1x8x64xf32>, tensor<3x64x32xf32>) -> tensor<3x8x32xf32>
  return %0, %1 : tensor<3x8x24xf32>, tensor<3x8x32xf32>
}
