//===- SoftmaxGradKernel.cuh - the fused LM loss's blocks, CUDA -----------===//
//
// The CUDA twin of kernels/cpu/SoftmaxGradKernel.h: one block of vocabulary
// columns of the fused linear + cross-entropy, read once from the block's
// logits z in T (the product's dtype), computed in float. Forward: each
// row's running max and sum of exponentials (online over blocks). Backward:
//   g[r][c] = (exp(z[r][c] - lse[r]) - (c == target[r] - first)) * scale[r]
// stored in T. A thread block takes a row at a time (the rows are thousands
// of columns), its threads striding along the row so that each warp's loads
// are contiguous. Torch-free; instantiated by the CUDA launcher.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_SOFTMAXGRADKERNEL_CUH
#define FXMLIR_KERNELS_CUDA_SOFTMAXGRADKERNEL_CUH

#include "../common/ElementTypes.h"
#include "../common/Math.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace fxmlir::kernels::cuda {

constexpr int kRowThreads = 256;
/// Row blocks resident on a multiprocessor (2048 threads).
constexpr int kRowBlocksPerSm = 8;

/// A running maximum and the sum of exponentials relative to it.
struct MaxSum {
  float max;
  float sum;
};

/// The pair for the union of two sets of values: each sum rescaled to the
/// larger maximum. Two empty sets (maxima -inf) stay empty, not NaN.
__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  float max = fmaxf(a.max, b.max);
  if (max == -INFINITY)
    return {max, 0.0f};
  return {max, a.sum * expAcc(a.max - max) + b.sum * expAcc(b.max - max)};
}

/// The pair of all the block's threads, in thread 0 (`warps` holds one pair
/// per warp).
__device__ __forceinline__ MaxSum blockCombine(MaxSum own, MaxSum *warps) {
  for (int offset = 16; offset > 0; offset /= 2)
    own = combine(own, {__shfl_xor_sync(0xffffffffu, own.max, offset),
                        __shfl_xor_sync(0xffffffffu, own.sum, offset)});
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    warps[warp] = own;
  __syncthreads();
  if (warp == 0) {
    own = lane < kRowThreads / 32 ? warps[lane] : MaxSum{-INFINITY, 0.0f};
    for (int offset = 16; offset > 0; offset /= 2)
      own = combine(own, {__shfl_xor_sync(0xffffffffu, own.max, offset),
                          __shfl_xor_sync(0xffffffffu, own.sum, offset)});
  }
  __syncthreads(); // `warps` is free for the next row
  return own;
}

template <typename T>
__global__ void __launch_bounds__(kRowThreads, kRowBlocksPerSm)
    logSumExpRowsKernel(const T *z, int64_t zRowStride, int64_t columns,
                        float *max, float *sum, int64_t rows) {
  __shared__ MaxSum warps[kRowThreads / 32];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *zRow = z + r * zRowStride;
    MaxSum own{-INFINITY, 0.0f};
    for (int64_t c = threadIdx.x; c < columns; c += kRowThreads) {
      float v = toAcc(zRow[c]);
      if (v > own.max) {
        own.sum = own.sum * expAcc(own.max - v) + 1.0f;
        own.max = v;
      } else if (v != -INFINITY) {
        own.sum += expAcc(v - own.max);
      }
    }
    MaxSum block = blockCombine(own, warps);
    if (threadIdx.x == 0) {
      MaxSum running = combine({max[r], sum[r]}, block);
      max[r] = running.max;
      sum[r] = running.sum;
    }
  }
}

template <typename T>
__global__ void __launch_bounds__(kRowThreads, kRowBlocksPerSm)
    softmaxGradRowsKernel(const T *z, int64_t zRowStride, int64_t columns,
                          const float *lse, const float *scale,
                          const int64_t *target, int64_t first, T *g,
                          int64_t rows) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T *zRow = z + r * zRowStride;
    T *gRow = g + r * columns;
    float rowLse = lse[r], rowScale = scale[r];
    int64_t targetColumn = target[r] - first;
    for (int64_t c = threadIdx.x; c < columns; c += kRowThreads) {
      float p = expAcc(toAcc(zRow[c]) - rowLse) * rowScale;
      gRow[c] = fromAcc<T>(c == targetColumn ? p - rowScale : p);
    }
  }
}

/// Row blocks for `rows` rows: one wave of resident blocks at most.
inline unsigned rowBlocks(int64_t rows, int smCount) {
  int64_t wave = std::max<int64_t>(int64_t(smCount) * kRowBlocksPerSm, 1);
  return unsigned(std::clamp<int64_t>(rows, 1, wave));
}

/// Updates each row's float32 running `max` and `sum` from the block's
/// logits `z` [rows, columns] (rows `zRowStride` apart, unit column
/// stride); returns cudaGetLastError().
template <typename T>
cudaError_t launchLogSumExpRows(const T *z, int64_t zRowStride,
                                int64_t columns, float *max, float *sum,
                                int64_t rows, int smCount,
                                cudaStream_t stream) {
  if (rows == 0)
    return cudaSuccess;
  logSumExpRowsKernel<<<rowBlocks(rows, smCount), kRowThreads, 0, stream>>>(
      z, zRowStride, columns, max, sum, rows);
  return cudaGetLastError();
}

/// Writes the block's logit gradient `g` [rows, columns] (contiguous);
/// returns cudaGetLastError().
template <typename T>
cudaError_t launchSoftmaxGradRows(const T *z, int64_t zRowStride,
                                  int64_t columns, const float *lse,
                                  const float *scale, const int64_t *target,
                                  int64_t first, T *g, int64_t rows,
                                  int smCount, cudaStream_t stream) {
  if (rows == 0 || columns == 0)
    return cudaSuccess;
  softmaxGradRowsKernel<<<rowBlocks(rows, smCount), kRowThreads, 0, stream>>>(
      z, zRowStride, columns, lse, scale, target, first, g, rows);
  return cudaGetLastError();
}

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_SOFTMAXGRADKERNEL_CUH
