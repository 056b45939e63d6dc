//===- Grid.cuh - grids sized to the device -------------------------------===//
//
// Memory-bound kernels launch enough blocks to fill every multiprocessor
// (full occupancy at their block size) and cover the rest with a grid
// stride: more blocks only add scheduling, fewer leave bandwidth unused.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CUDA_GRID_CUH
#define FXMLIR_KERNELS_CUDA_GRID_CUH

#include <algorithm>
#include <cstdint>

namespace fxmlir::kernels::cuda {

/// Threads per block of the memory-bound kernels, and the blocks of them
/// resident on a multiprocessor: they are compiled with
/// __launch_bounds__(kThreads, kBlocksPerSm), which caps registers at 42 so
/// that the one wave deviceBlocks launches is resident at once (a grid
/// larger than what fits would run its last blocks as a second, partial
/// wave). 1536 threads issuing 16-byte accesses keep enough bytes in flight
/// for HBM3; a cap of 32 registers (2048 threads) made the Philox and GELU
/// gradient kernels spill.
constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 6;

/// Blocks of kThreads for `items` work items (one per thread and
/// iteration): no more than one wave of resident blocks on `smCount`
/// multiprocessors, at least one.
inline int64_t deviceBlocks(int64_t items, int smCount) {
  int64_t wave = std::max<int64_t>(int64_t(smCount) * kBlocksPerSm, 1);
  return std::clamp<int64_t>((items + kThreads - 1) / kThreads, 1, wave);
}

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_GRID_CUH
