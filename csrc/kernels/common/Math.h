//===- Math.h - exp, erf and tanh for the element functions ---------------===//
//
// On the GPU these are CUDA's own functions. On the host, libm's expf/erff/
// tanhf are opaque calls that stop loop vectorization, so the float versions
// are branch-free polynomials (selects only) whose error (<= 6e-7 absolute) is
// far below float16/bfloat16 resolution and within float32 test tolerances.
// Double keeps libm everywhere: it is not a speed target.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_COMMON_MATH_H
#define FXMLIR_KERNELS_COMMON_MATH_H

#include "ElementTypes.h"

#include <cmath>

namespace fxmlir::kernels {

/// e^x; on the host ~1 ulp on [-87, 88], inputs outside clamped, NaN kept.
FXMLIR_HOST_DEVICE float expAcc(float x) {
#if defined(__CUDA_ARCH__)
  return expf(x);
#else
  // Adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits,
  // which gives both n = round(x / ln 2) and its bits without a cast.
  constexpr float kRound = 12582912.0f;
  float clamped = x > 88.0f ? 88.0f : (x < -87.0f ? -87.0f : x);
  float shifted = clamped * 1.44269504088896341f + kRound;
  float n = shifted - kRound;
  // Cody-Waite: ln 2 split in a short high part (exact products) and the rest.
  float r = clamped - n * 0.693359375f - n * -2.12194440e-4f;
  // Estrin's scheme: the loops are latency-bound where vectors are narrow
  // (AVX2), and this takes the polynomial from 7 dependent steps to 3.
  float r2 = r * r;
  float r4 = r2 * r2;
  float p01 = 1.0f + r;
  float p23 = 0.5f + r * (1.0f / 6);
  float p45 = 1.0f / 24 + r * (1.0f / 120);
  float p67 = 1.0f / 720 + r * (1.0f / 5040);
  float p = (p01 + r2 * p23) + r4 * (p45 + r2 * p67);
  uint32_t exponent = floatBits(shifted) - floatBits(kRound) + 127u;
  return p * bitsFloat(exponent << 23);
#endif
}

/// erf(x) given `expNegSquare` = e^(-x^2), which the GELU gradient's
/// density shares (one exponential for both: a quarter off that kernel's
/// time); on the host Abramowitz & Stegun 7.1.26 (absolute error 1.5e-7,
/// 5.4e-7 in float32 arithmetic, near 0). Its division does not bound the
/// kernels: a division-free fit, erf = 1 - e^P(|x|) with P of degree 7 or
/// 8, ran 20-30 % slower (one Xeon thread with AVX-512: more multiply-adds
/// than the division costs).
FXMLIR_HOST_DEVICE float erfGivenExp(float x, float expNegSquare) {
#if defined(__CUDA_ARCH__)
  return erff(x);
#else
  float t = 1.0f / (1.0f + 0.3275911f * std::fabs(x));
  float t2 = t * t; // Estrin's scheme, as in expAcc
  float poly = (0.254829592f - 0.284496736f * t) +
               t2 * ((1.421413741f - 1.453152027f * t) + t2 * 1.061405429f);
  float y = 1.0f - poly * t * expNegSquare;
  return x < 0.0f ? -y : y;
#endif
}

FXMLIR_HOST_DEVICE float erfAcc(float x) {
#if defined(__CUDA_ARCH__)
  return erff(x);
#else
  return erfGivenExp(x, expAcc(-x * x));
#endif
}

FXMLIR_HOST_DEVICE float tanhAcc(float x) {
#if defined(__CUDA_ARCH__)
  return tanhf(x);
#else
  float y = 1.0f - 2.0f / (expAcc(2.0f * std::fabs(x)) + 1.0f);
  return x < 0.0f ? -y : y;
#endif
}

FXMLIR_HOST_DEVICE double expAcc(double x) { return exp(x); }
FXMLIR_HOST_DEVICE double erfAcc(double x) { return erf(x); }
FXMLIR_HOST_DEVICE double erfGivenExp(double x, double) { return erf(x); }
FXMLIR_HOST_DEVICE double tanhAcc(double x) { return tanh(x); }

} // namespace fxmlir::kernels

#endif // FXMLIR_KERNELS_COMMON_MATH_H
