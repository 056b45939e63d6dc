//===- Philox.h - Philox4x32-10 counter-based random numbers --------------===//
//
// Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11). Host
// and device code (nvcc compiles it for the CUDA mask kernel too), so the CPU
// and CUDA masks draw from the same generator family.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_COMMON_PHILOX_H
#define FXMLIR_KERNELS_COMMON_PHILOX_H

#include "HostDevice.h"

#include <cstdint>

namespace fxmlir::kernels {

// The generator's constants: its rounds, the round multipliers of words 0
// and 2, and the steps of the two key words between rounds. The
// hand-vectorized draws (kernels/cpu/Philox*.cpp) use these too.
constexpr int kPhiloxRounds = 10;
constexpr uint32_t kPhiloxMultiplier0 = 0xD2511F53u;
constexpr uint32_t kPhiloxMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxKeyStep0 = 0x9E3779B9u;
constexpr uint32_t kPhiloxKeyStep1 = 0xBB67AE85u;

/// The key words of each round for key `key`.
struct PhiloxRoundKeys {
  uint32_t k0[kPhiloxRounds], k1[kPhiloxRounds];
};

FXMLIR_HOST_DEVICE PhiloxRoundKeys philoxRoundKeys(uint64_t key) {
  PhiloxRoundKeys keys;
  uint32_t k0 = static_cast<uint32_t>(key);
  uint32_t k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < kPhiloxRounds; ++round) {
    keys.k0[round] = k0;
    keys.k1[round] = k1;
    k0 += kPhiloxKeyStep0;
    k1 += kPhiloxKeyStep1;
  }
  return keys;
}

// Named words, not an array: loops over blocks then vectorize.
struct PhiloxBlock {
  uint32_t w0, w1, w2, w3;
};

/// The 4 random words for counter (counterLow, counterHigh) under key `key`,
/// counters as 64-bit halves of the 128-bit Philox counter.
FXMLIR_HOST_DEVICE PhiloxBlock philox4x32(uint64_t counterLow,
                                          uint64_t counterHigh, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(counterLow);
  uint32_t c1 = static_cast<uint32_t>(counterLow >> 32);
  uint32_t c2 = static_cast<uint32_t>(counterHigh);
  uint32_t c3 = static_cast<uint32_t>(counterHigh >> 32);
  uint32_t k0 = static_cast<uint32_t>(key);
  uint32_t k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < kPhiloxRounds; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kPhiloxMultiplier0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kPhiloxMultiplier1) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += kPhiloxKeyStep0;
    k1 += kPhiloxKeyStep1;
  }
  return {c0, c1, c2, c3};
}

/// A word w keeps its element iff (w >> 8) >= threshold, i.e. its 24-bit
/// uniform in [0, 1) is >= p: kept with probability 1 - p (p in [0, 1)).
FXMLIR_HOST_DEVICE uint32_t keepThreshold(double p) {
  double scaled = p * 16777216.0;
  auto floor = static_cast<uint32_t>(scaled);
  return floor + (static_cast<double>(floor) < scaled ? 1u : 0u);
}

/// 1 if a word keeps its element (see keepThreshold), else 0.
FXMLIR_HOST_DEVICE uint32_t keepFlag(uint32_t word, uint32_t threshold) {
  return (word >> 8) >= threshold ? 1u : 0u;
}

/// The keep flags of a block's 4 words as bits 0-3 (bit k for word k): two
/// consecutive blocks make one byte of a packed mask.
FXMLIR_HOST_DEVICE uint32_t keepBits(PhiloxBlock words, uint32_t threshold) {
  return keepFlag(words.w0, threshold) | keepFlag(words.w1, threshold) << 1 |
         keepFlag(words.w2, threshold) << 2 |
         keepFlag(words.w3, threshold) << 3;
}

/// The keep flags of a block's 4 words as 4 bools laid out in a
/// little-endian word (byte k for word k), ready for one 4-byte store.
FXMLIR_HOST_DEVICE uint32_t keepBytes(PhiloxBlock words, uint32_t threshold) {
  return keepFlag(words.w0, threshold) | keepFlag(words.w1, threshold) << 8 |
         keepFlag(words.w2, threshold) << 16 |
         keepFlag(words.w3, threshold) << 24;
}

//===----------------------------------------------------------------------===//
// The CPU's keep rule: 16 bits an element
//===----------------------------------------------------------------------===//
//
// On a CPU the Philox rounds, not the memory, bound the dropout kernels (a
// word an element: 0.83 ms for [2048, 1024] keep flags on one AMD EPYC Zen 4
// thread, where adding a bias to those floats takes 0.78), so there a block
// of 4 words keeps 8 elements: element i takes halfword i % 8 of block i / 8
// (halfword 2 k is word k's low 16 bits, 2 k + 1 its high ones) and is kept
// iff that halfword >= ceil(p * 2^16). p is rounded up to a multiple of 2^-16
// (p = 0.1 drops 6554 / 65536 = 0.100006), 1.5e-5 at most, far below what a
// training step resolves. The CUDA kernels keep the word-per-element rule
// above.

/// The least halfword that keeps its element: ceil(p * 2^16), in [0, 2^16].
FXMLIR_HOST_DEVICE uint32_t keepThreshold16(double p) {
  double scaled = p * 65536.0;
  auto floor = static_cast<uint32_t>(scaled);
  return floor + (static_cast<double>(floor) < scaled ? 1u : 0u);
}

/// The keep flags of a block's 8 halfwords as the bits of one byte (bit j
/// for halfword j): the packed mask byte of the block's 8 elements.
FXMLIR_HOST_DEVICE uint32_t keepByte16(PhiloxBlock words, uint32_t threshold) {
  const uint32_t word[4] = {words.w0, words.w1, words.w2, words.w3};
  uint32_t byte = 0;
  for (int k = 0; k < 4; ++k) {
    byte |= ((word[k] & 0xffffu) >= threshold ? 1u : 0u) << (2 * k);
    byte |= ((word[k] >> 16) >= threshold ? 1u : 0u) << (2 * k + 1);
  }
  return byte;
}

} // namespace fxmlir::kernels

#endif // FXMLIR_KERNELS_COMMON_PHILOX_H
