//===- FusedOpsCUDA.cu - CUDA kernels of torch.ops.fxmlir -----------------===//
//
// Thin glue: check, make inputs contiguous, launch the torch-free kernels of
// kernels/cuda on the current stream.
//
//===----------------------------------------------------------------------===//

#include "../FusedOps.h"

#include "../../kernels/cpu/Philox.h"
#include "../../kernels/cuda/BiasKernels.cuh"
#include "../../kernels/cuda/RandomMask.cuh"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/PhiloxUtils.cuh>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <mutex>

namespace fxmlir::ops {
namespace {

namespace kcu = fxmlir::kernels::cuda;

/// The CUDA element type for a torch scalar type (same layout).
template <typename T> struct KernelType {
  using type = T;
};
template <> struct KernelType<at::Half> {
  using type = __half;
};
template <> struct KernelType<at::BFloat16> {
  using type = __nv_bfloat16;
};

template <typename T> const auto *in(const at::Tensor &t) {
  return reinterpret_cast<const typename KernelType<T>::type *>(
      t.const_data_ptr<T>());
}

template <typename T> auto *out(at::Tensor &t) {
  return reinterpret_cast<typename KernelType<T>::type *>(
      t.mutable_data_ptr<T>());
}

kcu::BiasBroadcast broadcastOf(const at::Tensor &x, int64_t axis) {
  BiasExtent extent = biasExtent(x, axis);
  return {x.numel(), extent.axisSize, extent.inner};
}

/// Seed and offset read on the device: under CUDA graph capture they come
/// from device memory the graph updates at each replay.
struct TorchPhiloxSource {
  at::PhiloxCudaState state;
  __device__ kcu::PhiloxSeedOffset operator()() const {
    auto [seed, offset] = at::cuda::philox::unpack(state);
    return {seed, offset};
  }
};

at::Tensor biasAddCUDA(const at::Tensor &x, const at::Tensor &bias,
                       int64_t axis) {
  axis = checkBias("bias_add", x, bias, axis);
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor xc = x.contiguous(), bc = bias.contiguous();
  at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, xc.scalar_type(), "bias_add", [&] {
        C10_CUDA_CHECK(kcu::launchBiasAdd(in<scalar_t>(xc), in<scalar_t>(bc),
                                          out<scalar_t>(result),
                                          broadcastOf(xc, axis), stream));
      });
  return result;
}

at::Tensor biasAddGeluCUDA(const at::Tensor &x, const at::Tensor &bias,
                           int64_t axis, c10::string_view approximate) {
  constexpr const char *op = "fused_bias_add_gelu";
  axis = checkBias(op, x, bias, axis);
  bool tanh = parseApproximate(op, approximate);
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor xc = x.contiguous(), bc = bias.contiguous();
  at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, xc.scalar_type(), op, [&] {
        C10_CUDA_CHECK(kcu::launchBiasAddGelu(
            in<scalar_t>(xc), in<scalar_t>(bc), out<scalar_t>(result),
            broadcastOf(xc, axis), tanh, stream));
      });
  return result;
}

at::Tensor biasAddGeluGradCUDA(const at::Tensor &grad, const at::Tensor &x,
                               const at::Tensor &bias, int64_t axis,
                               c10::string_view approximate) {
  constexpr const char *op = "fused_bias_add_gelu_grad";
  axis = checkBias(op, x, bias, axis);
  checkLikeX(op, "grad", grad, x, x.scalar_type());
  bool tanh = parseApproximate(op, approximate);
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor gc = grad.contiguous(), xc = x.contiguous(),
             bc = bias.contiguous();
  at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, xc.scalar_type(), op, [&] {
        C10_CUDA_CHECK(kcu::launchBiasAddGeluGrad(
            in<scalar_t>(gc), in<scalar_t>(xc), in<scalar_t>(bc),
            out<scalar_t>(result), broadcastOf(xc, axis), tanh, stream));
      });
  return result;
}

at::Tensor randomMaskLikeCUDA(const at::Tensor &like, double p) {
  checkDropProbability(p);
  c10::cuda::CUDAGuard guard(like.device());
  at::Tensor mask = at::empty_like(like, like.options().dtype(at::kBool),
                                   at::MemoryFormat::Contiguous);
  kcu::RandomMaskLaunch config;
  C10_CUDA_CHECK(kcu::randomMaskLaunchConfig(mask.numel(), config));
  at::PhiloxCudaState state;
  {
    auto *gen = at::get_generator_or_default<at::CUDAGeneratorImpl>(
        std::nullopt, at::cuda::detail::getDefaultCUDAGenerator());
    std::lock_guard<std::mutex> lock(gen->mutex_);
    state = gen->philox_cuda_state(config.philoxIncrement);
  }
  C10_CUDA_CHECK(kcu::launchRandomMask(
      mask.mutable_data_ptr<bool>(), mask.numel(), p, TorchPhiloxSource{state},
      config, c10::cuda::getCurrentCUDAStream()));
  return mask;
}

at::Tensor biasAddMaskScaleCUDA(const at::Tensor &x, const at::Tensor &bias,
                                const at::Tensor &mask, int64_t axis,
                                double scale) {
  constexpr const char *op = "fused_bias_add_mask_scale";
  axis = checkBias(op, x, bias, axis);
  checkLikeX(op, "mask", mask, x, at::kBool);
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor xc = x.contiguous(), bc = bias.contiguous(),
             mc = mask.contiguous();
  at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, xc.scalar_type(), op, [&] {
        C10_CUDA_CHECK(kcu::launchBiasAddMaskScale(
            in<scalar_t>(xc), in<scalar_t>(bc), mc.const_data_ptr<bool>(),
            out<scalar_t>(result), broadcastOf(xc, axis), scale, stream));
      });
  return result;
}

} // namespace
} // namespace fxmlir::ops

TORCH_LIBRARY_IMPL(fxmlir, CUDA, m) {
  using namespace fxmlir::ops;
  m.impl("bias_add", biasAddCUDA);
  m.impl("fused_bias_add_gelu", biasAddGeluCUDA);
  m.impl("fused_bias_add_gelu_grad", biasAddGeluGradCUDA);
  m.impl("random_mask_like", randomMaskLikeCUDA);
  m.impl("fused_bias_add_mask_scale", biasAddMaskScaleCUDA);
}
