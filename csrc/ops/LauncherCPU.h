//===- LauncherCPU.h - the CPU launcher of torch.ops.fxmlir -----*- C++ -*-===//
//
// Splits the element range across torch's threads and runs the torch-free
// kernels of kernels/cpu on each part. Included by the units that register
// the CPU kernels (FusedOpsCPU*.cpp), each for some op families.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_LAUNCHERCPU_H
#define FXMLIR_OPS_LAUNCHERCPU_H

#include "FusedOps.h"

#include "../kernels/common/Philox.h"
#include "../kernels/cpu/BiasKernel.h"
#include "../kernels/cpu/DropoutKernel.h"
#include "../kernels/cpu/RandomMask.h"
#include "../kernels/cpu/SoftmaxGradKernel.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>
#include <mutex>

namespace fxmlir::ops {

// Elements per task: GELU costs tens of flops per element, so chunks smaller
// than at::internal::GRAIN_SIZE still pay for the thread hand-off.
constexpr int64_t kGrain = 16384;

template <> struct Launcher<Device::CPU> {
  template <typename T, typename Op, typename... Others>
  static void bias(Op op, const T *x, const T *bias, T *out,
                   kernels::BiasBroadcast shape, const Others *...others) {
    at::parallel_for(0, shape.numel, kGrain, [&](int64_t begin, int64_t end) {
      kernels::cpu::biasKernel(op, x, bias, out, shape, begin, end, others...);
    });
  }

  static void randomMask(bool *mask, int64_t numel, double p) {
    uint64_t seed = drawSeed();
    at::parallel_for(0, numel, kGrain, [&](int64_t begin, int64_t end) {
      kernels::cpu::randomMask(mask, p, seed, begin, end);
    });
  }

  template <bool Packed, typename T, typename Op, typename... Residual>
  static void biasDropout(Op op, const T *x, const T *bias, T *out, void *mask,
                          kernels::BiasBroadcast shape, double p,
                          const Residual *...residual) {
    uint64_t seed = drawSeed();
    uint32_t threshold = kernels::keepThreshold16(p);
    // Split at mask bytes: threads never share one.
    int64_t bytes = (shape.numel + 7) / 8;
    at::parallel_for(0, bytes, kGrain / 8, [&](int64_t begin, int64_t end) {
      kernels::cpu::biasDropoutKernel<Packed>(
          op, x, bias, out, mask, shape, threshold, seed, begin * 8,
          std::min(end * 8, shape.numel), residual...);
    });
  }

  template <typename T>
  static void packedMaskScale(const T *grad, const uint8_t *mask, T *out,
                              int64_t numel, double scale) {
    // Split at mask bytes, as the kernel unpacks whole bytes.
    at::parallel_for(
        0, (numel + 7) / 8, kGrain / 8, [&](int64_t begin, int64_t end) {
          kernels::cpu::packedMaskScaleKernel(grad, mask, out, scale, begin * 8,
                                              std::min(end * 8, numel));
        });
  }

  /// No GEMM epilogue: a matrix product into `pre`, then one pass adds the
  /// bias in place and writes gelu(pre).
  static void linearGelu(const at::Tensor &x, const at::Tensor &weight,
                         const at::Tensor &bias, bool tanh, at::Tensor &pre,
                         at::Tensor &y) {
    at::mm_out(pre, x, weight.t());
    kernels::BiasBroadcast shape{pre.numel(), pre.size(1), 1};
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, pre.scalar_type(), "fused_linear_gelu", [&] {
          using T = KernelType<scalar_t>;
          auto *sum = static_cast<T *>(pre.mutable_data_ptr());
          const auto *b = static_cast<const T *>(bias.const_data_ptr());
          auto *out = static_cast<T *>(y.mutable_data_ptr());
          auto run = [&](auto gelu) {
            at::parallel_for(0, shape.numel, kGrain,
                             [&](int64_t begin, int64_t end) {
                               kernels::cpu::biasKernelKeepSum(
                                   kernels::Activate<decltype(gelu)>{}, sum, b,
                                   sum, out, shape, begin, end);
                             });
          };
          tanh ? run(kernels::Gelu<true>{}) : run(kernels::Gelu<false>{});
        });
  }

