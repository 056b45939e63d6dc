//===- RoundedStore.h - a kernel's float values stored in its type --------===//
//
// storeRounded(out, n, value) stores fromAcc<T>(value(k)) at out[k]: the
// one store of every element loop in kernels/cpu. For bfloat16 on a CPU with
// AVX-512 BF16 or AVX2, and for half on one with F16C, the values go through
// a float block on the stack, rounded by RoundX86.h: fused_bias_act on
// [2048, 1024] bfloat16 went from 1.01 to 0.89 ms with GELU, 1.07 to 0.88
// with SiLU, 0.32 to 0.27 with none (one AMD EPYC Zen 4 thread, AVX-512
// BF16, medians of 40); with AVX2 alone (an AMD EPYC, one thread, medians of
// 55, three pairs of processes) from 1.14-1.45 to 0.64-0.84 ms with ReLU,
// 2.20-2.55 to 1.91-1.98 with SiLU, 1.96-2.18 to 1.67-1.92 with GELU,
// 0.67-0.86 to 0.58-0.63 with none; elsewhere, one loop rounding as it
// stores.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_ROUNDEDSTORE_H
#define FXMLIR_KERNELS_CPU_ROUNDEDSTORE_H

#include "../common/ElementTypes.h"
#include "RoundX86.h"
#include "TargetClones.h"

#include <algorithm>
#include <type_traits>

namespace fxmlir::kernels::cpu {

/// Floats per block: 4 KiB of stack, in L1, and one conversion call per
/// 1024 elements.
constexpr int64_t kRoundBlock = 1024;

/// The values of [0, n) a block at a time, each block rounded by round.
template <typename T, typename Value, typename Round>
FXMLIR_INLINE void storeBlocks(T *out, int64_t n, Value value, Round round) {
  float block[kRoundBlock];
  for (int64_t first = 0; first < n; first += kRoundBlock) {
    int64_t count = std::min(kRoundBlock, n - first);
#pragma omp simd
    for (int64_t k = 0; k < count; ++k)
      block[k] = value(first + k);
    round(block, out + first, count);
  }
}

template <typename T, typename Value>
FXMLIR_INLINE void storeRounded(T *out, int64_t n, Value value) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (hasAvx512BFloat16())
      return storeBlocks(out, n, value, roundToBFloat16Avx512);
    if (hasAvx2())
      return storeBlocks(out, n, value, roundToBFloat16Avx2);
  }
  if constexpr (std::is_same_v<T, Half>) {
    if (hasF16c())
      return storeBlocks(out, n, value, roundToHalfF16c);
  }
#pragma omp simd
  for (int64_t k = 0; k < n; ++k)
    out[k] = fromAcc<T>(value(k));
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_ROUNDEDSTORE_H
