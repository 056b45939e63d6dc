//===- RowSlices.h - how mlir_jit's CPU kernel splits a region's rows -----===//
//
// A row-splittable region runs over slices of its rows (dim 0 of its row
// inputs), at::parallel_for handing out whole slices: each task gets enough
// elements to pay for itself, each slice few enough bytes that a row
// reduction's passes over it hit the cache, and, where the grain allows,
// every thread a slice. Torch-free, so that GoogleTest checks it.
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
  int64_t rows;        // per slice (the last one may have fewer)
  int64_t count;       // slices
  int64_t grainSlices; // slices a task takes at least
};

/// The slices of `rows` rows whose widest row input has `rowElements`
/// elements and `rowBytes` bytes a row, for `threads` threads. A slice per
/// thread where the grain allows: batch-first [2, 128, 512] bf16 is two
/// rows of 128 KiB, which one 256 KiB slice ran on one thread of two (a
/// layer norm's backward, 0.74x its ATen ops at two threads).
inline RowSlices rowSlices(int64_t rows, int64_t rowElements, int64_t rowBytes,
                           int64_t threads) {
  threads = std::max<int64_t>(threads, 1);
  int64_t grain = std::max<int64_t>(1, kMinElementsPerTask / rowElements);
  int64_t perThread = (rows + threads - 1) / threads;
  int64_t slice = std::min(std::max<int64_t>(1, kSliceBytes / rowBytes),
                           std::max(grain, perThread));
  return {slice, (rows + slice - 1) / slice, (grain + slice - 1) / slice};
}

} // namespace fxmlir::runtime

#endif // FXMLIR_RUNTIME_ROWSLICES_H
