//===- FusedOpsCPU.cpp - CPU kernels of torch.ops.fxmlir ------------------===//
//
// Thin glue: check, make inputs contiguous, split the element range with
// at::parallel_for and run the torch-free kernels of kernels/cpu.
//
//===----------------------------------------------------------------------===//

#include "FusedOps.h"

#include "../kernels/cpu/BiasKernels.h"
#include "../kernels/cpu/RandomMask.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <mutex>

namespace fxmlir::ops {
namespace {

namespace kc = fxmlir::kernels::cpu;

// Elements per task: GELU costs tens of flops per element, so chunks smaller
// than at::internal::GRAIN_SIZE still pay for the thread hand-off.
constexpr int64_t kGrain = 16384;

/// The kernel element type for a torch scalar type (same layout).
template <typename T> struct KernelType {
  using type = T;
};
template <> struct KernelType<at::Half> {
  using type = kc::Half;
};
template <> struct KernelType<at::BFloat16> {
  using type = kc::BFloat16;
};

template <typename T> const auto *in(const at::Tensor &t) {
  return reinterpret_cast<const typename KernelType<T>::type *>(
      t.const_data_ptr<T>());
}

template <typename T> auto *out(at::Tensor &t) {
  return reinterpret_cast<typename KernelType<T>::type *>(
      t.mutable_data_ptr<T>());
}

kc::BiasBroadcast broadcastOf(const at::Tensor &x, int64_t axis) {
  BiasExtent extent = biasExtent(x, axis);
  return {extent.axisSize, extent.inner};
}

template <typename Kernel>
void parallelOver(const at::Tensor &result, const Kernel &kernel) {
  at::parallel_for(0, result.numel(), kGrain, kernel);
}

at::Tensor biasAddCPU(const at::Tensor &x, const at::Tensor &bias,
                      int64_t axis) {
  axis = checkBias("bias_add", x, bias, axis);
  at::Tensor xc = x.contiguous(), bc = bias.contiguous();
  at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
  kc::BiasBroadcast shape = broadcastOf(xc, axis);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, xc.scalar_type(), "bias_add", [&] {
        parallelOver(result, [&](int64_t begin, int64_t end) {
          kc::biasAdd(in<scalar_t>(xc), in<scalar_t>(bc), out<scalar_t>(result),
                      shape, begin, end);
        });
      });
  return result;
}

at::Tensor biasAddGeluCPU(const at::Tensor &x, const at::Tensor &bias,
                          int64_t axis, c10::string_view approximate) {
  constexpr const char *op = "fused_bias_add_gelu";
  axis = checkBias(op, x, bias, axis);
  bool tanh = parseApproximate(op, approximate);
  at::Tensor xc = x.contiguous(), bc = bias.contiguous();
  at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
  kc::BiasBroadcast shape = broadcastOf(xc, axis);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, xc.scalar_type(), op, [&] {
        parallelOver(result, [&](int64_t begin, int64_t end) {
          kc::biasAddGelu(in<scalar_t>(xc), in<scalar_t>(bc),
                          out<scalar_t>(result), shape, tanh, begin, end);
        });
      });
  return result;
}

at::Tensor biasAddGeluGradCPU(const at::Tensor &grad, const at::Tensor &x,
                              const at::Tensor &bias, int64_t axis,
                              c10::string_view approximate) {
  constexpr const char *op = "fused_bias_add_gelu_grad";
  axis = checkBias(op, x, bias, axis);
  checkLikeX(op, "grad", grad, x, x.scalar_type());
  bool tanh = parseApproximate(op, approximate);
  at::Tensor gc = grad.contiguous(), xc = x.contiguous(),
             bc = bias.contiguous();
  at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
  kc::BiasBroadcast shape = broadcastOf(xc, axis);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, xc.scalar_type(), op, [&] {
        parallelOver(result, [&](int64_t begin, int64_t end) {
          kc::biasAddGeluGrad(in<scalar_t>(gc), in<scalar_t>(xc),
                              in<scalar_t>(bc), out<scalar_t>(result), shape,
                              tanh, begin, end);
        });
      });
  return result;
}

at::Tensor randomMaskLikeCPU(const at::Tensor &like, double p) {
  checkDropProbability(p);
  at::Tensor mask = at::empty_like(like, like.options().dtype(at::kBool),
                                   at::MemoryFormat::Contiguous);
  uint64_t seed = 0;
  {
    auto *gen = at::get_generator_or_default<at::CPUGeneratorImpl>(
        std::nullopt, at::detail::getDefaultCPUGenerator());
    std::lock_guard<std::mutex> lock(gen->mutex_);
    seed = gen->random64();
  }
  bool *data = mask.mutable_data_ptr<bool>();
  parallelOver(mask, [&](int64_t begin, int64_t end) {
    kc::randomMask(data, p, seed, begin, end);
  });
  return mask;
}

at::Tensor biasAddMaskScaleCPU(const at::Tensor &x, const at::Tensor &bias,
                               const at::Tensor &mask, int64_t axis,
                               double scale) {
  constexpr const char *op = "fused_bias_add_mask_scale";
  axis = checkBias(op, x, bias, axis);
  checkLikeX(op, "mask", mask, x, at::kBool);
  at::Tensor xc = x.contiguous(), bc = bias.contiguous(),
             mc = mask.contiguous();
  at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
  kc::BiasBroadcast shape = broadcastOf(xc, axis);
  const bool *keep = mc.const_data_ptr<bool>();
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, xc.scalar_type(), op, [&] {
        parallelOver(result, [&](int64_t begin, int64_t end) {
          kc::biasAddMaskScale(in<scalar_t>(xc), in<scalar_t>(bc), keep,
                               out<scalar_t>(result), shape, scale, begin, end);
        });
      });
  return result;
}

} // namespace
} // namespace fxmlir::ops

TORCH_LIBRARY_IMPL(fxmlir, CPU, m) {
  using namespace fxmlir::ops;
  m.impl("bias_add", biasAddCPU);
  m.impl("fused_bias_add_gelu", biasAddGeluCPU);
  m.impl("fused_bias_add_gelu_grad", biasAddGeluGradCPU);
  m.impl("random_mask_like", randomMaskLikeCPU);
  m.impl("fused_bias_add_mask_scale", biasAddMaskScaleCPU);
}
