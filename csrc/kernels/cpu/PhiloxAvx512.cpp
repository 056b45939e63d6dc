//===- PhiloxAvx512.cpp - Philox mask draws vectorized by hand for AVX-512 ===//
//
// PhiloxAvx2.cpp's scheme at twice the width: Philox4x32-10 for 16 blocks
// at once, one block per 32-bit lane, two such groups through the rounds
// together. AVX-512 adds what AVX2 spelled in several instructions: each
// round's three-way xor is one ternary-logic op, a keep test yields a mask
// register, the 16 lanes' mask bytes narrow in one instruction, and 64
// packed bits become 64 flags in one masked move.
// Its speed against the others: PhiloxX86.h. Three or four groups in
// flight were 3-4 % faster on Zen 4, within the noise of a dropout kernel.
//
//===----------------------------------------------------------------------===//

#include "PhiloxX86.h"

#include "../common/Philox.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#define FXMLIR_HAS_AVX512_DRAWS 1
#include <immintrin.h>
#endif

namespace fxmlir::kernels::cpu {

#ifdef FXMLIR_HAS_AVX512_DRAWS

#define FXMLIR_AVX512 __attribute__((target("avx512f,avx512bw")))
#define FXMLIR_AVX512_INLINE                                                   \
  __attribute__((target("avx512f,avx512bw"), always_inline)) inline
#define FXMLIR_AVX512_LAMBDA                                                   \
  __attribute__((target("avx512f,avx512bw"), always_inline))

namespace {

/// Two groups of 16 blocks in flight: one group's rounds are a chain of
/// dependent multiplies.
constexpr int kGroups = 2;
constexpr int64_t kBlocksPerGroup = 16;

/// Words w0..w3 of 16 Philox blocks, block k in lane k.
struct Blocks16 {
  __m512i w0, w1, w2, w3;
};

bool cpuHasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f") &&
                            __builtin_cpu_supports("avx512bw");
  return has;
}

/// The high and low words of the 16 products c * m (32 x 32 -> 64 bits):
/// the high words from two widening multiplies (even lanes, odd lanes), the
/// low ones from one 32-bit multiply.
FXMLIR_AVX512_INLINE void multiplyWide(__m512i c, __m512i m, __m512i &high,
                                       __m512i &low) {
  __m512i even = _mm512_mul_epu32(c, m);
  __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(c, 32), m);
  high = _mm512_mask_mov_epi32(_mm512_srli_epi64(even, 32), 0xaaaa, odd);
  low = _mm512_mullo_epi32(c, m);
}

/// Counters firstBlock + k (k = 0..15) as Philox's first two words; the
/// upper two are 0, as in philox4x32(block, 0, key).
FXMLIR_AVX512_INLINE Blocks16 counters(uint64_t firstBlock) {
  __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                                    13, 14, 15);
  __m512i base = _mm512_set1_epi32(static_cast<int>(firstBlock));
  __m512i low = _mm512_add_epi32(base, lanes);
  // A lane whose low word wrapped carries one into its high word.
  __mmask16 wrapped = _mm512_cmplt_epu32_mask(low, base);
  __m512i high = _mm512_set1_epi32(static_cast<int>(firstBlock >> 32));
  high = _mm512_mask_add_epi32(high, wrapped, high, _mm512_set1_epi32(1));
  return {low, high, _mm512_setzero_si512(), _mm512_setzero_si512()};
}

/// Philox's round keys (philoxRoundKeys), each word broadcast.
struct RoundKeys {
  __m512i k0[kPhiloxRounds], k1[kPhiloxRounds];
};

FXMLIR_AVX512_INLINE RoundKeys roundKeys(uint64_t key) {
  PhiloxRoundKeys words = philoxRoundKeys(key);
  RoundKeys keys;
  for (int round = 0; round < kPhiloxRounds; ++round) {
    keys.k0[round] = _mm512_set1_epi32(static_cast<int>(words.k0[round]));
    keys.k1[round] = _mm512_set1_epi32(static_cast<int>(words.k1[round]));
  }
  return keys;
}

