//===- PhiloxAvx2.cpp - Philox mask draws vectorized by hand for AVX2 -----===//
//
// Philox4x32-10 (../common/Philox.h) for 8 blocks at once, one block per
// 32-bit lane; two such groups go through the rounds together, because one
// group's rounds are a chain of dependent multiplies that leaves the
// vector units idle (1.8 ms against 2.1 for one group at a time). The
// round keys are broadcast once per call, and a product's low words come
// from one 32-bit multiply (vpmulld: one instruction on Zen 3) instead of a
// shift and a blend of the widening ones: 2M keep flags, a word an element,
// in 1.33-1.36 ms against 1.48-1.92 (medians of four runs each, one AMD
// EPYC thread, a C++ loop over drawKeepBytes).
//
//===----------------------------------------------------------------------===//

#include "PhiloxX86.h"

#include "../common/Philox.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#define FXMLIR_HAS_AVX2_DRAWS 1
#include <immintrin.h>
#endif

namespace fxmlir::kernels::cpu {

#ifdef FXMLIR_HAS_AVX2_DRAWS

#define FXMLIR_AVX2 __attribute__((target("avx2")))
#define FXMLIR_AVX2_INLINE __attribute__((target("avx2"), always_inline)) inline
#define FXMLIR_AVX2_LAMBDA __attribute__((target("avx2"), always_inline))

namespace {

/// Two groups of 8 blocks in flight.
constexpr int kGroups = 2;

/// Words w0..w3 of 8 Philox blocks, block k in lane k.
struct Blocks8 {
  __m256i w0, w1, w2, w3;
};

bool cpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

/// The high and low words of the 8 products c * m (32 x 32 -> 64 bits):
/// the high words from two widening multiplies (even lanes, odd lanes), the
/// low ones from one 32-bit multiply.
FXMLIR_AVX2_INLINE void multiplyWide(__m256i c, __m256i m, __m256i &high,
                                     __m256i &low) {
  __m256i even = _mm256_mul_epu32(c, m);
  __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(c, 32), m);
  high = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xaa);
  low = _mm256_mullo_epi32(c, m);
}

/// Counters firstBlock + k (k = 0..7) as Philox's first two words; the
/// upper two are 0, as in philox4x32(block, 0, key).
FXMLIR_AVX2_INLINE Blocks8 counters(uint64_t firstBlock) {
  __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  __m256i base = _mm256_set1_epi32(static_cast<int>(firstBlock));
  __m256i low = _mm256_add_epi32(base, lanes);
  // A lane whose low word wrapped carries one into its high word: unsigned
  // low < base, compared as signed after flipping the sign bits.
  __m256i flip = _mm256_set1_epi32(INT32_MIN);
  __m256i wrapped = _mm256_cmpgt_epi32(_mm256_xor_si256(base, flip),
                                       _mm256_xor_si256(low, flip));
  __m256i high = _mm256_sub_epi32(
      _mm256_set1_epi32(static_cast<int>(firstBlock >> 32)), wrapped);
  return {low, high, _mm256_setzero_si256(), _mm256_setzero_si256()};
}

/// Philox's round keys (philoxRoundKeys), each word broadcast.
struct RoundKeys {
  __m256i k0[kPhiloxRounds], k1[kPhiloxRounds];
};

FXMLIR_AVX2_INLINE RoundKeys roundKeys(uint64_t key) {
  PhiloxRoundKeys words = philoxRoundKeys(key);
  RoundKeys keys;
  for (int round = 0; round < kPhiloxRounds; ++round) {
    keys.k0[round] = _mm256_set1_epi32(static_cast<int>(words.k0[round]));
    keys.k1[round] = _mm256_set1_epi32(static_cast<int>(words.k1[round]));
  }
  return keys;
}

FXMLIR_AVX2_INLINE void philoxRounds(Blocks8 (&groups)[kGroups],
                                     const RoundKeys &keys) {
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(kPhiloxMultiplier0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(kPhiloxMultiplier1));
  for (int round = 0; round < kPhiloxRounds; ++round) {
    for (Blocks8 &b : groups) {
      __m256i high0, low0, high1, low1;
      multiplyWide(b.w0, m0, high0, low0);
      multiplyWide(b.w2, m1, high1, low1);
      b.w0 = _mm256_xor_si256(_mm256_xor_si256(high1, b.w1), keys.k0[round]);
      b.w2 = _mm256_xor_si256(_mm256_xor_si256(high0, b.w3), keys.k1[round]);
      b.w1 = low1;
      b.w3 = low0;
    }
  }
}

