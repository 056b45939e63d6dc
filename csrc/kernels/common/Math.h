//===- Math.h - exp, erf and tanh for the element functions ---------------===//
//
// On the GPU these are CUDA's own functions. On the host, libm's expf/erff/
// tanhf are opaque calls that stop loop vectorization, so the float versions
// are branch-free polynomials and rational functions (selects only) whose
// error (<= 6e-7 absolute) is far below float16/bfloat16 resolution and
// within float32 test tolerances. Double keeps libm everywhere: it is not a
// speed target.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_COMMON_MATH_H
#define FXMLIR_KERNELS_COMMON_MATH_H

#include "ElementTypes.h"

#include <cmath>

namespace fxmlir::kernels {

/// `x` held in [lo, hi], NaN kept. Both selects test `x` itself: nested
/// (the second testing the first's result), GCC 12 made branches of them,
/// which vectorize into extra compares and blends, and silu's kernel took
/// twice as long (2048 x 1024 floats, one AMD EPYC thread with AVX2, a C++
/// loop: 2.4 ms, 1.2 with this form).
FXMLIR_HOST_DEVICE float holdIn(float x, float lo, float hi) {
  float belowHi = x > hi ? hi : x;
  return x < lo ? lo : belowHi;
}

/// e^x; on the host ~1 ulp on [-87, 88], inputs outside clamped, NaN kept.
FXMLIR_HOST_DEVICE float expAcc(float x) {
#if defined(__CUDA_ARCH__)
  return expf(x);
#else
  // Adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits,
  // which gives both n = round(x / ln 2) and its bits without a cast.
  constexpr float kRound = 12582912.0f;
  float clamped = holdIn(x, -87.0f, 88.0f);
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

#include "RationalFits.inc"

/// x P(x^2) / Q(x^2), x held in [-clamp, clamp], with P's and Q's
/// coefficients lowest degree first: the form of erfAcc and tanhAcc on the
/// host. Horner's scheme: Estrin's (as in expAcc) ran no faster in the GELU
/// kernel.
template <int PTerms, int QTerms>
FXMLIR_HOST_DEVICE float oddRational(float x, float clamp,
                                     const float (&p)[PTerms],
                                     const float (&q)[QTerms]) {
  float held = holdIn(x, -clamp, clamp);
  float t = held * held;
  float numerator = p[PTerms - 1];
  for (int i = PTerms - 2; i >= 0; --i)
    numerator = numerator * t + p[i];
  float denominator = q[QTerms - 1];
  for (int i = QTerms - 2; i >= 0; --i)
    denominator = denominator * t + q[i];
  return held * numerator / denominator;
}

/// On the host a rational function (its fit and error: RationalFits.inc),
/// not erfGivenExp's exponential: 1.5x faster in the GELU kernel (2048 x
/// 1024 floats, one AMD EPYC thread with AVX2).
FXMLIR_HOST_DEVICE float erfAcc(float x) {
#if defined(__CUDA_ARCH__)
  return erff(x);
#else
  return oddRational(x, kErfClamp, kErfP, kErfQ);
#endif
}

/// On the host a rational function (its fit and error: RationalFits.inc).
FXMLIR_HOST_DEVICE float tanhAcc(float x) {
#if defined(__CUDA_ARCH__)
  return tanhf(x);
#else
  return oddRational(x, kTanhClamp, kTanhP, kTanhQ);
#endif
}

FXMLIR_HOST_DEVICE double expAcc(double x) { return exp(x); }
FXMLIR_HOST_DEVICE double erfAcc(double x) { return erf(x); }
FXMLIR_HOST_DEVICE double erfGivenExp(double x, double) { return erf(x); }
FXMLIR_HOST_DEVICE double tanhAcc(double x) { return tanh(x); }

} // namespace fxmlir::kernels

#endif // FXMLIR_KERNELS_COMMON_MATH_H
