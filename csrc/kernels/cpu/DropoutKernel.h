//===- DropoutKernel.h - dropout with its mask drawn inside, CPU ----------===//
//
// y = op(x + bias, keep[, residual]) with the keep flags drawn in the kernel:
// element i takes halfword i % 8 of Philox block (counter i / 8, key seed),
// as in random_mask_like, so the mask depends on the seed only, not on how
// the range is split across threads. The mask comes out packed (bit i % 8 of
// byte i / 8) or as bools. Torch-free; instantiated by the glue.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_DROPOUTKERNEL_H
#define FXMLIR_KERNELS_CPU_DROPOUTKERNEL_H

#include "../common/Elementwise.h"
#include "BiasKernel.h"
#include "RandomMask.h"

#include <algorithm>
#include <cstring>

namespace fxmlir::kernels::cpu {

/// Elements whose keep flags are drawn (one vectorized Philox loop) or
/// unpacked at once before they are computed; a multiple of 8.
constexpr int64_t kDropoutChunk = 2048;

/// Elements [begin, end) (begin a multiple of 8) of a dropout whose element
/// op is op(x + bias, keep, residual[i]...); `mask` is uint8_t[] (Packed) or
/// bool[].
template <bool Packed, typename T, typename Op, typename... Residual>
FXMLIR_CPU_KERNEL void
biasDropoutKernel(Op op, const T *x, const T *bias, T *out, void *mask,
                  BiasBroadcast shape, uint32_t threshold, uint64_t seed,
                  int64_t begin, int64_t end, const Residual *...residual) {
  uint8_t bits[kDropoutChunk / 8];
  uint8_t flags[kDropoutChunk];
  for (int64_t chunk = begin; chunk < end; chunk += kDropoutChunk) {
    int64_t chunkEnd = std::min(chunk + kDropoutChunk, end);
    int64_t bytes = (chunkEnd - chunk + 7) / 8;
    drawKeepBytes(bits, flags, chunk / 8, bytes, threshold, seed);
    if constexpr (Packed)
      std::memcpy(static_cast<uint8_t *>(mask) + chunk / 8, bits, bytes);
    else // bools are bytes of 0 or 1
      std::memcpy(static_cast<bool *>(mask) + chunk, flags, chunkEnd - chunk);
    const uint8_t *keep = flags;
    forEachBiasRun(bias, shape, chunk, chunkEnd,
                   [=](int64_t i, int64_t n, auto biasOf) FXMLIR_INLINE_LAMBDA {
      const uint8_t *runKeep = keep + (i - chunk);
      storeRounded(out + i, n, [=](int64_t k) FXMLIR_INLINE_LAMBDA {
        return op(toAcc(x[i + k]) + biasOf(k), runKeep[k] != 0,
                  toAcc(residual[i + k])...);
      });
    });
  }
}

/// out[i] = grad[i] * keep_i * scale over [begin, end) (begin a multiple of
/// 8), keep_i from a packed mask.
template <typename T>
FXMLIR_CPU_KERNEL void packedMaskScaleKernel(const T *grad, const uint8_t *mask,
                                             T *out, double scale,
                                             int64_t begin, int64_t end) {
  MaskScale op{scale};
  uint8_t flags[kDropoutChunk];
  for (int64_t chunk = begin; chunk < end; chunk += kDropoutChunk) {
    int64_t n = std::min(kDropoutChunk, end - chunk);
    unpackKeep(mask + chunk / 8, (n + 7) / 8, flags);
    const T *chunkGrad = grad + chunk;
    storeRounded(out + chunk, n, [&](int64_t k) FXMLIR_INLINE_LAMBDA {
      return op(toAcc(chunkGrad[k]), flags[k] != 0);
    });
  }
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_DROPOUTKERNEL_H
