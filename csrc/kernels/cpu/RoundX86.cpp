//===- RoundX86.cpp - 16-bit rounding with x86 conversion instructions ---===//

#include "RoundX86.h"

#include <cstdlib>

#if defined(__x86_64__) && defined(__GNUC__)
#define FXMLIR_HAS_X86_ROUNDING 1
#include <immintrin.h>
#endif

namespace fxmlir::kernels::cpu {

#ifdef FXMLIR_HAS_X86_ROUNDING

#define FXMLIR_AVX512_BF16                                                     \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

bool hasAvx512BFloat16() {
  static const bool has = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") &&
                          __builtin_cpu_supports("avx512bf16");
  return has;
}

namespace {

/// Lanes of `values` that hold subnormal floats (zero exponent, nonzero
/// mantissa), which the conversion would flush to zero.
FXMLIR_AVX512_BF16 inline __mmask16 subnormalLanes(__m512 values) {
  __m512i bits = _mm512_castps_si512(values);
  __mmask16 zeroExponent =
      _mm512_testn_epi32_mask(bits, _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_test_epi32_mask(zeroExponent, bits,
                                     _mm512_set1_epi32(0x007fffff));
}

void roundEach(const float *from, BFloat16 *to, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    to[k] = fromAcc<BFloat16>(from[k]);
}

} // namespace

FXMLIR_AVX512_BF16 void roundToBFloat16Avx512(const float *from, BFloat16 *to,
                                              int64_t n) {
  int64_t k = 0;
  for (; k + 32 <= n; k += 32) {
    __m512 low = _mm512_loadu_ps(from + k);
    __m512 high = _mm512_loadu_ps(from + k + 16);
    if (subnormalLanes(low) | subnormalLanes(high)) {
      roundEach(from + k, to + k, 32);
      continue;
    }
    _mm512_storeu_si512(to + k, (__m512i)_mm512_cvtne2ps_pbh(high, low));
  }
  for (; k < n; k += 16) {
    __mmask16 lanes = n - k >= 16 ? 0xffff : (1u << (n - k)) - 1;
    __m512 values = _mm512_maskz_loadu_ps(lanes, from + k);
    if (subnormalLanes(values)) {
      roundEach(from + k, to + k, n - k < 16 ? n - k : 16);
      continue;
    }
    _mm256_mask_storeu_epi16(to + k, lanes,
                             (__m256i)_mm512_cvtneps_pbh(values));
  }
}

#define FXMLIR_AVX2 __attribute__((target("avx2")))

bool hasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

namespace {

/// fromAcc<BFloat16> of 8 floats, in the low 16 bits of each 32-bit lane.
FXMLIR_AVX2 inline __m256i roundedHalves(__m256 values) {
  __m256i bits = _mm256_castps_si256(values);
  __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16),
                                 _mm256_set1_epi32(1));
  __m256i rounded = _mm256_add_epi32(
      bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)));
  __m256i quieted = _mm256_or_si256(bits, _mm256_set1_epi32(0x400000));
  __m256 nan = _mm256_cmp_ps(values, values, _CMP_UNORD_Q);
  __m256i result = _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(rounded),
                       _mm256_castsi256_ps(quieted), nan));
  return _mm256_srli_epi32(result, 16);
}

} // namespace

FXMLIR_AVX2 void roundToBFloat16Avx2(const float *from, BFloat16 *to,
                                     int64_t n) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    __m256i low = roundedHalves(_mm256_loadu_ps(from + k));
    __m256i high = roundedHalves(_mm256_loadu_ps(from + k + 8));
    // The pack interleaves the 128-bit halves: [l0 h0 l1 h1] -> [l0 l1 h0 h1].
    __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(low, high),
                                              0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(to + k), packed);
  }
  for (; k < n; ++k)
    to[k] = fromAcc<BFloat16>(from[k]);
}

#define FXMLIR_F16C __attribute__((target("avx,f16c")))

bool hasF16c() {
  static const bool has =
      __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return has;
}

FXMLIR_F16C void roundToHalfF16c(const float *from, Half *to, int64_t n) {
  int64_t k = 0;
  for (; k + 16 <= n; k += 16) {
    __m128i low = _mm256_cvtps_ph(_mm256_loadu_ps(from + k), _MM_FROUND_TO_NEAREST_INT);
    __m128i high = _mm256_cvtps_ph(_mm256_loadu_ps(from + k + 8), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(to + k), low);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(to + k + 8), high);
  }
  for (; k + 4 <= n; k += 4)
    _mm_storel_epi64(reinterpret_cast<__m128i *>(to + k),
                     _mm_cvtps_ph(_mm_loadu_ps(from + k), _MM_FROUND_TO_NEAREST_INT));
  for (; k < n; ++k)
    to[k] = fromAcc<Half>(from[k]);
}

#else

bool hasAvx512BFloat16() { return false; }
bool hasAvx2() { return false; }
bool hasF16c() { return false; }

// Callers check hasAvx512BFloat16(), hasAvx2() and hasF16c().
void roundToBFloat16Avx512(const float *, BFloat16 *, int64_t) {
  std::abort();
}
void roundToBFloat16Avx2(const float *, BFloat16 *, int64_t) { std::abort(); }
void roundToHalfF16c(const float *, Half *, int64_t) { std::abort(); }

#endif

} // namespace fxmlir::kernels::cpu
