//===- BiasKernel.cuh - the bias family's CUDA kernels --------------------===//
//
// out[i] = op(x[i] + bias[...], other[i]...), the contract of the CPU kernel,
// in packs of 16 bytes where the pointers allow it, with 32-bit indexing
// where the sizes fit, over a grid sized to the device. A bias along the
// last axis whose rows hold whole packs (a linear layer's output) takes the
// rows kernel: each thread keeps one column pack and its bias values in
// registers and walks down the rows, with no index arithmetic but a
// multiply-add per pack. Torch-free; instantiated by the glue for each op
// and element type, and enqueued on the caller's stream.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_BIASKERNEL_CUH
#define FXMLIR_KERNELS_CUDA_BIASKERNEL_CUH

#include "../common/BiasBroadcast.h"
#include "../common/ElementTypes.h"
#include "Grid.cuh"

#include <cuda/std/tuple>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace fxmlir::kernels::cuda {

constexpr int kBiasThreads = kThreads;

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

/// Elements [i, i + Vec) of the op, given their bias values.
template <int Vec, typename T, typename Index, typename Op, typename... Others>
__device__ __forceinline__ void biasPack(Op op, const T *x,
                                         const AccType<T> (&b)[Vec], T *out,
                                         Index i, const Others *...others) {
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

/// Any bias axis: packs over a grid stride; the numel % Vec tail elements go
/// to the first threads, one each.
template <int Vec, typename Index, typename T, typename Op, typename... Others>
__global__ void __launch_bounds__(kBiasThreads, kBlocksPerSm)
    biasKernel(Op op, const T *x, const T *bias, T *out, Index numel,
               Index axisSize, Index inner, const Others *...others) {
  Index thread = blockIdx.x * Index(blockDim.x) + threadIdx.x;
  Index stride = Index(gridDim.x) * blockDim.x;
  Index packs = numel / Vec;
  for (Index p = thread; p < packs; p += stride) {
    AccType<T> b[Vec];
    biasValues<Vec>(bias, p * Vec, axisSize, inner, b);
    biasPack<Vec>(op, x, b, out, p * Vec, others...);
  }
  Index tail = packs * Vec + thread;
  if (tail < numel) {
    AccType<T> b[1];
    biasValues<1>(bias, tail, axisSize, inner, b);
    biasPack<1>(op, x, b, out, tail, others...);
  }
}

/// Bias along the last axis, rows of `cols` elements, cols % Vec == 0: the
/// block's x threads take consecutive column packs, its y threads rows.
template <int Vec, typename Index, typename T, typename Op, typename... Others>
__global__ void __launch_bounds__(kBiasThreads, kBlocksPerSm)
    biasRowsKernel(Op op, const T *x, const T *bias, T *out, Index rows,
                   Index cols, const Others *...others) {
  Index col = (blockIdx.x * Index(blockDim.x) + threadIdx.x) * Vec;
  if (col >= cols)
    return;
  AccType<T> b[Vec];
#pragma unroll
  for (int k = 0; k < Vec; ++k)
    b[k] = loadBias(bias, col + k);
  Index rowStride = Index(gridDim.y) * blockDim.y;
  for (Index row = blockIdx.y * Index(blockDim.y) + threadIdx.y; row < rows;
       row += rowStride)
    biasPack<Vec>(op, x, b, out, row * cols + col, others...);
}

template <int Vec, typename Index, typename T, typename Op, typename... Others>
void launchBiasWith(Op op, const T *x, const T *bias, T *out,
                    BiasBroadcast shape, cudaStream_t stream, int smCount,
                    const Others *...others) {
  int64_t packs = std::max<int64_t>(shape.numel / Vec, 1);
  int64_t blocks = deviceBlocks(packs, smCount);
  biasKernel<Vec, Index><<<blocks, kBiasThreads, 0, stream>>>(
      op, x, bias, out, Index(shape.numel), Index(shape.axisSize),
      Index(shape.inner), others...);
}

template <int Vec, typename Index, typename T, typename Op, typename... Others>
void launchBiasRows(Op op, const T *x, const T *bias, T *out,
                    BiasBroadcast shape, cudaStream_t stream, int smCount,
                    const Others *...others) {
  int64_t cols = shape.axisSize, rows = shape.numel / cols;
  int64_t colPacks = cols / Vec;
  // Whole warps along the row, the rest of the block down the rows.
  int threadsX =
      int(std::min<int64_t>(kBiasThreads, (colPacks + 31) / 32 * 32));
  int threadsY = kBiasThreads / threadsX;
  int64_t blocksX = (colPacks + threadsX - 1) / threadsX;
  int64_t wave = int64_t(smCount) * kBlocksPerSm;
  int64_t blocksY =
      std::clamp<int64_t>(wave / blocksX, 1, (rows + threadsY - 1) / threadsY);
  dim3 grid(unsigned(blocksX), unsigned(std::min<int64_t>(blocksY, 65535)));
  biasRowsKernel<Vec, Index><<<grid, dim3(threadsX, threadsY), 0, stream>>>(
      op, x, bias, out, Index(rows), Index(cols), others...);
}

inline bool packAligned(const void *p, int bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

/// Enqueues the op on `stream` for a device of `smCount` multiprocessors;
/// returns cudaGetLastError().
template <typename T, typename Op, typename... Others>
cudaError_t launchBias(Op op, const T *x, const T *bias, T *out,
                       BiasBroadcast shape, cudaStream_t stream, int smCount,
                       const Others *...others) {
  if (shape.numel == 0)
    return cudaSuccess;
  constexpr int kVec = 16 / sizeof(T);
  // A pack of another input holds kVec of its elements.
  bool vectorize = packAligned(x, 16) && packAligned(out, 16) &&
                   (packAligned(others, kVec * sizeof(Others)) && ...);
  bool small = shape.numel <= INT32_MAX;
  bool rows =
      vectorize && shape.inner == 1 && shape.axisSize % kVec == 0 &&
      (shape.axisSize / kVec + kBiasThreads - 1) / kBiasThreads <= INT32_MAX;
  if (rows && small)
    launchBiasRows<kVec, uint32_t>(op, x, bias, out, shape, stream, smCount,
                                   others...);
  else if (rows)
    launchBiasRows<kVec, int64_t>(op, x, bias, out, shape, stream, smCount,
                                  others...);
  else if (vectorize && small)
    launchBiasWith<kVec, uint32_t>(op, x, bias, out, shape, stream, smCount,
                                   others...);
  else if (vectorize)
    launchBiasWith<kVec, int64_t>(op, x, bias, out, shape, stream, smCount,
                                  others...);
  else if (small)
    launchBiasWith<1, uint32_t>(op, x, bias, out, shape, stream, smCount,
                                others...);
  else
    launchBiasWith<1, int64_t>(op, x, bias, out, shape, stream, smCount,
                               others...);
  return cudaGetLastError();
}

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_BIASKERNEL_CUH
