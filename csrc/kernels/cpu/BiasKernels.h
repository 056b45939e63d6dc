//===- BiasKernels.h - Torch-free CPU kernels of the bias-add fusions -----===//
//
// Every kernel views x as [outer, axisSize, inner] (contiguous) and adds bias
// along the middle dimension: element i uses bias[(i / inner) % axisSize].
// Each call handles the flat element range [begin, end), so callers can split
// the work across threads at any boundary. Instantiated for float, double,
// Half and BFloat16; the 16-bit types compute in float.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_BIASKERNELS_H
#define FXMLIR_KERNELS_CPU_BIASKERNELS_H

#include "ElementTypes.h"

#include <cstdint>

namespace fxmlir::kernels::cpu {

struct BiasBroadcast {
  int64_t axisSize;
  int64_t inner;
};

/// out = x + bias.
template <typename T>
void biasAdd(const T *x, const T *bias, T *out, BiasBroadcast shape,
             int64_t begin, int64_t end);

/// out = gelu(x + bias); `tanh` selects the tanh approximation.
template <typename T>
void biasAddGelu(const T *x, const T *bias, T *out, BiasBroadcast shape,
                 bool tanh, int64_t begin, int64_t end);

/// out = grad * gelu'(x + bias).
template <typename T>
void biasAddGeluGrad(const T *grad, const T *x, const T *bias, T *out,
                     BiasBroadcast shape, bool tanh, int64_t begin,
                     int64_t end);

/// out = (x + bias) * mask * scale.
template <typename T>
void biasAddMaskScale(const T *x, const T *bias, const bool *mask, T *out,
                      BiasBroadcast shape, double scale, int64_t begin,
                      int64_t end);

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_BIASKERNELS_H
