//===- BiasKernel.cuh - the bias family's CUDA kernel ---------------------===//
//
// out[i] = op(x[i] + bias[...], other[i]...), the contract of the CPU kernel,
// over a grid stride in packs of 16 bytes where the pointers allow it, with
// 32-bit indexing where the sizes fit (cheaper divisions). Torch-free;
// instantiated by the glue for each op and element type, and enqueued on
// the caller's stream.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_BIASKERNEL_CUH
#define FXMLIR_KERNELS_CUDA_BIASKERNEL_CUH

#include "../common/BiasBroadcast.h"
#include "../common/ElementTypes.h"

#include <cuda/std/tuple>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace fxmlir::kernels::cuda {

constexpr int kBiasThreads = 256;
// Enough blocks to fill any current GPU; larger inputs use the grid stride.
constexpr int64_t kMaxBiasBlocks = 1 << 16;

/// Vec consecutive elements, loaded and stored as one aligned access.
template <typename T, int Vec> struct alignas(sizeof(T) * Vec) Pack {
  T v[Vec];
};

template <int Vec, typename T>
__device__ __forceinline__ Pack<T, Vec> load(const T *p, int64_t i) {
  return *reinterpret_cast<const Pack<T, Vec> *>(p + i);
}

/// bias[i] through the read-only data cache (16-bit types as their bits).
template <typename T>
__device__ __forceinline__ AccType<T> loadBias(const T *bias, int64_t i) {
  if constexpr (sizeof(T) == 2)
    return toAcc(T{__ldg(reinterpret_cast<const uint16_t *>(bias) + i)});
  else
    return toAcc(__ldg(bias + i));
}

/// The bias values of elements [i, i + Vec): one division per pack, then the
/// (column, bias index) pair is stepped.
template <int Vec, typename T, typename Index>
__device__ __forceinline__ void biasValues(const T *bias, Index i,
                                           Index axisSize, Index inner,
                                           AccType<T> (&b)[Vec]) {
  Index row = i / inner;
  Index col = i - row * inner;
  Index index = row % axisSize;
#pragma unroll
  for (int k = 0; k < Vec; ++k) {
    b[k] = loadBias(bias, index);
    if (++col == inner) {
      col = 0;
      index = index + 1 == axisSize ? 0 : index + 1;
    }
  }
}

/// Elements [i, i + Vec) of the op.
template <int Vec, typename T, typename Index, typename Op, typename... Others>
__device__ __forceinline__ void biasPack(Op op, const T *x, const T *bias,
                                         T *out, Index i, Index axisSize,
                                         Index inner, const Others *...others) {
  AccType<T> b[Vec];
  biasValues<Vec>(bias, i, axisSize, inner, b);
  Pack<T, Vec> in = load<Vec>(x, i), result;
  ::cuda::std::tuple<Pack<Others, Vec>...> loaded{load<Vec>(others, i)...};
#pragma unroll
  for (int k = 0; k < Vec; ++k)
    result.v[k] = ::cuda::std::apply(
        [&](const auto &...packs) {
          return fromAcc<T>(op(toAcc(in.v[k]) + b[k], toAcc(packs.v[k])...));
        },
        loaded);
  *reinterpret_cast<Pack<T, Vec> *>(out + i) = result;
}

/// Packs over a grid stride; the numel % Vec tail elements go to the first
/// threads, one each.
template <int Vec, typename Index, typename T, typename Op, typename... Others>
__global__ void __launch_bounds__(kBiasThreads)
    biasKernel(Op op, const T *x, const T *bias, T *out, Index numel,
               Index axisSize, Index inner, const Others *...others) {
  Index thread = blockIdx.x * Index(blockDim.x) + threadIdx.x;
  Index stride = Index(gridDim.x) * blockDim.x;
  Index packs = numel / Vec;
  for (Index p = thread; p < packs; p += stride)
    biasPack<Vec>(op, x, bias, out, p * Vec, axisSize, inner, others...);
  Index tail = packs * Vec + thread;
  if (tail < numel)
    biasPack<1>(op, x, bias, out, tail, axisSize, inner, others...);
}

template <int Vec, typename Index, typename T, typename Op, typename... Others>
void launchBiasWith(Op op, const T *x, const T *bias, T *out,
                    BiasBroadcast shape, cudaStream_t stream,
                    const Others *...others) {
  int64_t packs = std::max<int64_t>(shape.numel / Vec, 1);
  int64_t blocks =
      std::min((packs + kBiasThreads - 1) / kBiasThreads, kMaxBiasBlocks);
  biasKernel<Vec, Index><<<blocks, kBiasThreads, 0, stream>>>(
      op, x, bias, out, Index(shape.numel), Index(shape.axisSize),
      Index(shape.inner), others...);
}

inline bool packAligned(const void *p, int bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

/// Enqueues the op on `stream`; returns cudaGetLastError().
template <typename T, typename Op, typename... Others>
cudaError_t launchBias(Op op, const T *x, const T *bias, T *out,
                       BiasBroadcast shape, cudaStream_t stream,
                       const Others *...others) {
  if (shape.numel == 0)
    return cudaSuccess;
  constexpr int kVec = 16 / sizeof(T);
  // A pack of another input holds kVec of its elements.
  bool vectorize = packAligned(x, 16) && packAligned(out, 16) &&
                   (packAligned(others, kVec * sizeof(Others)) && ...);
  bool small = shape.numel <= INT32_MAX;
  if (vectorize && small)
    launchBiasWith<kVec, uint32_t>(op, x, bias, out, shape, stream, others...);
  else if (vectorize)
    launchBiasWith<kVec, int64_t>(op, x, bias, out, shape, stream, others...);
  else if (small)
    launchBiasWith<1, uint32_t>(op, x, bias, out, shape, stream, others...);
  else
    launchBiasWith<1, int64_t>(op, x, bias, out, shape, stream, others...);
  return cudaGetLastError();
}

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_BIASKERNEL_CUH
