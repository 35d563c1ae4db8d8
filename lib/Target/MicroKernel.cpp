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
//===----------------------------------------------------------------------===//

#include "dl/Target/Target.h"

using namespace mlir;
using namespace mlir::dl;

namespace {
constexpr int64_t kMaxVectors = 4;
} // namespace

RegisterTileShape mlir::dl::chooseRegisterTile(const TargetInfo &target) {
  int64_t registers = target.getVectorRegisters();
  int64_t inFlight = target.getFMAUnits() * target.getFMALatency();
  RegisterTileShape best{1, 1};
  double bestIntensity = -1;
  for (int64_t vectors = 1; vectors <= kMaxVectors; ++vectors) {
    int64_t rows = (registers - vectors - 1) / vectors;
    if (rows < 1)
      continue;
    if (inFlight > 0 && rows * vectors < inFlight)
      continue;
    double intensity = static_cast<double>(rows * vectors) / (rows + vectors);
    if (intensity > bestIntensity + 1e-9) {
      best = {rows, vectors};
      bestIntensity = intensity;
    }
  }
  return best;
}
