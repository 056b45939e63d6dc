//===- RoundBFloat16Test.cpp - bfloat16 rounding in hardware --------------===//
//
// csrc/kernels/cpu/RoundBFloat16Avx512.cpp against fromAcc<BFloat16>, bit
// for bit: every bfloat16 neighbourhood (ties, values either side, all
// exponents and signs), subnormals (which the instructions alone flush to
// zero), infinities and NaNs, at every length of a partial group; and
// storeRounded (RoundedStore.h) across its blocks, on whichever path this
// CPU takes.
//
//===----------------------------------------------------------------------===//

#include "../../csrc/kernels/cpu/RoundedStore.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace fxmlir::kernels;
using namespace fxmlir::kernels::cpu;

namespace {

/// Floats whose low 16 bits are one of `lows`, for every high half.
std::vector<float> neighbourhoods() {
  const uint32_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff, 0x1234};
  std::vector<float> values;
  for (uint32_t high = 0; high < 0x10000u; ++high)
    for (uint32_t low : lows)
      values.push_back(bitsFloat(high << 16 | low));
  return values;
}

void expectRoundedLikeFromAcc(const std::vector<float> &from,
                              const std::vector<BFloat16> &to) {
  ASSERT_EQ(from.size(), to.size());
  for (size_t k = 0; k < from.size(); ++k)
    ASSERT_EQ(to[k].bits, fromAcc<BFloat16>(from[k]).bits)
        << "element " << k << ", bits 0x" << std::hex << floatBits(from[k]);
}

TEST(RoundBFloat16, Avx512MatchesFromAcc) {
  if (!hasAvx512BFloat16())
    GTEST_SKIP() << "this CPU has no AVX-512 BF16";
  std::vector<float> from = neighbourhoods();
  std::vector<BFloat16> to(from.size());
  roundToBFloat16Avx512(from.data(), to.data(), from.size());
  expectRoundedLikeFromAcc(from, to);
}

TEST(RoundBFloat16, Avx512RoundsSubnormalsInAnyLane) {
  if (!hasAvx512BFloat16())
    GTEST_SKIP() << "this CPU has no AVX-512 BF16";
  // One subnormal among normal values, at each lane of a whole group of 32
  // and of a partial one; lengths 1 to 70 cover every partial tail.
  for (int64_t n = 1; n <= 70; ++n) {
    for (int64_t lane = 0; lane < n; ++lane) {
      std::vector<float> from(n, 1.5f);
      from[lane] = bitsFloat(0x00018000u + static_cast<uint32_t>(lane));
      std::vector<BFloat16> to(n, BFloat16{0xdead});
      roundToBFloat16Avx512(from.data(), to.data(), n);
      expectRoundedLikeFromAcc(from, to);
      ASSERT_NE(to[lane].bits, 0u) << "flushed, length " << n;
    }
  }
}

TEST(RoundBFloat16, Avx512WritesOnlyItsElements) {
  if (!hasAvx512BFloat16())
    GTEST_SKIP() << "this CPU has no AVX-512 BF16";
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> from(n, -2.25f);
    std::vector<BFloat16> to(n + 16, BFloat16{0xbeef});
    roundToBFloat16Avx512(from.data(), to.data(), n);
    for (int64_t k = n; k < n + 16; ++k)
      ASSERT_EQ(to[k].bits, 0xbeefu) << "past the end, length " << n;
  }
}

TEST(RoundBFloat16, StoreRoundedMatchesFromAccAcrossBlocks) {
  std::vector<float> all = neighbourhoods();
  for (int64_t n : {int64_t{1}, kRoundBlock - 1, kRoundBlock, 2 * kRoundBlock + 37,
                    static_cast<int64_t>(all.size())}) {
    std::vector<float> from(all.begin(), all.begin() + n);
    std::vector<BFloat16> to(n);
    storeRounded(to.data(), n, [&](int64_t k) { return from[k] * 1.0f; });
    expectRoundedLikeFromAcc(from, to);
  }
}

} // namespace
