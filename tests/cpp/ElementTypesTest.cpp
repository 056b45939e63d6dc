//===- ElementTypesTest.cpp - the host's bfloat16 conversions -------------===//
//
// csrc/kernels/common/ElementTypes.h's branch-free float -> bfloat16
// rounding against a plain reference: the nearer of the two bfloat16
// neighbours, ties to the even one; NaNs stay NaNs of their sign, including
// those whose rounding would carry into the exponent.
//
//===----------------------------------------------------------------------===//

#include "../../csrc/kernels/common/ElementTypes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

using namespace fxmlir::kernels;

namespace {

/// A candidate's value in double; past the largest finite float, the
/// infinity's place in the spacing (2^128), so that ties round to it.
double candidateValue(uint32_t bits) {
  if ((bits & 0x7f800000u) == 0x7f800000u)
    return bits & 0x80000000u ? -0x1p128 : 0x1p128;
  return bitsFloat(bits);
}

/// Round to nearest, ties to even, computed in double from the two
/// candidates (the truncation and the next bfloat16 away from zero).
uint16_t referenceBFloat16(float v) {
  uint32_t bits = floatBits(v);
  uint32_t down = bits & 0xffff0000u;
  uint32_t up = down + 0x10000u;
  double below = std::fabs(static_cast<double>(v) - candidateValue(down));
  double above = std::fabs(candidateValue(up) - v);
  if (below < above || (below == above && ((down >> 16) & 1u) == 0))
    return static_cast<uint16_t>(down >> 16);
  return static_cast<uint16_t>(up >> 16);
}

TEST(ElementTypes, BFloat16RoundsToNearestEven) {
  // Every finite float whose low 16 bits are one of these (the ties, the
  // values either side of them, the extremes), all exponents and signs.
  const uint32_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x1234};
  for (uint32_t high = 0; high < 0x10000u; ++high) {
    if ((high & 0x7f80u) == 0x7f80u) // infinities and NaNs: below
      continue;
    for (uint32_t low : lows) {
      float v = bitsFloat(high << 16 | low);
      ASSERT_EQ(fromAcc<BFloat16>(v).bits, referenceBFloat16(v))
          << "bits 0x" << std::hex << (high << 16 | low);
    }
  }
}

TEST(ElementTypes, BFloat16KeepsInfinitiesAndNaNs) {
  EXPECT_EQ(fromAcc<BFloat16>(INFINITY).bits, 0x7f80u);
  EXPECT_EQ(fromAcc<BFloat16>(-INFINITY).bits, 0xff80u);
  // The largest finite floats round up to infinity, as in torch.
  EXPECT_EQ(fromAcc<BFloat16>(bitsFloat(0x7f7fffffu)).bits, 0x7f80u);
  for (uint32_t nan : {0x7f800001u, 0x7fc00000u, 0x7fffffffu, 0x7f80ffffu,
                       0xff800001u, 0xffffffffu}) {
    BFloat16 converted = fromAcc<BFloat16>(bitsFloat(nan));
    EXPECT_TRUE(std::isnan(toAcc(converted))) << "bits 0x" << std::hex << nan;
    EXPECT_EQ(converted.bits & 0x8000u, (nan >> 16) & 0x8000u)
        << "sign of 0x" << std::hex << nan;
  }
}

TEST(ElementTypes, BFloat16RoundTripsExactly) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    if ((bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0)
      continue; // NaNs: above
    EXPECT_EQ(fromAcc<BFloat16>(toAcc(BFloat16{static_cast<uint16_t>(bits)})).bits,
              bits);
  }
}

} // namespace
