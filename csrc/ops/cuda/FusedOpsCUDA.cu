//===- FusedOpsCUDA.cu - the CUDA kernels of torch.ops.fxmlir -------------===//
//
// The CUDA launcher: enqueues the torch-free kernels of kernels/cuda on the
// current stream, with torch's Philox state for random masks and torch's
// cuBLASLt handle and workspace for matmul epilogues.
//
//===----------------------------------------------------------------------===//

#include "../FusedOps.h"

#include "../../kernels/cuda/BiasKernel.cuh"
#include "../../kernels/cuda/CastKernel.cuh"
#include "../../kernels/cuda/DropoutKernel.cuh"
#include "../../kernels/cuda/LtMatmul.cuh"
#include "../../kernels/cuda/RandomMask.cuh"
#include "../../kernels/cuda/SoftmaxGradKernel.cuh"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/PhiloxUtils.cuh>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <map>
#include <mutex>

namespace fxmlir::ops {
namespace {

namespace cuda = kernels::cuda;

/// Seed and offset read on the device: under CUDA graph capture they come
/// from device memory the graph updates at each replay.
struct TorchPhiloxSource {
  at::PhiloxCudaState state;
  __device__ cuda::PhiloxSeedOffset operator()() const {
    auto [seed, offset] = at::cuda::philox::unpack(state);
    return {seed, offset};
  }
};

/// Reserves `increment` of the default CUDA generator's offset.
TorchPhiloxSource reservePhilox(uint64_t increment) {
  auto *gen = at::get_generator_or_default<at::CUDAGeneratorImpl>(
      std::nullopt, at::cuda::detail::getDefaultCUDAGenerator());
  std::lock_guard<std::mutex> lock(gen->mutex_);
  return {gen->philox_cuda_state(increment)};
}

int smCount() {
  return at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
}

cuda::LtContext ltContext() {
  return {at::cuda::getCurrentCUDABlasLtHandle(),
          c10::cuda::getCurrentCUDAStream(), at::cuda::getCUDABlasLtWorkspace(),
          at::cuda::getCUDABlasLtWorkspaceSize()};
}

/// cuBLASLt's data and compute types for a tensor's dtype: float32 follows
/// torch's TF32 setting for matmuls; float64 is left to ATen.
struct LtTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

std::optional<LtTypes> ltTypes(at::ScalarType dtype) {
  switch (dtype) {
  case at::kFloat:
    return LtTypes{CUDA_R_32F, at::globalContext().allowTF32CuBLAS()
                                   ? CUBLAS_COMPUTE_32F_FAST_TF32
                                   : CUBLAS_COMPUTE_32F};
  case at::kHalf:
    return LtTypes{CUDA_R_16F, CUBLAS_COMPUTE_32F};
  case at::kBFloat16:
    return LtTypes{CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  default:
    return std::nullopt;
  }
}

/// A 2-D tensor as a cuBLASLt operand op(M) equal to the tensor (or, with
/// `transpose`, to its transpose). A row-major tensor's memory is its
/// transpose in column-major terms, a transposed view of a row-major one is
/// itself; other strides have no operand.
std::optional<cuda::LtOperand> ltOperand(const at::Tensor &m, bool transpose) {
  int64_t rows = m.size(0), cols = m.size(1);
  if (m.stride(1) == 1 && m.stride(0) >= std::max<int64_t>(cols, 1))
    return cuda::LtOperand{m.const_data_ptr(), uint64_t(cols), uint64_t(rows),
                           m.stride(0), !transpose};
  if (m.stride(0) == 1 && m.stride(1) >= std::max<int64_t>(rows, 1))
    return cuda::LtOperand{m.const_data_ptr(), uint64_t(rows), uint64_t(cols),
                           m.stride(1), transpose};
  return std::nullopt;
}

/// d (m x n column-major, leading dimension ldd) = op(a) op(b) with the
/// epilogue, on torch's stream. False where cuBLASLt has no algorithm for it
/// (the caller falls back to unfused ops), an error for anything else.
bool ltMatmul(const char *op, LtTypes types, const cuda::LtOperand &a,
              const cuda::LtOperand &b, void *d, int64_t ldd, int64_t m,
              int64_t n, const cuda::LtEpilogue &epilogue) {
  cublasStatus_t status =
      cuda::ltMatmul(ltContext(), types.data, types.compute, a, b, d, ldd,
                     uint64_t(m), uint64_t(n), epilogue);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED)
    return false;
  TORCH_CHECK(status == CUBLAS_STATUS_SUCCESS, op,
              ": cublasLtMatmul failed: ", cublasGetStatusString(status));
  return true;
}

/// The types castBatchKernel is instantiated for.
bool isBatchedCastType(at::ScalarType type) {
  return type == at::kFloat || type == at::kBFloat16 || type == at::kHalf;
}

/// f(T{}) with the kernel type of `type`, one of isBatchedCastType's.
template <typename F> void withCastType(at::ScalarType type, F f) {
  switch (type) {
  case at::kFloat:
    return f(float{});
  case at::kBFloat16:
    return f(kernels::BFloat16{});
  default:
    return f(kernels::Half{});
  }
}

void launchCastBatch(at::ScalarType from, at::ScalarType to,
                     const cuda::CastBatch &batch) {
  withCastType(from, [&](auto fromType) {
    withCastType(to, [&](auto toType) {
      using From = decltype(fromType);
      using To = decltype(toType);
      cudaError_t status = cuda::launchCastBatch<From, To>(
          batch, c10::cuda::getCurrentCUDAStream());
      C10_CUDA_CHECK(status);
    });
  });
}

} // namespace

template <> struct Launcher<Device::CUDA> {
  template <typename T, typename Op, typename... Others>
  static void bias(Op op, const T *x, const T *bias, T *out,
                   kernels::BiasBroadcast shape, const Others *...others) {
    C10_CUDA_CHECK(cuda::launchBias(op, x, bias, out, shape,
                                    c10::cuda::getCurrentCUDAStream(),
                                    smCount(), others...));
  }

  static void randomMask(bool *mask, int64_t numel, double p) {
    cuda::PhiloxLaunch config = cuda::randomMaskLaunch(numel, smCount());
    C10_CUDA_CHECK(cuda::launchRandomMask(
        mask, numel, p, reservePhilox(config.philoxIncrement), config,
        c10::cuda::getCurrentCUDAStream()));
  }

  template <bool Packed, typename T, typename Op, typename... Residual>
  static void biasDropout(Op op, const T *x, const T *bias, T *out, void *mask,
                          kernels::BiasBroadcast shape, double p,
                          const Residual *...residual) {
    cuda::PhiloxLaunch config = cuda::dropoutLaunch(shape.numel, smCount());
    C10_CUDA_CHECK(cuda::launchBiasDropout<Packed>(
        op, x, bias, out, mask, shape, p, reservePhilox(config.philoxIncrement),
        config, c10::cuda::getCurrentCUDAStream(), residual...));
  }

  template <typename T>
  static void packedMaskScale(const T *grad, const uint8_t *mask, T *out,
                              int64_t numel, double scale) {
    C10_CUDA_CHECK(
        cuda::launchPackedMaskScale(grad, mask, out, numel, scale, smCount(),
                                    c10::cuda::getCurrentCUDAStream()));
  }

  /// With tanh, one cuBLASLt matmul whose GELU_AUX_BIAS epilogue writes y
  /// and pre (cuBLASLt's GELU is the tanh form); else, or where cuBLASLt has
  /// no algorithm, addmm (the bias in cuBLAS's epilogue) and gelu.
  static void linearGelu(const at::Tensor &x, const at::Tensor &weight,
                         const at::Tensor &bias, bool tanh, at::Tensor &pre,
                         at::Tensor &y) {
    int64_t m = x.size(0), k = x.size(1), n = weight.size(0);
    // Column-major: y^T (n x m) = weight (n x k) @ x^T (k x m).
    auto types = ltTypes(x.scalar_type());
    std::optional<cuda::LtOperand> a = ltOperand(weight, false);
    // The aux (pre) leading dimension must be a multiple of 8.
    if (tanh && types && a && k > 0 && n % 8 == 0) {
      cuda::LtEpilogue epilogue{CUBLASLT_EPILOGUE_GELU_AUX_BIAS,
                                bias.const_data_ptr(), pre.mutable_data_ptr(),
                                n};
      if (ltMatmul("fused_linear_gelu", *types, *a, *ltOperand(x, true),
                   y.mutable_data_ptr(), n, n, m, epilogue))
        return;
    }
    at::addmm_out(pre, bias, x, weight.t());
    at::gelu_out(y, pre, tanh ? "tanh" : "none");
  }

  /// With tanh, grad^T = gelu'(pre^T) * (b^T @ a^T) (column-major N x M) in
  /// one cuBLASLt matmul whose DGELU_BGRAD epilogue also sums the bias
  /// gradient (cuBLASLt's GELU gradient is the tanh form's); else mm, then
  /// gelu_backward and sum.
  static void mmGeluGrad(const at::Tensor &a, const at::Tensor &b,
                         const at::Tensor &pre, bool tanh, at::Tensor &grad,
                         at::Tensor &gradBias) {
    int64_t m = a.size(0), j = a.size(1), n = b.size(1);
    auto types = ltTypes(a.scalar_type());
    // Column-major: grad^T (n x m) = b^T (n x j) @ a^T (j x m).
    std::optional<cuda::LtOperand> opA = ltOperand(b, true);
    if (tanh && types && opA && m > 0 && j > 0 && n % 8 == 0) {
      cuda::LtEpilogue epilogue{CUBLASLT_EPILOGUE_DGELU_BGRAD,
                                gradBias.mutable_data_ptr(),
                                const_cast<void *>(pre.const_data_ptr()), n};
      if (ltMatmul("fused_linear_gelu_grad_mm", *types, *opA,
                   *ltOperand(a, true), grad.mutable_data_ptr(), n, n, m,
                   epilogue))
        return;
    }
    at::gelu_backward_out(grad, at::mm(a, b), pre, tanh ? "tanh" : "none");
    at::sum_out(gradBias, grad, 0);
  }

  /// grad_weight = grad^T @ x with the bias gradient from the same matmul
  /// (BGRADB: the column sums of its B operand, grad); else mm and sum.
  static void weightBiasGrad(const at::Tensor &grad, const at::Tensor &x,
                             at::Tensor &gradWeight, at::Tensor &gradBias) {
    int64_t m = grad.size(0), n = grad.size(1), k = x.size(1);
    auto types = ltTypes(grad.scalar_type());
    if (types && m > 0 && n > 0 && k > 0) {
      // Column-major: grad_weight^T (k x n) = x^T (k x m) @ grad (m x n).
      cuda::LtEpilogue epilogue{CUBLASLT_EPILOGUE_BGRADB,
                                gradBias.mutable_data_ptr()};
      if (ltMatmul("linear_weight_bias_grad", *types, *ltOperand(x, true),
                   *ltOperand(grad, false), gradWeight.mutable_data_ptr(), k, k,
                   n, epilogue))
        return;
    }
    at::mm_out(gradWeight, grad.t(), x);
    at::sum_out(gradBias, grad, 0);
  }

  /// Dense tensors of float types, laid out as their results: one launch
  /// per source and destination type (and kCastBatch tensors); any other
  /// tensor, ATen's copy.
  static void castTensors(at::TensorList from, at::TensorList to) {
    std::map<std::pair<at::ScalarType, at::ScalarType>, cuda::CastBatch>
        batches;
    for (size_t i = 0; i < from.size(); ++i) {
      at::ScalarType fromType = from[i].scalar_type(),
                     toType = to[i].scalar_type();
      bool batched = isBatchedCastType(fromType) &&
                     isBatchedCastType(toType) &&
                     from[i].is_non_overlapping_and_dense() &&
                     from[i].strides() == to[i].strides();
      if (!batched) {
        to[i].copy_(from[i]);
        continue;
      }
      if (from[i].numel() == 0)
        continue;
      cuda::CastBatch &batch = batches[{fromType, toType}];
      cuda::addToBatch(batch, from[i].const_data_ptr(),
                       to[i].mutable_data_ptr(), from[i].numel());
      if (batch.count == cuda::kCastBatch) {
        launchCastBatch(fromType, toType, batch);
        batch = cuda::CastBatch();
      }
    }
    for (auto &[types, batch] : batches)
      if (batch.count > 0)
        launchCastBatch(types.first, types.second, batch);
  }

  /// One block of the fused LM loss's forward: each row's running float32
  /// `max` and `sum` (contiguous) updated from the block's logits `z` (rows
  /// of unit column stride).
  static void logSumExpBlock(const at::Tensor &z, at::Tensor &max,
                             at::Tensor &sum) {
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, z.scalar_type(), "log_sum_exp_block", [&] {
          using T = KernelType<scalar_t>;
          C10_CUDA_CHECK(cuda::launchLogSumExpRows(
              static_cast<const T *>(z.const_data_ptr()), z.stride(0),
              z.size(1), max.mutable_data_ptr<float>(),
              sum.mutable_data_ptr<float>(), z.size(0), smCount(),
              c10::cuda::getCurrentCUDAStream()));
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
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, g.scalar_type(), "softmax_grad_block", [&] {
          using T = KernelType<scalar_t>;
          C10_CUDA_CHECK(cuda::launchSoftmaxGradRows(
              static_cast<const T *>(z.const_data_ptr()), z.stride(0),
              g.size(1), lse.const_data_ptr<float>(),
              scale.const_data_ptr<float>(), target.const_data_ptr<int64_t>(),
              first, static_cast<T *>(g.mutable_data_ptr()), g.size(0),
              smCount(), c10::cuda::getCurrentCUDAStream()));
        });
  }
};

} // namespace fxmlir::ops

#include "FusedOpsCUDARegistration.inc"
