//===- PhiloxAvx2.cpp - Philox mask draws vectorized by hand for AVX2 -----===//
//
// Philox4x32-10 (../common/Philox.h) for 8 blocks at once, one block per
// 32-bit lane; two such groups go through the rounds together, because one
// group's rounds are a chain of dependent multiplies that leaves the
// vector units idle (1.8 ms against 2.1 for one group at a time). The
// round keys are broadcast once per call, and a product's low words come
// from one 32-bit multiply (vpmulld: one instruction on Zen 3) instead of a
// shift and a blend of the widening ones: 2M keep flags in 1.33-1.36 ms
// against 1.48-1.92 (medians of four runs each, one AMD EPYC thread, a C++
// loop over drawKeepBytes).
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

/// All ones in each lane whose word keeps its element ((w >> 8) >=
/// threshold, as keepFlag), else 0; `belowThreshold` holds threshold - 1
/// (the shifted words are below 2^24, so a signed compare is exact,
/// threshold 0 too).
FXMLIR_AVX2_INLINE __m256i keeps(__m256i word, __m256i belowThreshold) {
  return _mm256_cmpgt_epi32(_mm256_srli_epi32(word, 8), belowThreshold);
}

/// Per lane (block), its 4 keep flags as a 0-or-1 byte each, word k's in
/// byte k (as keepBytes): the block's 4 elements' bools.
FXMLIR_AVX2_INLINE __m256i keepBytes8(const Blocks8 &w, __m256i below) {
  auto flag = [&](__m256i word, int value) FXMLIR_AVX2_LAMBDA {
    return _mm256_and_si256(keeps(word, below), _mm256_set1_epi32(value));
  };
  return _mm256_or_si256(_mm256_or_si256(flag(w.w0, 1), flag(w.w1, 1 << 8)),
                         _mm256_or_si256(flag(w.w2, 1 << 16), flag(w.w3, 1 << 24)));
}

/// Draws blocks [firstBlock, firstBlock + n) for the largest n <= blocks
/// that whole iterations cover, and hands each group of 8 blocks' 32 bools
/// (keepBytes8) to store(offset of its first block from firstBlock, bools);
/// returns n.
template <typename Store>
FXMLIR_AVX2_INLINE int64_t drawBlocks(int64_t firstBlock, int64_t blocks,
                                      uint32_t threshold, uint64_t seed,
                                      Store store) {
  const __m256i below = _mm256_set1_epi32(static_cast<int>(threshold) - 1);
  const RoundKeys keys = roundKeys(seed);
  constexpr int64_t kBlocksPerGroup = 8;
  int64_t b = 0;
  for (; b + kGroups * kBlocksPerGroup <= blocks; b += kGroups * kBlocksPerGroup) {
    Blocks8 groups[kGroups];
    for (int g = 0; g < kGroups; ++g)
      groups[g] = counters(static_cast<uint64_t>(firstBlock + b + g * kBlocksPerGroup));
    philoxRounds(groups, keys);
    for (int g = 0; g < kGroups; ++g)
      store(b + g * kBlocksPerGroup, keepBytes8(groups[g], below));
  }
  return b;
}

} // namespace

FXMLIR_AVX2 int64_t drawKeepBytesAvx2(uint8_t *bits, uint8_t *flags,
                                      int64_t firstByte, int64_t bytes,
                                      uint32_t threshold, uint64_t seed) {
  if (!cpuHasAvx2())
    return 0;
  // Byte b of the mask is blocks 2 b and 2 b + 1: elements 8 b to 8 b + 7.
  int64_t blocks = drawBlocks(
      2 * firstByte, 2 * bytes, threshold, seed,
      [&](int64_t block, __m256i bools) FXMLIR_AVX2_LAMBDA {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(flags + 4 * block),
                            bools);
        // Each flag's bit 0 to its byte's top bit: the 32 flags as 32 bits,
        // bit i element i's, which are 4 bytes of the packed mask.
        auto packed = static_cast<uint32_t>(
            _mm256_movemask_epi8(_mm256_slli_epi16(bools, 7)));
        std::memcpy(bits + block / 2, &packed, sizeof(packed));
      });
  return blocks / 2;
}

FXMLIR_AVX2 int64_t randomMaskBlocksAvx2(bool *mask, int64_t firstBlock,
                                         int64_t blocks, uint32_t threshold,
                                         uint64_t seed) {
  if (!cpuHasAvx2())
    return 0;
  return drawBlocks(firstBlock, blocks, threshold, seed,
                    [&](int64_t block, __m256i bools) FXMLIR_AVX2_LAMBDA {
    _mm256_storeu_si256(
        reinterpret_cast<__m256i *>(mask + 4 * (firstBlock + block)), bools);
  });
}

#else

int64_t drawKeepBytesAvx2(uint8_t *, uint8_t *, int64_t, int64_t, uint32_t,
                          uint64_t) {
  return 0;
}
int64_t randomMaskBlocksAvx2(bool *, int64_t, int64_t, uint32_t, uint64_t) {
  return 0;
}

#endif

} // namespace fxmlir::kernels::cpu