  /// ATen's vectorized copy per tensor: what grouping saves on a CPU is the
  /// Python call of each cast, not its loop.
  static void castTensors(at::TensorList from, at::TensorList to) {
    for (size_t i = 0; i < from.size(); ++i)
      to[i].copy_(from[i]);
  }

  static void weightBiasGrad(const at::Tensor &grad, const at::Tensor &x,
                             at::Tensor &gradWeight, at::Tensor &gradBias) {
    at::mm_out(gradWeight, grad.t(), x);
    at::sum_out(gradBias, grad, 0);
  }

  static void mmGeluGrad(const at::Tensor &a, const at::Tensor &b,
                         const at::Tensor &pre, bool tanh, at::Tensor &grad,
                         at::Tensor &gradBias) {
    at::gelu_backward_out(grad, at::mm(a, b), pre, tanh ? "tanh" : "none");
    at::sum_out(gradBias, grad, 0);
  }

  /// One block of the fused LM loss's forward: each row's running float32
  /// `max` and `sum` (contiguous) updated from the block's logits `z` (rows
  /// of unit column stride).
  static void logSumExpBlock(const at::Tensor &z, at::Tensor &max,
                             at::Tensor &sum) {
    int64_t columns = z.size(1);
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, z.scalar_type(), "log_sum_exp_block", [&] {
          using T = KernelType<scalar_t>;
          const auto *logits = static_cast<const T *>(z.const_data_ptr());
          forRowRanges(z, [&](int64_t begin, int64_t end) {
            kernels::cpu::logSumExpRows(logits, z.stride(0), columns,
                                        max.mutable_data_ptr<float>(),
                                        sum.mutable_data_ptr<float>(), begin,
                                        end);
          });
        });
  }

  /// One block of the fused LM loss's logit gradient (no bias): `g`
  /// [rows, columns] contiguous, from the block's logits `z` (rows of unit
  /// column stride), float32 `lse` and `scale`, int64 `target` per row, and
  /// the block's first column.
  static void softmaxGradBlock(const at::Tensor &z, const at::Tensor &lse,
                               const at::Tensor &scale,
                               const at::Tensor &target, int64_t first,
                               at::Tensor &g) {
    int64_t columns = g.size(1);
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, g.scalar_type(), "softmax_grad_block", [&] {
          using T = KernelType<scalar_t>;
          const auto *logits = static_cast<const T *>(z.const_data_ptr());
          auto *out = static_cast<T *>(g.mutable_data_ptr());
          forRowRanges(g, [&](int64_t begin, int64_t end) {
            kernels::cpu::softmaxGradRows(
                logits, z.stride(0), columns, lse.const_data_ptr<float>(),
                scale.const_data_ptr<float>(),
                target.const_data_ptr<int64_t>(), first, out, begin, end);
          });
        });
  }

private:
  /// Runs run(begin, end) over ranges of the rows of `block` [rows, columns]
  /// across torch's threads, about kGrain elements a task.
  template <typename Run>
  static void forRowRanges(const at::Tensor &block, const Run &run) {
    int64_t columns = std::max<int64_t>(block.size(1), 1);
    at::parallel_for(0, block.size(0), std::max<int64_t>(1, kGrain / columns),
                     run);
  }

  /// A seed from torch's CPU generator: each call draws a new stream.
  static uint64_t drawSeed() {
    auto *gen = at::get_generator_or_default<at::CPUGeneratorImpl>(
        std::nullopt, at::detail::getDefaultCPUGenerator());
    std::lock_guard<std::mutex> lock(gen->mutex_);
    return gen->random64();
  }
};

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_LAUNCHERCPU_H
