//===- RandomMask.cuh - Torch-free CUDA kernel of random_mask_like --------===//
//
// The kernel reads its Philox seed and offset on the device from a caller
// functor, so a caller can hand over values that only exist at replay time
// (CUDA graph capture). Header-only: each caller instantiates the kernel with
// its own functor.
//
// Counter layout, like curand_init(seed, thread, offset) followed by one
// curand_uniform4 per iteration: key = seed, counter high half = thread,
// counter low half = offset / 4 + iteration. A launch therefore consumes
// `philoxIncrement` (4 per iteration per thread) of the generator's offset.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_RANDOMMASK_CUH
#define FXMLIR_KERNELS_CUDA_RANDOMMASK_CUH

#include "../common/Philox.h"
#include "Grid.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace fxmlir::kernels::cuda {

struct PhiloxSeedOffset {
  uint64_t seed;
  uint64_t offset;
};

/// A grid of Philox draws: every thread draws `drawsPerIteration` blocks per
/// grid-stride iteration, so a launch consumes `philoxIncrement` of the
/// generator's offset (4 per block).
struct PhiloxLaunch {
  int blocks;
  int threads;
  uint64_t philoxIncrement;
};

/// A grid for `groups` work items (one per thread and iteration) filling a
/// device of `smCount` multiprocessors.
inline PhiloxLaunch philoxLaunch(int64_t groups, int smCount,
                                 int drawsPerIteration) {
  groups = std::max<int64_t>(groups, 1);
  int64_t blocks = deviceBlocks(groups, smCount);
  int64_t iterations = (groups + blocks * kThreads - 1) / (blocks * kThreads);
  return {static_cast<int>(blocks), kThreads,
          static_cast<uint64_t>(iterations) * 4 * drawsPerIteration};
}

/// random_mask_like's grid: each thread draws 4 elements per iteration.
inline PhiloxLaunch randomMaskLaunch(int64_t numel, int smCount) {
  return philoxLaunch((numel + 3) / 4, smCount, 1);
}

/// mask[i] = true (keep) with probability 1 - p, for p in [0, 1) given as
/// keepThreshold(p).
template <typename SeedOffsetSource>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    randomMaskKernel(bool *mask, int64_t numel, uint32_t threshold,
                     SeedOffsetSource source) {
  PhiloxSeedOffset philox = source();
  int64_t thread = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int64_t stride = int64_t(gridDim.x) * blockDim.x;
  uint64_t counter = philox.offset / 4;
  for (int64_t i = thread * 4; i < numel; i += stride * 4, ++counter) {
    uint32_t keep =
        keepBytes(philox4x32(counter, thread, philox.seed), threshold);
    if (i + 4 <= numel) {
      // The mask is a fresh allocation, so 4-element groups are 4-byte
      // aligned: one store each.
      *reinterpret_cast<uint32_t *>(mask + i) = keep;
    } else {
      for (int64_t k = 0; i + k < numel; ++k)
        mask[i + k] = (keep >> (8 * k)) & 1u;
    }
  }
}

template <typename SeedOffsetSource>
cudaError_t launchRandomMask(bool *mask, int64_t numel, double p,
                             SeedOffsetSource source,
                             const PhiloxLaunch &config, cudaStream_t stream) {
  if (numel == 0)
    return cudaSuccess;
  randomMaskKernel<<<config.blocks, config.threads, 0, stream>>>(
      mask, numel, keepThreshold(p), source);
  return cudaGetLastError();
}

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_RANDOMMASK_CUH
