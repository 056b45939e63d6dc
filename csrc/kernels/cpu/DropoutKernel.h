//===- DropoutKernel.h - dropout with its mask drawn inside, CPU ----------===//
//
// y = op(x + bias, keep[, residual]) with the keep flags drawn in the kernel:
// element i takes word i % 4 of Philox block (counter i / 4, key seed), as
// in random_mask_like, so the mask depends on the seed only, not on how the
// range is split across threads. The mask comes out packed (bit i % 8 of
// byte i / 8) or as bools. Torch-free; instantiated by the glue.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_DROPOUTKERNEL_H
#define FXMLIR_KERNELS_CPU_DROPOUTKERNEL_H

#include "../common/Elementwise.h"
#include "../common/Philox.h"
#include "BiasKernel.h"

#include <algorithm>
#include <cstring>

namespace fxmlir::kernels::cpu {

/// Elements whose keep bits are drawn at once (one vectorized Philox loop)
/// before they are computed; a multiple of 8.
constexpr int64_t kDropoutChunk = 2048;

/// Packed keep bytes [firstByte, firstByte + bytes) into `bits`.
FXMLIR_INLINE void drawKeepBytes(uint8_t *bits, int64_t firstByte,
                                 int64_t bytes, uint32_t threshold,
                                 uint64_t seed) {
#pragma omp simd
  for (int64_t b = 0; b < bytes; ++b) {
    uint64_t block = 2 * static_cast<uint64_t>(firstByte + b);
    bits[b] = static_cast<uint8_t>(
        keepBits(philox4x32(block, 0, seed), threshold) |
        keepBits(philox4x32(block + 1, 0, seed), threshold) << 4);
  }
}

/// Elements [begin, end) (begin a multiple of 8) of a dropout whose element
/// op is op(x + bias, keep, residual[i]...); `mask` is uint8_t[] (Packed) or
/// bool[].
template <bool Packed, typename T, typename Op, typename... Residual>
FXMLIR_CPU_KERNEL void
biasDropoutKernel(Op op, const T *x, const T *bias, T *out, void *mask,
                  BiasBroadcast shape, uint32_t threshold, uint64_t seed,
                  int64_t begin, int64_t end, const Residual *...residual) {
  uint8_t bits[kDropoutChunk / 8];
  for (int64_t chunk = begin; chunk < end; chunk += kDropoutChunk) {
    int64_t chunkEnd = std::min(chunk + kDropoutChunk, end);
    int64_t bytes = (chunkEnd - chunk + 7) / 8;
    drawKeepBytes(bits, chunk / 8, bytes, threshold, seed);
    if constexpr (Packed)
      std::memcpy(static_cast<uint8_t *>(mask) + chunk / 8, bits, bytes);
    const uint8_t *keepBytes = bits;
    auto *bools = static_cast<bool *>(mask);
    forEachBiasRun(bias, shape, chunk, chunkEnd, [=](int64_t i, AccType<T> b) {
      bool keep = packedKeep(keepBytes[(i - chunk) >> 3], i);
      if constexpr (!Packed)
        bools[i] = keep;
      out[i] = fromAcc<T>(op(toAcc(x[i]) + b, keep, toAcc(residual[i])...));
    });
  }
}

/// out[i] = grad[i] * keep_i * scale over [begin, end), keep_i from a packed
/// mask.
template <typename T>
FXMLIR_CPU_KERNEL void packedMaskScaleKernel(const T *grad, const uint8_t *mask,
                                             T *out, double scale,
                                             int64_t begin, int64_t end) {
  MaskScale op{scale};
#pragma omp simd
  for (int64_t i = begin; i < end; ++i)
    out[i] = fromAcc<T>(op(toAcc(grad[i]), packedKeep(mask[i >> 3], i)));
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_DROPOUTKERNEL_H
