//===- RandomMask.h - Torch-free CPU draws of dropout masks ---------------===//
//
// random_mask_like's kernel, and the keep flags the dropout kernels draw
// chunk by chunk. The draws are ordinary functions, not templates: compiled
// once per target clone here instead of inlined into each of the dropout
// kernel's instantiations (activation x residual x dtype x mask form), which
// made its unit the slowest of the build, they cost one call per chunk.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_RANDOMMASK_H
#define FXMLIR_KERNELS_CPU_RANDOMMASK_H

#include <cstdint>

namespace fxmlir::kernels::cpu {

/// Fills mask[begin, end): true (keep) with probability 1 - p, p rounded up
/// to a multiple of 2^-16. Element i takes halfword i % 8 of Philox block
/// (counter i / 8, key seed) (keepByte16, Philox.h), so the mask depends on
/// the seed only, not on how the range is split across threads.
void randomMask(bool *mask, double p, uint64_t seed, int64_t begin,
                int64_t end);

/// Draws bytes [firstByte, firstByte + bytes) of a packed keep mask (byte b
/// is block b's keepByte16 under threshold keepThreshold16(p): bit j keeps
/// element 8 b + j, as in randomMask) into `bits`, and their keep flags,
/// one 0-or-1 byte per element, into `flags`.
void drawKeepBytes(uint8_t *bits, uint8_t *flags, int64_t firstByte,
                   int64_t bytes, uint32_t threshold, uint64_t seed);

/// flags[i] = keep flag (0 or 1) of element i of a packed mask, for the 8
/// elements of each of `count` bytes: what the element loops read,
/// contiguously, so that they vectorize (a bit extraction per element, or a
/// bool load, defeats GCC).
void unpackKeep(const uint8_t *bytes, int64_t count, uint8_t *flags);

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_RANDOMMASK_H
