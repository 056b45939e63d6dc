//===- PhiloxTest.cpp - the CPU mask draws against plain Philox -----------===//
//
// Philox4x32-10 against Random123's known-answer vectors, the CPU's keep
// rule (keepThreshold16, keepByte16), and the CPU mask draws
// (csrc/kernels/cpu/RandomMask.cpp, with the widest hand-vectorized path
// this CPU has; and each of those paths, PhiloxAvx2.cpp's and
// PhiloxAvx512.cpp's, on its own where the CPU has it) against a scalar
// loop over philox4x32: the same bits for any range, threshold and counter,
// counters past 2^32 blocks included; and the unpacking of a packed mask
// into flags.
//
//===----------------------------------------------------------------------===//

#include "../../csrc/kernels/common/Philox.h"
#include "../../csrc/kernels/cpu/PhiloxX86.h"
#include "../../csrc/kernels/cpu/RandomMask.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace fxmlir::kernels;
using fxmlir::kernels::cpu::drawKeepBytes;
using fxmlir::kernels::cpu::randomMask;
using fxmlir::kernels::cpu::unpackKeep;

namespace {

TEST(Philox, KnownAnswers) {
  struct Case {
    uint32_t counter[4], key[2], words[4];
  };
  const Case cases[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Case &c : cases) {
    PhiloxBlock block = philox4x32(
        c.counter[0] | static_cast<uint64_t>(c.counter[1]) << 32,
        c.counter[2] | static_cast<uint64_t>(c.counter[3]) << 32,
        c.key[0] | static_cast<uint64_t>(c.key[1]) << 32);
    EXPECT_EQ(block.w0, c.words[0]);
    EXPECT_EQ(block.w1, c.words[1]);
    EXPECT_EQ(block.w2, c.words[2]);
    EXPECT_EQ(block.w3, c.words[3]);
  }
}

constexpr uint64_t kSeed = 0x0123456789abcdefull;
// Thresholds of p = 0, 0.1, 0.5, 0.999 and so near 1 that nothing is kept
// (2^16: above every halfword).
const uint32_t kThresholds[] = {keepThreshold16(0.0), keepThreshold16(0.1),
                                keepThreshold16(0.5), keepThreshold16(0.999),
                                keepThreshold16(1.0 - 1e-7)};
// First bytes (blocks) / elements: 0, odd, and where the block counter's
// low word wraps (2^32 blocks: 2^35 elements).
const int64_t kFirstBytes[] = {0, 12345, (int64_t{1} << 32) - 13};
const int64_t kFirstElements[] = {0, 7, (int64_t{1} << 35) - 50};

TEST(Philox, KeepThreshold16RoundsPUp) {
  EXPECT_EQ(keepThreshold16(0.0), 0u);
  EXPECT_EQ(keepThreshold16(0.5), 32768u);
  EXPECT_EQ(keepThreshold16(0.1), 6554u); // 6553.6 rounded up
  EXPECT_EQ(keepThreshold16(1.0 - 1e-7), 65536u);
}

TEST(Philox, KeepByte16TakesLowHalfThenHighHalfOfEachWord) {
  // Halfword j of the block is j + 1: word k holds 2 k + 1 low, 2 k + 2 high.
  PhiloxBlock block{1u | 2u << 16, 3u | 4u << 16, 5u | 6u << 16, 7u | 8u << 16};
  for (uint32_t threshold = 0; threshold <= 9; ++threshold) {
    uint32_t expected = 0;
    for (uint32_t j = 0; j < 8; ++j)
      expected |= (j + 1 >= threshold ? 1u : 0u) << j;
    EXPECT_EQ(keepByte16(block, threshold), expected) << threshold;
  }
  EXPECT_EQ(keepByte16({~0u, ~0u, ~0u, ~0u}, 65535), 0xffu);
  EXPECT_EQ(keepByte16({~0u, ~0u, ~0u, ~0u}, 65536), 0u);
}

uint32_t scalarKeepByte(int64_t block, uint32_t threshold) {
  return keepByte16(philox4x32(static_cast<uint64_t>(block), 0, kSeed),
                    threshold);
}

TEST(Philox, PackedKeepBytesAreScalarPhilox) {
  for (uint32_t threshold : kThresholds)
    for (int64_t first : kFirstBytes)
      for (int64_t bytes : {1, 7, 8, 64, 259}) { // whole groups and tails
        std::vector<uint8_t> bits(bytes), flags(8 * bytes);
        drawKeepBytes(bits.data(), flags.data(), first, bytes, threshold, kSeed);
        for (int64_t b = 0; b < bytes; ++b) {
          uint32_t expected = scalarKeepByte(first + b, threshold);
          ASSERT_EQ(bits[b], expected) << "byte " << first + b;
          for (int j = 0; j < 8; ++j)
            ASSERT_EQ(flags[8 * b + j], (expected >> j) & 1u);
        }
      }
}

/// One hand-vectorized path's packed-mask draws.
struct VectorDraws {
  std::string name;
  int64_t (*keepBytes)(uint8_t *, uint8_t *, int64_t, int64_t, uint32_t,
                       uint64_t);
};

class PhiloxVector : public testing::TestWithParam<VectorDraws> {};

// The bytes a path draws (whole groups: a prefix of the range) are scalar
// Philox's; a path draws nothing only where the CPU lacks it.
TEST_P(PhiloxVector, DrawsAreScalarPhilox) {
  const VectorDraws &path = GetParam();
  constexpr int64_t kBytes = 517;
  std::vector<uint8_t> probeBits(kBytes), probeFlags(8 * kBytes);
  if (path.keepBytes(probeBits.data(), probeFlags.data(), 0, kBytes,
                     kThresholds[1], kSeed) == 0)
    GTEST_SKIP() << "this CPU lacks " << path.name;
  for (uint32_t threshold : kThresholds)
    for (int64_t first : kFirstBytes) {
      std::vector<uint8_t> bits(kBytes), flags(8 * kBytes);
      int64_t drawn = path.keepBytes(bits.data(), flags.data(), first, kBytes,
                                     threshold, kSeed);
      ASSERT_GT(drawn, kBytes - 64);
      ASSERT_LE(drawn, kBytes);
      for (int64_t b = 0; b < drawn; ++b) {
        uint32_t expected = scalarKeepByte(first + b, threshold);
        ASSERT_EQ(bits[b], expected) << path.name << ", byte " << first + b;
        for (int j = 0; j < 8; ++j)
          ASSERT_EQ(flags[8 * b + j], (expected >> j) & 1u);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(
    X86, PhiloxVector,
    testing::Values(VectorDraws{"AVX2", cpu::drawKeepBytesAvx2},
                    VectorDraws{"AVX-512", cpu::drawKeepBytesAvx512}),
    [](const testing::TestParamInfo<VectorDraws> &info) {
      return info.param.name == "AVX2" ? std::string("Avx2")
                                       : std::string("Avx512");
    });

TEST(Philox, UnpackKeepGivesEachBitItsByte) {
  // Every byte value, and a run long enough for any unrolled loop's tail.
  std::vector<uint8_t> bytes(256 + 5);
  for (size_t b = 0; b < bytes.size(); ++b)
    bytes[b] = static_cast<uint8_t>(b * 37 + 11);
  for (int b = 0; b < 256; ++b)
    bytes[b] = static_cast<uint8_t>(b);
  std::vector<uint8_t> flags(8 * bytes.size(), 0xaa);
  unpackKeep(bytes.data(), static_cast<int64_t>(bytes.size()), flags.data());
  for (size_t b = 0; b < bytes.size(); ++b)
    for (int j = 0; j < 8; ++j)
      ASSERT_EQ(flags[8 * b + j], (bytes[b] >> j) & 1u)
          << "byte " << b << " (" << int(bytes[b]) << "), bit " << j;
}

TEST(Philox, RandomMaskIsScalarPhilox) {
  for (uint32_t threshold : kThresholds)
    for (int64_t first : kFirstElements)
      for (int64_t count : {3, 64, 129, 1000}) { // partial blocks at both ends
        // The mask is indexed from element 0: keep only [first, first + count).
        int64_t base = first & ~int64_t{63};
        std::vector<uint8_t> storage(first - base + count);
        bool *mask = reinterpret_cast<bool *>(storage.data()) - base;
        randomMask(mask, static_cast<double>(threshold) / 65536.0, kSeed,
                   first, first + count);
        for (int64_t i = first; i < first + count; ++i) {
          uint32_t expected = (scalarKeepByte(i / 8, threshold) >> (i % 8)) & 1u;
          ASSERT_EQ(mask[i], expected != 0) << "element " << i;
        }
      }
}

} // namespace