/// a ^ b ^ c in one instruction (truth table 0x96).
FXMLIR_AVX512_INLINE __m512i xor3(__m512i a, __m512i b, __m512i c) {
  return _mm512_ternarylogic_epi32(a, b, c, 0x96);
}

FXMLIR_AVX512_INLINE void philoxRounds(Blocks16 (&groups)[kGroups],
                                       const RoundKeys &keys) {
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(kPhiloxMultiplier0));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(kPhiloxMultiplier1));
  for (int round = 0; round < kPhiloxRounds; ++round) {
    for (Blocks16 &b : groups) {
      __m512i high0, low0, high1, low1;
      multiplyWide(b.w0, m0, high0, low0);
      multiplyWide(b.w2, m1, high1, low1);
      b.w0 = xor3(high1, b.w1, keys.k0[round]);
      b.w2 = xor3(high0, b.w3, keys.k1[round]);
      b.w1 = low1;
      b.w3 = low0;
    }
  }
}

/// Per lane (block), its keepByte16 (Philox.h): the keep flags of its 8
/// halfwords as the bits of a byte; the 16 bytes in block order.
FXMLIR_AVX512_INLINE __m128i keepBytes16(const Blocks16 &w,
                                         __m512i threshold) {
  const __m512i lowHalf = _mm512_set1_epi32(0xffff);
  const __m512i words[4] = {w.w0, w.w1, w.w2, w.w3};
  __m512i bytes = _mm512_setzero_si512();
  for (int k = 0; k < 4; ++k) {
    __mmask16 low = _mm512_cmpge_epu32_mask(
        _mm512_and_si512(words[k], lowHalf), threshold);
    __mmask16 high =
        _mm512_cmpge_epu32_mask(_mm512_srli_epi32(words[k], 16), threshold);
    bytes = _mm512_mask_or_epi32(bytes, low, bytes,
                                 _mm512_set1_epi32(1 << (2 * k)));
    bytes = _mm512_mask_or_epi32(bytes, high, bytes,
                                 _mm512_set1_epi32(2 << (2 * k)));
  }
  return _mm512_cvtepi32_epi8(bytes);
}

} // namespace

FXMLIR_AVX512 int64_t drawKeepBytesAvx512(uint8_t *bits, uint8_t *flags,
                                          int64_t firstByte, int64_t bytes,
                                          uint32_t threshold, uint64_t seed) {
  if (!cpuHasAvx512())
    return 0;
  const __m512i thresholds = _mm512_set1_epi32(static_cast<int>(threshold));
  const __m512i ones = _mm512_set1_epi8(1);
  const RoundKeys keys = roundKeys(seed);
  // Byte b of the mask is block b.
  int64_t b = 0;
  for (; b + kGroups * kBlocksPerGroup <= bytes;
       b += kGroups * kBlocksPerGroup) {
    Blocks16 groups[kGroups];
    for (int g = 0; g < kGroups; ++g)
      groups[g] = counters(
          static_cast<uint64_t>(firstByte + b + g * kBlocksPerGroup));
    philoxRounds(groups, keys);
    for (int g = 0; g < kGroups; ++g) {
      int64_t at = b + g * kBlocksPerGroup;
      __m128i packed = keepBytes16(groups[g], thresholds);
      _mm_storeu_si128(reinterpret_cast<__m128i *>(bits + at), packed);
      // Each 8 bytes of the mask, 64 bits with bit i element i's, as 64
      // flags.
      uint64_t halves[2];
      _mm_storeu_si128(reinterpret_cast<__m128i *>(halves), packed);
      for (int h = 0; h < 2; ++h)
        _mm512_storeu_si512(flags + 8 * at + 64 * h,
                            _mm512_maskz_mov_epi8(halves[h], ones));
    }
  }
  return b;
}

#else

int64_t drawKeepBytesAvx512(uint8_t *, uint8_t *, int64_t, int64_t, uint32_t,
                            uint64_t) {
  return 0;
}

#endif

} // namespace fxmlir::kernels::cpu