/// Per lane (block), its keepByte16 (Philox.h) in the lane's low byte: the
/// keep flags of its 8 halfwords as bits. `belowThreshold` holds threshold
/// - 1: the halfwords are below 2^16, so a signed compare is exact,
/// threshold 0 too.
FXMLIR_AVX2_INLINE __m256i keepBytes8(const Blocks8 &w,
                                      __m256i belowThreshold) {
  const __m256i lowHalf = _mm256_set1_epi32(0xffff);
  const __m256i words[4] = {w.w0, w.w1, w.w2, w.w3};
  __m256i bytes = _mm256_setzero_si256();
  for (int k = 0; k < 4; ++k) {
    __m256i low = _mm256_cmpgt_epi32(_mm256_and_si256(words[k], lowHalf),
                                     belowThreshold);
    __m256i high =
        _mm256_cmpgt_epi32(_mm256_srli_epi32(words[k], 16), belowThreshold);
    bytes = _mm256_or_si256(
        bytes, _mm256_or_si256(
                   _mm256_and_si256(low, _mm256_set1_epi32(1 << (2 * k))),
                   _mm256_and_si256(high, _mm256_set1_epi32(2 << (2 * k)))));
  }
  return bytes;
}

/// The low bytes of the 8 lanes, lane k's in byte k.
FXMLIR_AVX2_INLINE uint64_t lowBytes(__m256i lanes) {
  // Each 128-bit half's 4 low bytes to its first 4 bytes, then the halves'
  // first words side by side.
  const __m256i gather = _mm256_setr_epi8(
      0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, //
      0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  __m256i packed = _mm256_shuffle_epi8(lanes, gather);
  return static_cast<uint32_t>(_mm256_extract_epi32(packed, 0)) |
         static_cast<uint64_t>(
             static_cast<uint32_t>(_mm256_extract_epi32(packed, 4)))
             << 32;
}

/// The 64 flags of 8 mask bytes (bit j of byte b: flag 8 b + j), each 0 or
/// 1, at flags.
FXMLIR_AVX2_INLINE void storeFlags(uint64_t bytes, uint8_t *flags) {
  // Byte b copied into flags 8 b .. 8 b + 7, each tested against its bit.
  const __m256i bit = _mm256_set1_epi64x(0x8040201008040201ll);
  const __m256i one = _mm256_set1_epi8(1);
  __m256i all = _mm256_set1_epi64x(static_cast<int64_t>(bytes));
  for (int part = 0; part < 2; ++part) {
    // Bytes 4 part .. 4 part + 3, two to each 128-bit half.
    char b = static_cast<char>(4 * part);
    __m256i spread = _mm256_shuffle_epi8(
        all, _mm256_setr_epi8(b, b, b, b, b, b, b, b, b + 1, b + 1, b + 1,
                              b + 1, b + 1, b + 1, b + 1, b + 1, b + 2, b + 2,
                              b + 2, b + 2, b + 2, b + 2, b + 2, b + 2, b + 3,
                              b + 3, b + 3, b + 3, b + 3, b + 3, b + 3, b + 3));
    __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(flags + 32 * part),
                        _mm256_and_si256(set, one));
  }
}

} // namespace

FXMLIR_AVX2 int64_t drawKeepBytesAvx2(uint8_t *bits, uint8_t *flags,
                                      int64_t firstByte, int64_t bytes,
                                      uint32_t threshold, uint64_t seed) {
  if (!cpuHasAvx2())
    return 0;
  const __m256i below = _mm256_set1_epi32(static_cast<int>(threshold) - 1);
  const RoundKeys keys = roundKeys(seed);
  constexpr int64_t kBlocksPerGroup = 8;
  // Byte b of the mask is block b.
  int64_t b = 0;
  for (; b + kGroups * kBlocksPerGroup <= bytes;
       b += kGroups * kBlocksPerGroup) {
    Blocks8 groups[kGroups];
    for (int g = 0; g < kGroups; ++g)
      groups[g] = counters(
          static_cast<uint64_t>(firstByte + b + g * kBlocksPerGroup));
    philoxRounds(groups, keys);
    for (int g = 0; g < kGroups; ++g) {
      int64_t at = b + g * kBlocksPerGroup;
      uint64_t packed = lowBytes(keepBytes8(groups[g], below));
      std::memcpy(bits + at, &packed, sizeof(packed));
      storeFlags(packed, flags + 8 * at);
    }
  }
  return b;
}

#else

int64_t drawKeepBytesAvx2(uint8_t *, uint8_t *, int64_t, int64_t, uint32_t,
                          uint64_t) {
  return 0;
}

#endif

} // namespace fxmlir::kernels::cpu
