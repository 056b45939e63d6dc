//===- DropoutKernel.cuh - dropout drawing its own mask, CUDA -------------===//
//
// y = op(x + bias, keep[, residual]) with the keep flags drawn in the kernel,
// and the mask written for backward: packed (bit i % 8 of byte i / 8) or as
// bools. A thread takes 8 elements (one mask byte) per grid-stride
// iteration: two Philox blocks, 16-byte loads and stores where aligned.
// Counters as in RandomMask.cuh (key = seed, high half = thread, low half =
// offset / 4 + 2 * iteration + {0, 1}), so a launch consumes
// dropoutLaunch(...).philoxIncrement of the generator's offset. The seed
// and offset are read on the device (CUDA graph replays draw new masks).
// Torch-free; instantiated by the glue.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_DROPOUTKERNEL_CUH
#define FXMLIR_KERNELS_CUDA_DROPOUTKERNEL_CUH

#include "../common/Elementwise.h"
#include "BiasKernel.cuh"
#include "RandomMask.cuh"

#include <type_traits>

namespace fxmlir::kernels::cuda {

/// Elements per mask byte, and per thread and iteration.
constexpr int kMaskGroup = 8;

/// A mask byte's elements, accessed 16 bytes at a time.
template <typename T> struct alignas(16) Group {
  T v[kMaskGroup];
};

template <typename T>
__device__ __forceinline__ Group<T> loadGroup(const T *p, int64_t i) {
  return *reinterpret_cast<const Group<T> *>(p + i);
}

/// The grid of a dropout over `numel` elements: 2 Philox blocks per group.
inline PhiloxLaunch dropoutLaunch(int64_t numel, int smCount) {
  return philoxLaunch((numel + kMaskGroup - 1) / kMaskGroup, smCount, 2);
}

/// Whether 8-element groups of these tensors can be accessed 16 bytes at a
/// time.
template <typename... Ts> bool groupAligned(const Ts *...p) {
  return (packAligned(p, 16) && ...);
}

/// The bias values of group [i, i + 8): with RowBias (bias along the last
/// axis, rows of whole groups, 16-byte aligned bias) one modulo and 16-byte
/// loads, else biasValues' per-element walk.
template <bool RowBias, typename T, typename Index>
__device__ __forceinline__ void groupBias(const T *bias, Index i,
                                          Index axisSize, Index inner,
                                          AccType<T> (&b)[kMaskGroup]) {
  if constexpr (RowBias) {
    Group<T> values = loadGroup(bias, i % axisSize);
#pragma unroll
    for (int k = 0; k < kMaskGroup; ++k)
      b[k] = toAcc(values.v[k]);
  } else {
    biasValues<kMaskGroup>(bias, i, axisSize, inner, b);
  }
}

template <bool Aligned, bool RowBias, bool Packed, typename Index, typename T,
          typename Op, typename Source, typename... Residual>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    biasDropoutKernel(Op op, const T *x, const T *bias, T *out, void *mask,
                      Index numel, Index axisSize, Index inner,
                      uint32_t threshold, Source source,
                      const Residual *...residual) {
  PhiloxSeedOffset philox = source();
  Index thread = blockIdx.x * Index(blockDim.x) + threadIdx.x;
  Index stride = Index(gridDim.x) * blockDim.x;
  Index groups = (numel + kMaskGroup - 1) / kMaskGroup;
  uint64_t counter = philox.offset / 4;
  for (Index g = thread; g < groups; g += stride, counter += 2) {
    PhiloxBlock low = philox4x32(counter, thread, philox.seed);
    PhiloxBlock high = philox4x32(counter + 1, thread, philox.seed);
    uint32_t bits = keepBits(low, threshold) | keepBits(high, threshold) << 4;
    Index i = g * kMaskGroup;
    bool whole = i + kMaskGroup <= numel;
    if (Aligned && whole) {
      AccType<T> b[kMaskGroup];
      groupBias<RowBias>(bias, i, axisSize, inner, b);
      Group<T> in = loadGroup(x, i), result;
      ::cuda::std::tuple<Group<Residual>...> added{loadGroup(residual, i)...};
#pragma unroll
      for (int k = 0; k < kMaskGroup; ++k)
        result.v[k] = ::cuda::std::apply(
            [&](const auto &...groups) {
              return fromAcc<T>(op(toAcc(in.v[k]) + b[k], packedKeep(bits, k),
                                   toAcc(groups.v[k])...));
            },
            added);
      *reinterpret_cast<Group<T> *>(out + i) = result;
    } else {
      for (int k = 0; k < kMaskGroup && i + k < numel; ++k) {
        AccType<T> b[1];
        biasValues<1>(bias, i + k, axisSize, inner, b);
        out[i + k] = fromAcc<T>(op(toAcc(x[i + k]) + b[0], packedKeep(bits, k),
                                   toAcc(residual[i + k])...));
      }
    }
    if constexpr (Packed) {
      static_cast<uint8_t *>(mask)[g] = static_cast<uint8_t>(bits);
    } else if (whole) {
      // A fresh bool mask: groups are 8-byte aligned, one store each.
      *reinterpret_cast<uint64_t *>(static_cast<bool *>(mask) + i) =
          keepBytes(low, threshold) | uint64_t(keepBytes(high, threshold))
                                          << 32;
    } else {
      for (int k = 0; i + k < numel; ++k)
        static_cast<bool *>(mask)[i + k] = packedKeep(bits, k);
    }
  }
}

/// out[i] = grad[i] * keep_i * scale, keep_i from a packed mask.
template <bool Aligned, typename Index, typename T>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    packedMaskScaleKernel(const T *grad, const uint8_t *mask, T *out,
                          Index numel, MaskScale op) {
  Index thread = blockIdx.x * Index(blockDim.x) + threadIdx.x;
  Index stride = Index(gridDim.x) * blockDim.x;
  Index groups = (numel + kMaskGroup - 1) / kMaskGroup;
  for (Index g = thread; g < groups; g += stride) {
    uint32_t bits = mask[g];
    Index i = g * kMaskGroup;
    if (Aligned && i + kMaskGroup <= numel) {
      Group<T> in = loadGroup(grad, i), result;
#pragma unroll
      for (int k = 0; k < kMaskGroup; ++k)
        result.v[k] = fromAcc<T>(op(toAcc(in.v[k]), packedKeep(bits, k)));
      *reinterpret_cast<Group<T> *>(out + i) = result;
    } else {
      for (int k = 0; k < kMaskGroup && i + k < numel; ++k)
        out[i + k] = fromAcc<T>(op(toAcc(grad[i + k]), packedKeep(bits, k)));
    }
  }
}

template <bool Aligned, bool Packed, typename Index, typename T, typename Op,
          typename Source, typename... Residual>
void launchBiasDropoutWith(Op op, const T *x, const T *bias, T *out, void *mask,
                           BiasBroadcast shape, uint32_t threshold,
                           Source source, const PhiloxLaunch &config,
                           cudaStream_t stream, const Residual *...residual) {
  auto launch = [&](auto rowBias) {
    biasDropoutKernel<Aligned, decltype(rowBias)::value, Packed, Index>
        <<<config.blocks, config.threads, 0, stream>>>(
            op, x, bias, out, mask, Index(shape.numel), Index(shape.axisSize),
            Index(shape.inner), threshold, source, residual...);
  };
  if (Aligned && shape.inner == 1 && shape.axisSize % kMaskGroup == 0 &&
      groupAligned(bias))
    launch(std::true_type{});
  else
    launch(std::false_type{});
}

/// Enqueues the dropout on `stream` with the grid `config` (dropoutLaunch);
/// returns cudaGetLastError().
template <bool Packed, typename T, typename Op, typename Source,
          typename... Residual>
cudaError_t launchBiasDropout(Op op, const T *x, const T *bias, T *out,
                              void *mask, BiasBroadcast shape, double p,
                              Source source, const PhiloxLaunch &config,
                              cudaStream_t stream,
                              const Residual *...residual) {
  if (shape.numel == 0)
    return cudaSuccess;
  uint32_t threshold = keepThreshold(p);
  bool aligned = groupAligned(x, out, residual...);
  // Group starts up to numel + 7 must fit the index type.
  if (shape.numel <= INT32_MAX - kMaskGroup) {
    if (aligned)
      launchBiasDropoutWith<true, Packed, uint32_t>(
          op, x, bias, out, mask, shape, threshold, source, config, stream,
          residual...);
    else
      launchBiasDropoutWith<false, Packed, uint32_t>(
          op, x, bias, out, mask, shape, threshold, source, config, stream,
          residual...);
  } else if (aligned) {
    launchBiasDropoutWith<true, Packed, int64_t>(op, x, bias, out, mask, shape,
                                                 threshold, source, config,
                                                 stream, residual...);
  } else {
    launchBiasDropoutWith<false, Packed, int64_t>(op, x, bias, out, mask, shape,
                                                  threshold, source, config,
                                                  stream, residual...);
  }
  return cudaGetLastError();
}

/// Enqueues packed_mask_scale on `stream`; returns cudaGetLastError().
template <typename T>
cudaError_t launchPackedMaskScale(const T *grad, const uint8_t *mask, T *out,
                                  int64_t numel, double scale, int smCount,
                                  cudaStream_t stream) {
  if (numel == 0)
    return cudaSuccess;
  int64_t groups = (numel + kMaskGroup - 1) / kMaskGroup;
  int64_t blocks = deviceBlocks(groups, smCount);
  bool aligned = groupAligned(grad, out);
  MaskScale op{scale};
  if (numel <= INT32_MAX - kMaskGroup) {
    if (aligned)
      packedMaskScaleKernel<true, uint32_t><<<blocks, kThreads, 0, stream>>>(
          grad, mask, out, uint32_t(numel), op);
    else
      packedMaskScaleKernel<false, uint32_t><<<blocks, kThreads, 0, stream>>>(
          grad, mask, out, uint32_t(numel), op);
  } else if (aligned) {
    packedMaskScaleKernel<true, int64_t>
        <<<blocks, kThreads, 0, stream>>>(grad, mask, out, numel, op);
  } else {
    packedMaskScaleKernel<false, int64_t>
        <<<blocks, kThreads, 0, stream>>>(grad, mask, out, numel, op);
  }
  return cudaGetLastError();
}

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_DROPOUTKERNEL_CUH
