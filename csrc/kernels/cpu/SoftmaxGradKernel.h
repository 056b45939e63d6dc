//===- SoftmaxGradKernel.h - the fused LM loss's blocks, CPU --------------===//
//
// Rows [begin, end) of one block of vocabulary columns of the fused linear +
// cross-entropy, read once from the block's logits z in T (the product's
// dtype), computed in float. Forward: each row's running max and sum of
// exponentials (its log-sum-exp, online over blocks). Backward: the logit
// gradient
//   g[r][c] = (exp(z[r][c] - lse[r]) - (c == target[r] - first)) * scale[r]
// stored in T; `scale` is 0 for ignored rows. Torch-free; instantiated by
// the CPU launcher.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_SOFTMAXGRADKERNEL_H
#define FXMLIR_KERNELS_CPU_SOFTMAXGRADKERNEL_H

#include "../common/ElementTypes.h"
#include "../common/Math.h"
#include "RoundedStore.h"
#include "TargetClones.h"

#include <algorithm>
#include <cstdint>

namespace fxmlir::kernels::cpu {

template <typename T>
FXMLIR_CPU_KERNEL void logSumExpRows(const T *z, int64_t zRowStride,
                                     int64_t columns, float *max, float *sum,
                                     int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const T *zRow = z + r * zRowStride;
    float blockMax = max[r];
#pragma omp simd reduction(max : blockMax)
    for (int64_t c = 0; c < columns; ++c)
      blockMax = std::max(blockMax, static_cast<float>(toAcc(zRow[c])));
    float blockSum = 0.0f;
#pragma omp simd reduction(+ : blockSum)
    for (int64_t c = 0; c < columns; ++c)
      blockSum += expAcc(static_cast<float>(toAcc(zRow[c])) - blockMax);
    // The sum so far, rescaled to the new max (0 before the first block).
    sum[r] = sum[r] * expAcc(max[r] - blockMax) + blockSum;
    max[r] = blockMax;
  }
}

template <typename T>
FXMLIR_CPU_KERNEL void softmaxGradRows(const T *z, int64_t zRowStride,
                                       int64_t columns, const float *lse,
                                       const float *scale,
                                       const int64_t *target, int64_t first,
                                       T *g, int64_t begin, int64_t end) {
  for (int64_t r = begin; r < end; ++r) {
    const T *zRow = z + r * zRowStride;
    T *gRow = g + r * columns;
    float rowLse = lse[r], rowScale = scale[r];
    storeRounded(gRow, columns, [=](int64_t c) FXMLIR_INLINE_LAMBDA {
      return expAcc(toAcc(zRow[c]) - rowLse) * rowScale;
    });
    int64_t c = target[r] - first;
    if (c >= 0 && c < columns)
      gRow[c] = fromAcc<T>(expAcc(toAcc(zRow[c]) - rowLse) * rowScale -
                           rowScale);
  }
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_SOFTMAXGRADKERNEL_H
