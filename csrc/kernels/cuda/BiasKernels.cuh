//===- BiasKernels.cuh - Torch-free CUDA kernels of the bias-add fusions --===//
//
// Same contract as the CPU kernels: x is a contiguous [outer, axisSize, inner]
// tensor and element i uses bias[(i / inner) % axisSize]. T is float, double,
// __half or __nv_bfloat16; 16-bit types compute in float. Each launcher
// enqueues one kernel on `stream` and returns cudaGetLastError().
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_BIASKERNELS_CUH
#define FXMLIR_KERNELS_CUDA_BIASKERNELS_CUH

#include <cuda_runtime_api.h>

#include <cstdint>

namespace fxmlir::kernels::cuda {

struct BiasBroadcast {
  int64_t numel;
  int64_t axisSize;
  int64_t inner;
};

/// out = x + bias.
template <typename T>
cudaError_t launchBiasAdd(const T *x, const T *bias, T *out,
                          BiasBroadcast shape, cudaStream_t stream);

/// out = gelu(x + bias); `tanh` selects the tanh approximation.
template <typename T>
cudaError_t launchBiasAddGelu(const T *x, const T *bias, T *out,
                              BiasBroadcast shape, bool tanh,
                              cudaStream_t stream);

/// out = grad * gelu'(x + bias).
template <typename T>
cudaError_t launchBiasAddGeluGrad(const T *grad, const T *x, const T *bias,
                                  T *out, BiasBroadcast shape, bool tanh,
                                  cudaStream_t stream);

/// out = (x + bias) * mask * scale.
template <typename T>
cudaError_t launchBiasAddMaskScale(const T *x, const T *bias, const bool *mask,
                                   T *out, BiasBroadcast shape, double scale,
                                   cudaStream_t stream);

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_BIASKERNELS_CUH
