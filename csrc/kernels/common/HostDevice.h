//===- HostDevice.h - code compiled for the host and the GPU --------------===//
//
// The element functions of csrc/kernels/common are written once and compiled
// by the host compiler (CPU kernels) and by nvcc (CUDA kernels).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_COMMON_HOSTDEVICE_H
#define FXMLIR_KERNELS_COMMON_HOSTDEVICE_H

#if defined(__CUDACC__)
#define FXMLIR_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FXMLIR_HOST_DEVICE inline __attribute__((always_inline))
#endif

#endif // FXMLIR_KERNELS_COMMON_HOSTDEVICE_H
