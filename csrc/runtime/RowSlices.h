//===- RowSlices.h - how mlir_jit's CPU kernel splits a region's rows -----===//
//
// A row-splittable region runs over slices of its rows, at::parallel_for
// handing out whole slices: each task gets enough elements to pay for
// itself, each slice few enough bytes that a row reduction's passes over it
// hit the cache, and, where the grain allows, every thread as many rows.
// Torch-free, so that GoogleTest checks it.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_RUNTIME_ROWSLICES_H
#define FXMLIR_RUNTIME_ROWSLICES_H

#include <algorithm>
#include <cstdint>

namespace fxmlir::runtime {

/// Elements a task reads at least, and bytes a slice reads at most.
constexpr int64_t kMinElementsPerTask = 1 << 15;
constexpr int64_t kSliceBytes = 256 << 10;

struct RowSlices {
  int64_t rows;        // in all
  int64_t count;       // slices
  int64_t grainSlices; // slices a task takes: each thread's share

  /// The first row of slice `index` (of `count`: one past the last row).
  /// Slices differ by a row at most, so that threads given as many slices
  /// get as many rows.
  int64_t begin(int64_t index) const { return index * rows / count; }
};

/// The slices of `rows` rows whose widest row input has `rowElements`
/// elements and `rowBytes` bytes a row, for `threads` threads: as many
/// tasks as threads where each gets its 32 K elements, and as many slices
/// a task as its rows need to stay within the cache budget. at::parallel_for
/// hands out equal runs of slices, so a task count that did not divide the
/// slices left a thread idle: [256, 1376] bf16 on two threads was three
/// slices, two on one thread and one on the other (SwiGLU's region 0.77x
/// its ATen ops, 1.3x its one-thread time). Batch-first [2, 128, 512] bf16
/// is two rows of 128 KiB: a slice each, one a thread.
inline RowSlices rowSlices(int64_t rows, int64_t rowElements, int64_t rowBytes,
                           int64_t threads) {
  rows = std::max<int64_t>(rows, 1);
  int64_t grain = std::max<int64_t>(1, kMinElementsPerTask / rowElements);
  int64_t budget = std::max<int64_t>(1, kSliceBytes / rowBytes);
  int64_t tasks = std::clamp<int64_t>(rows / grain, 1, std::max<int64_t>(threads, 1));
  int64_t perTask = (rows + tasks - 1) / tasks;
  int64_t slicesPerTask = (perTask + budget - 1) / budget;
  return {rows, std::min(rows, tasks * slicesPerTask), slicesPerTask};
}

} // namespace fxmlir::runtime

#endif // FXMLIR_RUNTIME_ROWSLICES_H
