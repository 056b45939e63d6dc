//===- GeluMath.h - Vectorizable GELU math for the CPU kernels ------------===//
//
// libm's expf/erff/tanhf are opaque calls that stop loop vectorization, so the
// float versions here are branch-free polynomials (selects only). Their error
// (~2e-7 absolute) is far below float16/bfloat16 resolution and within float32
// test tolerances. Double keeps libm: it is not a speed target.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_GELUMATH_H
#define FXMLIR_KERNELS_CPU_GELUMATH_H

#include "ElementTypes.h"

#include <cmath>

namespace fxmlir::kernels::cpu {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kTanhCubic = 0.044715;

/// e^x with ~1 ulp error on [-87, 88]; inputs outside are clamped, NaN
/// propagates.
inline float expAcc(float x) {
  // Adding 1.5 * 2^23 rounds to an integer held in the low mantissa bits, which
  // gives both n = round(x / ln 2) and its bits without a float->int cast.
  constexpr float kRound = 12582912.0f;
  float clamped = x > 88.0f ? 88.0f : (x < -87.0f ? -87.0f : x);
  float shifted = clamped * 1.44269504088896341f + kRound;
  float n = shifted - kRound;
  // Cody-Waite: ln 2 split in a short high part (exact products) and the rest.
  float r = clamped - n * 0.693359375f - n * -2.12194440e-4f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  uint32_t exponent = floatBits(shifted) - floatBits(kRound) + 127u;
  return p * bitsFloat(exponent << 23);
}

/// erf via Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7).
inline float erfAcc(float x) {
  float a = std::fabs(x);
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float poly = 1.061405429f;
  poly = poly * t - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  float y = 1.0f - poly * t * expAcc(-a * a);
  return x < 0.0f ? -y : y;
}

inline float tanhAcc(float x) {
  float y = 1.0f - 2.0f / (expAcc(2.0f * std::fabs(x)) + 1.0f);
  return x < 0.0f ? -y : y;
}

inline double expAcc(double x) { return std::exp(x); }
inline double erfAcc(double x) { return std::erf(x); }
inline double tanhAcc(double x) { return std::tanh(x); }

/// gelu(v), the erf form or the tanh approximation, as torch defines them.
template <bool Tanh, typename Acc> inline Acc gelu(Acc v) {
  if constexpr (Tanh) {
    Acc inner = Acc(kSqrt2OverPi) * (v + Acc(kTanhCubic) * v * v * v);
    return Acc(0.5) * v * (Acc(1) + tanhAcc(inner));
  } else {
    return Acc(0.5) * v * (Acc(1) + erfAcc(v * Acc(kSqrt1_2)));
  }
}

/// d gelu(v) / dv, matching aten's gelu_backward formulas.
template <bool Tanh, typename Acc> inline Acc geluDerivative(Acc v) {
  if constexpr (Tanh) {
    Acc inner = Acc(kSqrt2OverPi) * (v + Acc(kTanhCubic) * v * v * v);
    Acc t = tanhAcc(inner);
    Acc dInner = Acc(kSqrt2OverPi) * (Acc(1) + Acc(3 * kTanhCubic) * v * v);
    return Acc(0.5) * (Acc(1) + t) + Acc(0.5) * v * (Acc(1) - t * t) * dInner;
  } else {
    Acc cdf = Acc(0.5) * (Acc(1) + erfAcc(v * Acc(kSqrt1_2)));
    Acc pdf = Acc(kInvSqrt2Pi) * expAcc(Acc(-0.5) * v * v);
    return cdf + v * pdf;
  }
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_GELUMATH_H
