//===- RoundX86Test.cpp - 16-bit rounding by x86 instructions -------------===//
//
// csrc/kernels/cpu/RoundX86.cpp against fromAcc, bit for bit: for bfloat16
// (AVX-512 BF16's and AVX2's) and half, every neighbourhood of a rounding
// boundary (ties, values either side, all exponents and signs), subnormals
// (which AVX-512 BF16 alone flushes to zero), infinities, and every length
// of a partial group; NaNs stay NaNs of their sign (AVX2's: fromAcc's
// NaNs). And storeRounded (RoundedStore.h) across its blocks, on whichever
// path this CPU takes.
//
//===----------------------------------------------------------------------===//

#include "../../csrc/kernels/cpu/RoundedStore.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

using namespace fxmlir::kernels;
using namespace fxmlir::kernels::cpu;

namespace {

/// Floats around every boundary of a rounding that drops `dropped` low bits:
/// each high part, with low bits at and either side of the tie and the ends.
std::vector<float> neighbourhoods(int dropped) {
  uint32_t tie = 1u << (dropped - 1), all = (1u << dropped) - 1;
  const uint32_t lows[] = {0, 1, tie - 1, tie, tie + 1, all, tie / 3};
  std::vector<float> values;
  for (uint32_t high = 0; high < (1u << (32 - dropped)); ++high)
    for (uint32_t low : lows)
      values.push_back(bitsFloat(high << dropped | low));
  return values;
}

template <typename T>
void expectRoundedLikeFromAcc(const std::vector<float> &from,
                              const std::vector<T> &to) {
  ASSERT_EQ(from.size(), to.size());
  for (size_t k = 0; k < from.size(); ++k) {
    T expected = fromAcc<T>(from[k]);
    if (std::isnan(from[k])) { // a NaN of the same sign
      ASSERT_TRUE(std::isnan(toAcc(to[k]))) << "element " << k;
      ASSERT_EQ(to[k].bits & 0x8000u, expected.bits & 0x8000u) << "element " << k;
      continue;
    }
    ASSERT_EQ(to[k].bits, expected.bits)
        << "element " << k << ", bits 0x" << std::hex << floatBits(from[k]);
  }
}

/// `round` applied to the neighbourhoods of a rounding dropping `dropped`
/// bits, checked against fromAcc; the inputs and results.
template <typename T, typename Round>
std::pair<std::vector<float>, std::vector<T>> expectNeighbourhoodsRounded(int dropped,
                                                                          Round round) {
  std::vector<float> from = neighbourhoods(dropped);
  std::vector<T> to(from.size());
  round(from.data(), to.data(), from.size());
  expectRoundedLikeFromAcc(from, to);
  return {from, to};
}

TEST(RoundX86, BFloat16MatchesFromAcc) {
  if (!hasAvx512BFloat16())
    GTEST_SKIP() << "this CPU has no AVX-512 BF16";
  auto [from, to] = expectNeighbourhoodsRounded<BFloat16>(16, roundToBFloat16Avx512);
  // fromAcc's own NaNs too: quiet, payload's top kept.
  for (size_t k = 0; k < from.size(); ++k)
    if (std::isnan(from[k]))
      ASSERT_EQ(to[k].bits, fromAcc<BFloat16>(from[k]).bits);
}

TEST(RoundX86, BFloat16ByAvx2IsFromAccBitForBit) {
  if (!hasAvx2())
    GTEST_SKIP() << "this CPU has no AVX2";
  auto [from, to] = expectNeighbourhoodsRounded<BFloat16>(16, roundToBFloat16Avx2);
  for (size_t k = 0; k < from.size(); ++k)
    ASSERT_EQ(to[k].bits, fromAcc<BFloat16>(from[k]).bits) << "element " << k;
}

TEST(RoundX86, BFloat16RoundsSubnormalsInAnyLane) {
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

TEST(RoundX86, HalfMatchesFromAcc) {
  if (!hasF16c())
    GTEST_SKIP() << "this CPU has no F16C";
  expectNeighbourhoodsRounded<Half>(13, roundToHalfF16c);
}

/// Each length up to 40 writes its n elements, rounded, and nothing past.
template <typename T, typename Round>
void expectWritesOnlyItsElements(Round round) {
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> from(n);
    for (int64_t k = 0; k < n; ++k)
      from[k] = -2.25f + 0.001f * k;
    std::vector<T> to(n + 16, T{0xbeef});
    round(from.data(), to.data(), n);
    expectRoundedLikeFromAcc(from, std::vector<T>(to.begin(), to.begin() + n));
    for (int64_t k = n; k < n + 16; ++k)
      ASSERT_EQ(to[k].bits, 0xbeefu) << "past the end, length " << n;
  }
}

TEST(RoundX86, PartialGroupsWriteOnlyTheirElements) {
  if (hasAvx512BFloat16())
    expectWritesOnlyItsElements<BFloat16>(roundToBFloat16Avx512);
  if (hasAvx2())
    expectWritesOnlyItsElements<BFloat16>(roundToBFloat16Avx2);
  if (hasF16c())
    expectWritesOnlyItsElements<Half>(roundToHalfF16c);
  if (!hasAvx512BFloat16() && !hasAvx2() && !hasF16c())
    GTEST_SKIP() << "this CPU has neither AVX-512 BF16, AVX2 nor F16C";
}

template <typename T> void expectStoreRoundedLikeFromAcc(int dropped) {
  std::vector<float> all = neighbourhoods(dropped);
  for (int64_t n : {int64_t{1}, kRoundBlock - 1, kRoundBlock,
                    2 * kRoundBlock + 37, static_cast<int64_t>(all.size())}) {
    std::vector<float> from(all.begin(), all.begin() + n);
    std::vector<T> to(n);
    storeRounded(to.data(), n, [&](int64_t k) { return from[k] * 1.0f; });
    expectRoundedLikeFromAcc(from, to);
  }
}

TEST(RoundX86, StoreRoundedMatchesFromAccAcrossBlocks) {
  expectStoreRoundedLikeFromAcc<BFloat16>(16);
  expectStoreRoundedLikeFromAcc<Half>(13);
}

} // namespace
