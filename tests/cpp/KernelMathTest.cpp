//===- KernelMathTest.cpp - the CPU kernels' exp, erf and GELU ------------===//
//
// The host's branch-free polynomials and rational functions
// (csrc/kernels/common/Math.h) against libm in double precision: the error
// bounds their comments state, NaN kept, and the GELU gradient that shares
// one exponential between erf and the density.
//
//===----------------------------------------------------------------------===//

#include "../../csrc/kernels/common/Elementwise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace fxmlir::kernels;

namespace {

/// Every float32 step of `step` over [lo, hi].
template <typename Check> void sweep(float lo, float hi, float step, Check check) {
  for (float x = lo; x <= hi; x += step)
    check(x);
}

TEST(KernelMath, ExpWithinTwoUlps) {
  sweep(-87.0f, 88.0f, 1e-3f, [](float x) {
    double exact = std::exp(static_cast<double>(x));
    EXPECT_NEAR(expAcc(x), exact, 2 * exact * 0x1p-23) << "x = " << x;
  });
}

// The formula's 1.5e-7 and float32 rounding: 5.4e-7 at most, near 0.05,
// where 1 - poly * t * e^(-x^2) cancels.
TEST(KernelMath, ErfGivenExpWithinAbramowitzStegunBound) {
  sweep(-6.0f, 6.0f, 1e-4f, [](float x) {
    EXPECT_NEAR(erfGivenExp(x, expAcc(-x * x)), std::erf(static_cast<double>(x)),
                6e-7)
        << "x = " << x;
  });
}

// tools/fit_rational.py's fit: 3.7e-7 relative in float32 up to the clamp,
// and erf(3.92) is 1 to within 1.5e-8 beyond it.
TEST(KernelMath, ErfWithinRationalFitBound) {
  sweep(-6.0f, 6.0f, 1e-4f, [](float x) {
    double exact = std::erf(static_cast<double>(x));
    EXPECT_NEAR(erfAcc(x), exact, 4e-7 * std::fabs(exact)) << "x = " << x;
  });
}

// The fit's 3.2e-7 relative in float32 up to the clamp, and tanh(7.9) is 1
// to within 2.7e-7 beyond it.
TEST(KernelMath, TanhWithinRationalFitBound) {
  sweep(-12.0f, 12.0f, 1e-4f, [](float x) {
    double exact = std::tanh(static_cast<double>(x));
    EXPECT_NEAR(tanhAcc(x), exact, std::max(4e-7 * std::fabs(exact), 3e-7))
        << "x = " << x;
  });
}

TEST(KernelMath, NanStaysNan) {
  float nan = std::nanf("");
  EXPECT_TRUE(std::isnan(expAcc(nan)));
  EXPECT_TRUE(std::isnan(erfAcc(nan)));
  EXPECT_TRUE(std::isnan(tanhAcc(nan)));
  EXPECT_TRUE(std::isnan(Gelu<false>::value(nan)));
  EXPECT_TRUE(std::isnan(Gelu<true>::value(nan)));
}

TEST(KernelMath, GeluGradientMatchesDoublePrecision) {
  sweep(-10.0f, 10.0f, 1e-3f, [](float v) {
    double d = v;
    double exact = 0.5 * (1 + std::erf(d * kSqrt1_2)) +
                   d * kInvSqrt2Pi * std::exp(-0.5 * d * d);
    EXPECT_NEAR(Gelu<false>::grad(v, 1.0f), exact, 5e-7 * (1 + std::fabs(d)))
        << "v = " << v;
  });
}

TEST(KernelMath, GeluValueMatchesDoublePrecision) {
  sweep(-10.0f, 10.0f, 1e-3f, [](float v) {
    double d = v;
    double exact = 0.5 * d * (1 + std::erf(d * kSqrt1_2));
    EXPECT_NEAR(Gelu<false>::value(v), exact, 2e-7 * (1 + std::fabs(d)))
        << "v = " << v;
  });
}

} // namespace
