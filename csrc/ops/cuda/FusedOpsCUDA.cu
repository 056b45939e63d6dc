//===- FusedOpsCUDA.cu - the CUDA kernels of torch.ops.fxmlir -------------===//
//
// The CUDA launcher: enqueues the torch-free kernels of kernels/cuda on the
// current stream, with torch's Philox state for random masks.
//
//===----------------------------------------------------------------------===//

#include "../FusedOps.h"

#include "../../kernels/cuda/BiasKernel.cuh"
#include "../../kernels/cuda/RandomMask.cuh"

#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/PhiloxUtils.cuh>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <mutex>

namespace fxmlir::ops {
namespace {

/// Seed and offset read on the device: under CUDA graph capture they come
/// from device memory the graph updates at each replay.
struct TorchPhiloxSource {
  at::PhiloxCudaState state;
  __device__ kernels::cuda::PhiloxSeedOffset operator()() const {
    auto [seed, offset] = at::cuda::philox::unpack(state);
    return {seed, offset};
  }
};

} // namespace

template <> struct Launcher<Device::CUDA> {
  template <typename T, typename Op, typename... Others>
  static void bias(Op op, const T *x, const T *bias, T *out,
                   kernels::BiasBroadcast shape, const Others *...others) {
    C10_CUDA_CHECK(kernels::cuda::launchBias(
        op, x, bias, out, shape, c10::cuda::getCurrentCUDAStream(), others...));
  }

  static void randomMask(bool *mask, int64_t numel, double p) {
    kernels::cuda::RandomMaskLaunch config;
    C10_CUDA_CHECK(kernels::cuda::randomMaskLaunchConfig(numel, config));
    at::PhiloxCudaState state;
    {
      auto *gen = at::get_generator_or_default<at::CUDAGeneratorImpl>(
          std::nullopt, at::cuda::detail::getDefaultCUDAGenerator());
      std::lock_guard<std::mutex> lock(gen->mutex_);
      state = gen->philox_cuda_state(config.philoxIncrement);
    }
    C10_CUDA_CHECK(kernels::cuda::launchRandomMask(
        mask, numel, p, TorchPhiloxSource{state}, config,
        c10::cuda::getCurrentCUDAStream()));
  }
};

} // namespace fxmlir::ops

#define FXMLIR_REGISTER_CUDA
#include "../FusedOpsRegistration.inc"
