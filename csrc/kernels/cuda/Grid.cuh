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

/// Resident threads per multiprocessor on sm_80 and later.
constexpr int kThreadsPerSm = 2048;

/// Blocks of `threads` for `items` work items (one per thread and
/// iteration): no more than one wave of resident blocks on `smCount`
/// multiprocessors, at least one.
inline int64_t deviceBlocks(int64_t items, int threads, int smCount) {
  int64_t wave = int64_t(smCount) * (kThreadsPerSm / threads);
  return std::max<int64_t>(
      1, std::min((items + threads - 1) / threads, std::max<int64_t>(wave, 1)));
}

} // namespace fxmlir::kernels::cuda

#endif // FXMLIR_KERNELS_CUDA_GRID_CUH
