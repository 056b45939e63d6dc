//===- BiasKernel.h - the bias family's CPU kernel ------------------------===//
//
// out[i] = op(x[i] + bias[...], other[i]...) over the flat element range
// [begin, end), so that callers can split the work across threads at any
// boundary. T is float, double, Half or BFloat16; 16-bit types compute in
// float. Torch-free; instantiated by the glue for each op and element type.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_BIASKERNEL_H
#define FXMLIR_KERNELS_CPU_BIASKERNEL_H

#include "../common/BiasBroadcast.h"
#include "../common/ElementTypes.h"
#include "TargetClones.h"

#include <algorithm>

namespace fxmlir::kernels::cpu {

/// Calls elementOp(i, biasValue) for every i in [begin, end), in runs whose
/// bias is either one value (inner > 1) or a contiguous slice (inner == 1),
/// so that each run is a simple loop the compiler vectorizes.
template <typename T, typename ElementOp>
FXMLIR_INLINE void forEachBiasRun(const T *bias, BiasBroadcast shape,
                                  int64_t begin, int64_t end,
                                  ElementOp elementOp) {
  int64_t i = begin;
  if (shape.inner == 1) {
    while (i < end) {
      int64_t j = i % shape.axisSize;
      int64_t n = std::min(shape.axisSize - j, end - i);
#pragma omp simd
      for (int64_t k = 0; k < n; ++k)
        elementOp(i + k, toAcc(bias[j + k]));
      i += n;
    }
    return;
  }
  while (i < end) {
    int64_t row = i / shape.inner;
    int64_t n = std::min((row + 1) * shape.inner - i, end - i);
    AccType<T> b = toAcc(bias[row % shape.axisSize]);
#pragma omp simd
    for (int64_t k = 0; k < n; ++k)
      elementOp(i + k, b);
    i += n;
  }
}

template <typename T, typename Op, typename... Others>
FXMLIR_CPU_KERNEL void biasKernel(Op op, const T *x, const T *bias, T *out,
                                  BiasBroadcast shape, int64_t begin,
                                  int64_t end, const Others *...others) {
  forEachBiasRun(bias, shape, begin, end,
                 [=](int64_t i, AccType<T> b) FXMLIR_INLINE_LAMBDA {
    out[i] = fromAcc<T>(op(toAcc(x[i]) + b, toAcc(others[i])...));
  });
}

/// out[i] = op(sum[i]) with sum[i] = x[i] + bias[...] rounded to T (as an
/// unfused add would), both stored; x may be sum (in place).
template <typename T, typename Op>
FXMLIR_CPU_KERNEL void biasKernelKeepSum(Op op, const T *x, const T *bias,
                                         T *sum, T *out, BiasBroadcast shape,
                                         int64_t begin, int64_t end) {
  forEachBiasRun(bias, shape, begin, end,
                 [=](int64_t i, AccType<T> b) FXMLIR_INLINE_LAMBDA {
    T rounded = fromAcc<T>(toAcc(x[i]) + b);
    sum[i] = rounded;
    out[i] = fromAcc<T>(op(toAcc(rounded)));
  });
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_BIASKERNEL_H
