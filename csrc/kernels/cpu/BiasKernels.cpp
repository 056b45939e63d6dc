//===- BiasKernels.cpp - Torch-free CPU kernels of the bias-add fusions ---===//

#include "BiasKernels.h"
#include "GeluMath.h"
#include "TargetClones.h"

#include <algorithm>

namespace fxmlir::kernels::cpu {
namespace {

/// Calls elementOp(i, biasValue) for every i in [begin, end), in runs whose
/// bias is either one value (inner > 1) or a contiguous slice (inner == 1), so
/// that each run is a simple loop the compiler vectorizes.
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

template <typename T, bool Tanh>
FXMLIR_INLINE void biasAddGeluImpl(const T *x, const T *bias, T *out,
                                   BiasBroadcast shape, int64_t begin,
                                   int64_t end) {
  forEachBiasRun(bias, shape, begin, end, [=](int64_t i, AccType<T> b) {
    out[i] = fromAcc<T>(gelu<Tanh>(toAcc(x[i]) + b));
  });
}

template <typename T, bool Tanh>
FXMLIR_INLINE void biasAddGeluGradImpl(const T *grad, const T *x, const T *bias,
                                       T *out, BiasBroadcast shape,
                                       int64_t begin, int64_t end) {
  forEachBiasRun(bias, shape, begin, end, [=](int64_t i, AccType<T> b) {
    out[i] = fromAcc<T>(toAcc(grad[i]) * geluDerivative<Tanh>(toAcc(x[i]) + b));
  });
}

} // namespace

template <typename T>
FXMLIR_CPU_KERNEL void biasAdd(const T *x, const T *bias, T *out,
                               BiasBroadcast shape, int64_t begin,
                               int64_t end) {
  forEachBiasRun(bias, shape, begin, end, [=](int64_t i, AccType<T> b) {
    out[i] = fromAcc<T>(toAcc(x[i]) + b);
  });
}

template <typename T>
FXMLIR_CPU_KERNEL void biasAddGelu(const T *x, const T *bias, T *out,
                                   BiasBroadcast shape, bool tanh,
                                   int64_t begin, int64_t end) {
  if (tanh)
    biasAddGeluImpl<T, true>(x, bias, out, shape, begin, end);
  else
    biasAddGeluImpl<T, false>(x, bias, out, shape, begin, end);
}

template <typename T>
FXMLIR_CPU_KERNEL void biasAddGeluGrad(const T *grad, const T *x, const T *bias,
                                       T *out, BiasBroadcast shape, bool tanh,
                                       int64_t begin, int64_t end) {
  if (tanh)
    biasAddGeluGradImpl<T, true>(grad, x, bias, out, shape, begin, end);
  else
    biasAddGeluGradImpl<T, false>(grad, x, bias, out, shape, begin, end);
}

template <typename T>
FXMLIR_CPU_KERNEL void biasAddMaskScale(const T *x, const T *bias,
                                        const bool *mask, T *out,
                                        BiasBroadcast shape, double scale,
                                        int64_t begin, int64_t end) {
  auto accScale = static_cast<AccType<T>>(scale);
  forEachBiasRun(bias, shape, begin, end, [=](int64_t i, AccType<T> b) {
    // Multiplying by the mask (not selecting) keeps eager's inf * 0 = NaN.
    out[i] = fromAcc<T>((toAcc(x[i]) + b) * AccType<T>(mask[i]) * accScale);
  });
}

#define FXMLIR_INSTANTIATE(T)                                                  \
  template void biasAdd<T>(const T *, const T *, T *, BiasBroadcast, int64_t,  \
                           int64_t);                                           \
  template void biasAddGelu<T>(const T *, const T *, T *, BiasBroadcast, bool, \
                               int64_t, int64_t);                              \
  template void biasAddGeluGrad<T>(const T *, const T *, const T *, T *,       \
                                   BiasBroadcast, bool, int64_t, int64_t);     \
  template void biasAddMaskScale<T>(const T *, const T *, const bool *, T *,   \
                                    BiasBroadcast, double, int64_t, int64_t);

FXMLIR_INSTANTIATE(float)
FXMLIR_INSTANTIATE(double)
FXMLIR_INSTANTIATE(Half)
FXMLIR_INSTANTIATE(BFloat16)
#undef FXMLIR_INSTANTIATE

} // namespace fxmlir::kernels::cpu
