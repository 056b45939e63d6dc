//===- FusedOpsCPU.cpp - the CPU kernels of torch.ops.fxmlir --------------===//
//
// The CPU launcher: splits the element range across torch's threads and
// runs the torch-free kernels of kernels/cpu on each part.
//
//===----------------------------------------------------------------------===//

#include "FusedOps.h"

#include "../kernels/cpu/BiasKernel.h"
#include "../kernels/cpu/RandomMask.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

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
    uint64_t seed = 0;
    {
      auto *gen = at::get_generator_or_default<at::CPUGeneratorImpl>(
          std::nullopt, at::detail::getDefaultCPUGenerator());
      std::lock_guard<std::mutex> lock(gen->mutex_);
      seed = gen->random64();
    }
    at::parallel_for(0, numel, kGrain, [&](int64_t begin, int64_t end) {
      kernels::cpu::randomMask(mask, p, seed, begin, end);
    });
  }
};

} // namespace fxmlir::ops

#define FXMLIR_REGISTER_CPU
#include "FusedOpsRegistration.inc"
