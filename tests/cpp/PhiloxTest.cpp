//===- PhiloxTest.cpp - the CPU mask draws against plain Philox -----------===//
//
// Philox4x32-10 against Random123's known-answer vectors, and the CPU mask
// draws (csrc/kernels/cpu/RandomMask.cpp, with the widest hand-vectorized
// path this CPU has; and each of those paths, PhiloxAvx2.cpp's and
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
// Thresholds of p = 0, 0.1, 0.5 and nearly 1.
const uint32_t kThresholds[] = {keepThreshold(0.0), keepThreshold(0.1),
                                keepThreshold(0.5), keepThreshold(0.999)};
// First bytes / elements: 0, odd, and where the block counter's low word
// wraps (2^32 blocks: 2^31 bytes, 2^34 elements).
const int64_t kFirstBytes[] = {0, 12345, (int64_t{1} << 31) - 13};
const int64_t kFirstElements[] = {0, 7, (int64_t{1} << 34) - 50};

/// A block's 4 bools as keepBytes lays them out (byte k for word k).
uint32_t keepBytesOf(const bool *block) {
  uint32_t word = 0;
  for (int k = 0; k < 4; ++k)
    word |= static_cast<uint32_t>(block[k]) << (8 * k);
  return word;
}

TEST(Philox, PackedKeepBytesAreScalarPhilox) {
  for (uint32_t threshold : kThresholds)
    for (int64_t first : kFirstBytes)
      for (int64_t bytes : {1, 7, 8, 64, 259}) { // whole groups and tails
        std::vector<uint8_t> bits(bytes), flags(8 * bytes);
        drawKeepBytes(bits.data(), flags.data(), first, bytes, threshold, kSeed);
        for (int64_t b = 0; b < bytes; ++b) {
          uint64_t block = 2 * static_cast<uint64_t>(first + b);
          uint32_t expected =
              keepBits(philox4x32(block, 0, kSeed), threshold) |
              keepBits(philox4x32(block + 1, 0, kSeed), threshold) << 4;
          ASSERT_EQ(bits[b], expected) << "byte " << first + b;
          for (int j = 0; j < 8; ++j)
            ASSERT_EQ(flags[8 * b + j], (expected >> j) & 1u);
        }
      }
}

/// One hand-vectorized path: its packed-mask and random_mask_like draws.
struct VectorDraws {
  std::string name;
  int64_t (*keepBytes)(uint8_t *, uint8_t *, int64_t, int64_t, uint32_t,
                       uint64_t);
  int64_t (*maskBlocks)(bool *, int64_t, int64_t, uint32_t, uint64_t);
};

class PhiloxVector : public testing::TestWithParam<VectorDraws> {};

// The bytes and blocks a path draws (whole groups: a prefix of the range)
// are scalar Philox's; a path draws nothing only where the CPU lacks it.
TEST_P(PhiloxVector, DrawsAreScalarPhilox) {
  const VectorDraws &path = GetParam();
  constexpr int64_t kBytes = 517, kBlocks = 1033;
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
        uint64_t block = 2 * static_cast<uint64_t>(first + b);
        uint32_t expected =
            keepBits(philox4x32(block, 0, kSeed), threshold) |
            keepBits(philox4x32(block + 1, 0, kSeed), threshold) << 4;
        ASSERT_EQ(bits[b], expected) << path.name << ", byte " << first + b;
        for (int j = 0; j < 8; ++j)
          ASSERT_EQ(flags[8 * b + j], (expected >> j) & 1u);
      }
      int64_t firstBlock = 2 * first;
      std::vector<uint8_t> storage(4 * kBlocks);
      bool *mask = reinterpret_cast<bool *>(storage.data()) - 4 * firstBlock;
      drawn = path.maskBlocks(mask, firstBlock, kBlocks, threshold, kSeed);
      ASSERT_GT(drawn, kBlocks - 64);
      for (int64_t block = firstBlock; block < firstBlock + drawn; ++block)
        ASSERT_EQ(keepBytesOf(mask + 4 * block),
                  keepBytes(philox4x32(block, 0, kSeed), threshold))
            << path.name << ", block " << block;
    }
}

INSTANTIATE_TEST_SUITE_P(
    X86, PhiloxVector,
    testing::Values(VectorDraws{"AVX2", cpu::drawKeepBytesAvx2,
                                cpu::randomMaskBlocksAvx2},
                    VectorDraws{"AVX-512", cpu::drawKeepBytesAvx512,
                                cpu::randomMaskBlocksAvx512}),
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
        randomMask(mask, static_cast<double>(threshold) / 16777216.0, kSeed,
                   first, first + count);
        for (int64_t i = first; i < first + count; ++i) {
          PhiloxBlock block = philox4x32(static_cast<uint64_t>(i / 4), 0, kSeed);
          uint32_t word = i % 4 == 0   ? block.w0
                          : i % 4 == 1 ? block.w1
                          : i % 4 == 2 ? block.w2
                                       : block.w3;
          ASSERT_EQ(mask[i], keepFlag(word, threshold) != 0) << "element " << i;
        }
      }
}

} // namespace
