//===- PhiloxAvx2.h - Philox mask draws vectorized by hand for AVX2 -------===//
//
// GCC vectorizes the portable Philox loops (RandomMask.cpp) with more
// shuffles than arithmetic: on an AVX2 CPU (AMD EPYC, one thread) they drew
// a [2048, 1024] mask in 4.5-6 ms, these in 1.8 ms, bit for bit the same.
// Each takes the leading whole groups of its range and returns how many it
// drew; the portable loop does the rest. They draw nothing (return 0) on a
// CPU without AVX2, and on one with AVX-512, whose compiler-vectorized clone
// is the one measured there so far.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_PHILOXAVX2_H
#define FXMLIR_KERNELS_CPU_PHILOXAVX2_H

#include <cstdint>

namespace fxmlir::kernels::cpu {

/// Bytes [firstByte, firstByte + n) of a packed keep mask into `bits` and
/// their elements' flags into `flags`, as drawKeepBytes draws them, for the
/// largest n <= bytes these draw; n.
int64_t drawKeepBytesAvx2(uint8_t *bits, uint8_t *flags, int64_t firstByte,
                          int64_t bytes, uint32_t threshold, uint64_t seed);

/// Blocks [firstBlock, firstBlock + n) of random_mask_like's mask (4 bools
/// a block, at mask + 4 * firstBlock), as randomMask draws them, for the
/// largest n <= blocks these draw; n.
int64_t randomMaskBlocksAvx2(bool *mask, int64_t firstBlock, int64_t blocks,
                             uint32_t threshold, uint64_t seed);

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_PHILOXAVX2_H
