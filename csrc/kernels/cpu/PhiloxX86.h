//===- PhiloxX86.h - Philox mask draws vectorized by hand for x86 ---------===//
//
// GCC vectorizes the portable Philox loops (RandomMask.cpp) with more
// shuffles than arithmetic: [2048, 1024] keep flags, a word an element,
// took 4.5-6 ms on an AVX2 CPU (AMD EPYC Zen 3, one thread), 1.8 with
// PhiloxAvx2.cpp. On an AVX-512 one (AMD EPYC Zen 4, one thread,
// random_mask_like's medians) the compiler's x86-64-v4 clone took 2.05 ms,
// PhiloxAvx2.cpp 1.14 and PhiloxAvx512.cpp 0.83; with 16 bits an element
// (keepByte16, Philox.h) PhiloxAvx512.cpp takes 0.48-0.53. All draw bit
// for bit what the portable loop draws. Each function takes the leading
// whole groups of its range and returns how many it drew; the portable
// loop does the rest. Each draws nothing (returns 0) on a CPU without its
// instructions (the AVX-512 one needs AVX-512 F and BW); the X86 one calls
// the widest this CPU has.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_PHILOXX86_H
#define FXMLIR_KERNELS_CPU_PHILOXX86_H

#include <cstdint>

namespace fxmlir::kernels::cpu {

/// Bytes [firstByte, firstByte + n) of a packed keep mask (byte b: block
/// b's keepByte16, Philox.h) into `bits`, and their elements' flags (a
/// 0-or-1 byte each, 8 a mask byte) into `flags`, for the largest n <=
/// bytes these draw; n.
int64_t drawKeepBytesAvx2(uint8_t *bits, uint8_t *flags, int64_t firstByte,
                          int64_t bytes, uint32_t threshold, uint64_t seed);
int64_t drawKeepBytesAvx512(uint8_t *bits, uint8_t *flags, int64_t firstByte,
                            int64_t bytes, uint32_t threshold, uint64_t seed);

/// The widest hand-vectorized draws this CPU has: AVX-512's, AVX2's or
/// none (0 drawn).
inline int64_t drawKeepBytesX86(uint8_t *bits, uint8_t *flags,
                                int64_t firstByte, int64_t bytes,
                                uint32_t threshold, uint64_t seed) {
  if (int64_t drawn = drawKeepBytesAvx512(bits, flags, firstByte, bytes,
                                          threshold, seed))
    return drawn;
  return drawKeepBytesAvx2(bits, flags, firstByte, bytes, threshold, seed);
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_PHILOXX86_H
