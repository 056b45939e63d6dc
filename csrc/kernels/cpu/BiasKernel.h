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
#include "RoundedStore.h"
#include "TargetClones.h"

#include <algorithm>

namespace fxmlir::kernels::cpu {

/// Calls run(i, n, biasOf) for runs [i, i + n) covering [begin, end) whose
/// bias is either one value (inner > 1) or a contiguous slice (inner == 1);
/// biasOf(k) is the bias of element i + k in float. Each run is one
/// storeRounded loop, which the compiler vectorizes.
template <typename T, typename Run>
FXMLIR_INLINE void forEachBiasRun(const T *bias, BiasBroadcast shape,
                                  int64_t begin, int64_t end, Run run) {
  int64_t i = begin;
  if (shape.inner == 1) {
    while (i < end) {
      int64_t j = i % shape.axisSize;
      int64_t n = std::min(shape.axisSize - j, end - i);
      const T *slice = bias + j;
      run(i, n, [=](int64_t k) FXMLIR_INLINE_LAMBDA { return toAcc(slice[k]); });
      i += n;
    }
    return;
  }
  while (i < end) {
    int64_t row = i / shape.inner;
    int64_t n = std::min((row + 1) * shape.inner - i, end - i);
    AccType<T> b = toAcc(bias[row % shape.axisSize]);
    run(i, n, [=](int64_t) FXMLIR_INLINE_LAMBDA { return b; });
    i += n;
  }
}

template <typename T, typename Op, typename... Others>
FXMLIR_CPU_KERNEL void biasKernel(Op op, const T *x, const T *bias, T *out,
                                  BiasBroadcast shape, int64_t begin,
                                  int64_t end, const Others *...others) {
  forEachBiasRun(bias, shape, begin, end,
                 [=](int64_t i, int64_t n, auto biasOf) FXMLIR_INLINE_LAMBDA {
    storeRounded(out + i, n, [=](int64_t k) FXMLIR_INLINE_LAMBDA {
      return op(toAcc(x[i + k]) + biasOf(k), toAcc(others[i + k])...);
    });
  });
}

/// out[i] = op(sum[i]) with sum[i] = x[i] + bias[...] rounded to T (as an
/// unfused add would), both stored; x may be sum (in place).
template <typename T, typename Op>
FXMLIR_CPU_KERNEL void biasKernelKeepSum(Op op, const T *x, const T *bias,
                                         T *sum, T *out, BiasBroadcast shape,
                                         int64_t begin, int64_t end) {
  forEachBiasRun(bias, shape, begin, end,
                 [=](int64_t i, int64_t n, auto biasOf) FXMLIR_INLINE_LAMBDA {
    // A block of sums at a time, read back while still in L1.
    for (int64_t first = 0; first < n; first += kRoundBlock) {
      int64_t count = std::min(kRoundBlock, n - first);
      int64_t at = i + first;
      storeRounded(sum + at, count, [=](int64_t k) FXMLIR_INLINE_LAMBDA {
        return toAcc(x[at + k]) + biasOf(first + k);
      });
      storeRounded(out + at, count, [=](int64_t k) FXMLIR_INLINE_LAMBDA {
        return op(toAcc(sum[at + k]));
      });
    }
  });
}

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_BIASKERNEL_H
