//===- BFloat16.cpp - the bf16 conversions compiled code calls -------------===//
//
// LLVM lowers `fptrunc` to bf16 on CPUs without a native instruction (AVX2
// machines: Zen 3) to calls of `__truncsfbf2` and `__truncdfbf2`. libgcc has
// no such functions here; MLIR defines them in libmlir_float16_utils, which
// links libLLVM.so, and no library that links LLVM may be loaded with global
// visibility (see Copy.cpp: `import triton` crashed). So dlc's runtime
// defines them: round to nearest, ties to even, NaN kept quiet with its
// sign; from double through float rounded to odd, so that the two roundings
// give the correctly rounded result (MLIR's rounds twice to nearest).
//
//===----------------------------------------------------------------------===//

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

#if defined(__x86_64__)
// The x86-64 psABI passes __bf16 in an SSE register, as float: the result's
// 16 bits go in the low half of a float's.
using BF16Return = float;
#else
using BF16Return = uint16_t;
#endif

uint16_t bfloat16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x0040); // quiet, sign kept
  uint32_t lsb = (bits >> 16) & 1;
  bits += 0x7fff + lsb; // to nearest, ties to even
  return static_cast<uint16_t>(bits >> 16);
}

BF16Return returned(uint16_t bits) {
  BF16Return result = 0;
  std::memcpy(&result, &bits, sizeof(bits));
  return result;
}

} // namespace

extern "C" BF16Return __truncsfbf2(float value) {
  return returned(bfloat16Bits(value));
}

extern "C" BF16Return __truncdfbf2(double value) {
  float rounded = static_cast<float>(value);
  if (!std::isnan(value) && static_cast<double>(rounded) != value &&
      std::isfinite(rounded)) {
    // Round to odd: truncate toward zero, then set the last bit.
    uint32_t bits;
    std::memcpy(&bits, &rounded, sizeof(bits));
    if (std::fabs(static_cast<double>(rounded)) > std::fabs(value))
      bits -= 1;
    bits |= 1;
    std::memcpy(&rounded, &bits, sizeof(bits));
  }
  return returned(bfloat16Bits(rounded));
}
