//===- SoftmaxGradKernel.h - the fused LM loss's logit gradient, CPU ------===//
//
// Rows [begin, end) of one block of vocabulary columns of the fused linear +
// cross-entropy's logit gradient, in one pass over the block's logits:
//   g[r][c] = (exp(z[r][c] - lse[r]) - (c == target[r] - first)) * scale[r]
// computed in float, stored in T (the product's dtype). `scale` is 0 for
// ignored rows. Torch-free; instantiated by the CPU launcher.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_SOFTMAXGRADKERNEL_H
#define FXMLIR_KERNELS_CPU_SOFTMAXGRADKERNEL_H

#include "../common/ElementTypes.h"
#include "../common/Math.h"
#include "TargetClones.h"

#include <cstdint>

namespace fxmlir::kernels::cpu {

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
#pragma omp simd
    for (int64_t c = 0; c < columns; ++c)
      gRow[c] = fromAcc<T>(expAcc(toAcc(zRow[c]) - rowLse) * rowScale);
    int64_t c = target[r] - first;
    if (c >= 0 && c < columns)
      gRow[c] = fromAcc<T>(expAcc(toAcc(zRow[c]) - rowLse) * rowScale -
                           rowScale);
  }
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_SOFTMAXGRADKERNEL_H
