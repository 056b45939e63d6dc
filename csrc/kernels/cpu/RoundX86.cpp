//===- RoundBFloat16Avx512.cpp - bfloat16 rounding with AVX-512 BF16 ------===//

#include "RoundBFloat16.h"

#include <cstdlib>

#if defined(__x86_64__) && defined(__GNUC__)
#define FXMLIR_HAS_AVX512_BF16_ROUNDING 1
#include <immintrin.h>
#endif

namespace fxmlir::kernels::cpu {

#ifdef FXMLIR_HAS_AVX512_BF16_ROUNDING

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

#else

bool hasAvx512BFloat16() { return false; }

void roundToBFloat16Avx512(const float *, BFloat16 *, int64_t) {
  std::abort(); // callers check hasAvx512BFloat16()
}

#endif

} // namespace fxmlir::kernels::cpu
