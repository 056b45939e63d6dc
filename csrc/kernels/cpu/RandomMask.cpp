//===- RandomMask.cpp - Torch-free CPU draws of dropout masks -------------===//

#include "RandomMask.h"
#include "PhiloxX86.h"
#include "../common/Elementwise.h"
#include "../common/Philox.h"
#include "TargetClones.h"

#include <algorithm>
#include <cstring>

namespace fxmlir::kernels::cpu {

FXMLIR_CPU_KERNEL void randomMask(bool *mask, double p, uint64_t seed,
                                  int64_t begin, int64_t end) {
  uint32_t threshold = keepThreshold16(p);
  // Elements [from, to) of one block, for the range's partial ends.
  auto fillPart = [&](int64_t block, int64_t from, int64_t to) {
    uint32_t keep = keepByte16(philox4x32(block, 0, seed), threshold);
    for (int64_t i = from; i < to; ++i)
      mask[i] = (keep >> (i - block * 8)) & 1u;
  };
  int64_t firstFull = (begin + 7) / 8;
  int64_t lastFull = end / 8;
  if (firstFull > lastFull) { // The range lies inside one block.
    fillPart(begin / 8, begin, end);
    return;
  }
  if (begin < firstFull * 8)
    fillPart(begin / 8, begin, firstFull * 8);
  // Whole blocks a chunk at a time: their flags are the mask's bools (bytes
  // of 0 or 1), their packed bits go to scratch.
  constexpr int64_t kChunkBlocks = 256;
  uint8_t bits[kChunkBlocks];
  for (int64_t block = firstFull; block < lastFull; block += kChunkBlocks) {
    int64_t blocks = std::min(kChunkBlocks, lastFull - block);
    drawKeepBytes(bits, reinterpret_cast<uint8_t *>(mask + 8 * block), block,
                  blocks, threshold, seed);
  }
  if (lastFull * 8 < end)
    fillPart(lastFull, lastFull * 8, end);
}

FXMLIR_CPU_KERNEL void unpackKeep(const uint8_t *__restrict bytes,
                                  int64_t count, uint8_t *__restrict flags) {
  // A byte's 8 flags as one little-endian word: the multiply copies the byte
  // into each of the word's bytes, the mask keeps bit j in byte j, and adding
  // 0x7f to a byte of 0 or 2^j sets its top bit exactly when it is not 0,
  // never carrying into the next byte. GCC made the plain loop (flag j =
  // bit j of the byte) scalar shifts and ors, 40 instructions a byte: it
  // took over half of packed_mask_scale's time (2048 x 1024 floats, one
  // AMD EPYC thread: 1.86 ms, 0.85 with this).
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (int64_t b = 0; b < count; ++b) {
    uint64_t spread = (bytes[b] * 0x0101010101010101ull) & 0x8040201008040201ull;
    uint64_t word = ((spread + 0x7f7f7f7f7f7f7f7full) >> 7) & 0x0101010101010101ull;
    std::memcpy(flags + 8 * b, &word, sizeof(word));
  }
#else
  for (int64_t b = 0; b < count; ++b)
    for (int j = 0; j < 8; ++j)
      flags[8 * b + j] = packedKeep(bytes[b], j);
#endif
}

FXMLIR_CPU_KERNEL void drawKeepBytes(uint8_t *bits, uint8_t *flags,
                                     int64_t firstByte, int64_t bytes,
                                     uint32_t threshold, uint64_t seed) {
  int64_t drawn =
      drawKeepBytesX86(bits, flags, firstByte, bytes, threshold, seed);
#pragma omp simd
  for (int64_t b = drawn; b < bytes; ++b)
    bits[b] = static_cast<uint8_t>(keepByte16(
        philox4x32(static_cast<uint64_t>(firstByte + b), 0, seed), threshold));
  unpackKeep(bits + drawn, bytes - drawn, flags + 8 * drawn);
}

} // namespace fxmlir::kernels::cpu
