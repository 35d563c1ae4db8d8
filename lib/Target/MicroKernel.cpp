//===- MicroKernel.cpp - the register tile a target affords ---------------===//
//
// The micro-kernel of dl-affine-register-tile computes a tile of
// rows x (vectors * lanes) outputs of C += A * B in vector registers: each
// step of the reduction loads `vectors` vectors of B, broadcasts `rows`
// elements of A and issues rows * vectors FMAs into as many accumulators.
// The model (BLIS's analytical one, Low et al., "Analytical Modeling Is
// Enough for High-Performance BLIS", TOMS 2016) picks the tile:
//
//  1. Registers: the accumulators, the vectors of B and one broadcast
//     element of A fit in the register file, rows * vectors + vectors + 1
//     <= registers, so nothing spills in the inner loop.
//  2. Latency: at least fma_units * fma_latency independent accumulators,
//     so that an FMA pipe never waits for the previous FMA into the same
//     accumulator (where the target knows both).
//  3. Among the tiles that satisfy both, the one that loads least per FMA:
//     the most rows * vectors / (rows + vectors); ties go to fewer vectors
//     (a narrower tile fits more matrices' widths).
//
// Vectors per row are capped at 4: wider tiles leave most GEMMs of real
// networks (64 to 512 columns, 16 lanes) with a large remainder.
// For 32 registers (AVX-512, NEON) this gives 6 x 4; for 16 (AVX2) 4 x 3.
//
// Whole cache lines, where B is read in rows of its own layout (a direct
// convolution's HWIO filter, an unpacked B, the runtime packing buffer of
// a cache block, all N or a block's width apart) rather than in panels of
// the tile's width (dl-pack-weights): each reduction step then reads one
// segment of tile-width bytes from a row of B, and a segment that is not a
// whole number of cache lines (4 x 3 on AVX2: 96 bytes, one and a half
// lines) drags the rest of its lines through L1 with it -- the model above
// counts loads, not lines. Only tiles of whole lines are then considered:
// 6 x 2 on AVX2 (64 bytes), unchanged for AVX-512 (every zmm is a line).
// Measured on a Zen 3 (znver3, 2 threads), 4 x 3 against 6 x 2, ms: direct
// 1x1 convolutions 3136x256x64 1.27 vs 0.88, 784x128x512 1.05 vs 0.77;
// ResNet-50's 784x128x1152 im2col GEMM 2.32 vs 2.04; unpacked products
// 1500x2048x512 38.1 vs 28.9, 784x1152x128 2.12 vs 1.73; while on panels
// of 24 columns packed for 4 x 3, 4 x 3 stays ahead (49x4608x512 1.73 vs
// 2.23 for 6 x 2 on the same panels).
//
// A depthwise convolution (one filter per channel) has no broadcast
// operand: each step of its reduction (one filter tap) loads a vector of
// the filter and one of the input per output vector, so more rows save no
// loads but the filter's, and LLVM, unrolling the window's columns (3-7
// taps) and reusing the input vectors two taps share, keeps those alive
// beside the accumulators: 4 x 3 spilled. The tile is the fewest
// accumulators that hide the FMA latency (fma_units x fma_latency) in rows
// of whole cache lines: 4 x 2 on Zen 3 (AVX2), 4 x 1 on Zen 4 (one 512-bit
// FMA per cycle; not measured there). Zen 3, 2 threads, the convolution's
// region alone (NHWC, bias + ReLU), 4 x 2 against the GEMM model's 4 x 3,
// ms at batch 1: 7x7 over 96 x 56 x 56 0.44 vs 0.73, 192 x 28 x 28 0.18 vs
// 0.29, 768 x 7 x 7 0.084 vs 0.106; 5x5 over 240 x 28 x 28 0.098 vs 0.120,
// 672 x 14 x 14 0.094 vs 0.115; 3x3 over 144 x 56 x 56 0.10 vs 0.15; at
// batch 8, 3x3 over 480 x 14 x 14 0.21 vs 0.31, 5x5 over 672 x 14 x 14 1.70
// vs 2.68. 6 x 1 and 3 x 2 were within noise of 4 x 2 on most shapes.
//
//===----------------------------------------------------------------------===//

#include "dl/Target/Target.h"

#include <optional>

using namespace mlir;
using namespace mlir::dl;

namespace {
constexpr int64_t kMaxVectors = 4;
} // namespace

RegisterTileShape mlir::dl::chooseRegisterTile(const TargetInfo &target,
                                               bool wholeLines) {
  int64_t registers = target.getVectorRegisters();
  int64_t inFlight = target.getFMAUnits() * target.getFMALatency();
  int64_t vectorBytes = target.getVectorBits() / 8;
  int64_t line = target.getCacheLineBytes();
  auto spansWholeLines = [&](int64_t vectors) {
    return line <= 0 || vectorBytes <= 0 || (vectors * vectorBytes) % line == 0;
  };
  auto search = [&](bool restricted) -> std::optional<RegisterTileShape> {
    std::optional<RegisterTileShape> best;
    double bestIntensity = -1;
    for (int64_t vectors = 1; vectors <= kMaxVectors; ++vectors) {
      if (restricted && !spansWholeLines(vectors))
        continue;
      int64_t rows = (registers - vectors - 1) / vectors;
      if (rows < 1)
        continue;
      if (inFlight > 0 && rows * vectors < inFlight)
        continue;
      double intensity = static_cast<double>(rows * vectors) / (rows + vectors);
      if (intensity > bestIntensity + 1e-9) {
        best = RegisterTileShape{rows, vectors};
        bestIntensity = intensity;
      }
    }
    return best;
  };
  // Whole lines only where some tile of whole lines qualifies.
  if (wholeLines)
    if (std::optional<RegisterTileShape> tile = search(/*restricted=*/true))
      return *tile;
  return search(/*restricted=*/false).value_or(RegisterTileShape{1, 1});
}

RegisterTileShape mlir::dl::chooseDepthwiseTile(const TargetInfo &target) {
  int64_t registers = target.getVectorRegisters();
  int64_t inFlight = target.getFMAUnits() * target.getFMALatency();
  int64_t vectorBytes = target.getVectorBits() / 8;
  int64_t line = target.getCacheLineBytes();
  int64_t vectors = 1;
  if (line > vectorBytes && vectorBytes > 0 && line % vectorBytes == 0)
    vectors = std::min<int64_t>(kMaxVectors, line / vectorBytes);
  int64_t rows = inFlight > 0 ? (inFlight + vectors - 1) / vectors : 4;
  // The accumulators and a row of filter vectors must fit beside the
  // input vectors the window shares (at least one row of them).
  while (rows > 1 && rows * vectors + 2 * vectors > registers)
    --rows;
  while (vectors > 1 && rows * vectors + 2 * vectors > registers)
    --vectors;
  return RegisterTileShape{rows, vectors};
}
