//===- RowSlicesTest.cpp - mlir_jit's CPU row slices -----------------------===//

#include "../../csrc/runtime/RowSlices.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using fxmlir::runtime::kMinElementsPerTask;
using fxmlir::runtime::kSliceBytes;
using fxmlir::runtime::RowSlices;
using fxmlir::runtime::rowSlices;

namespace {

int64_t sliceRows(const RowSlices &split, int64_t index) {
  return split.begin(index + 1) - split.begin(index);
}

/// The rows each thread runs, as at::parallel_for(0, count, grainSlices)
/// hands slices out (both of ATen's backends): at most `threads` tasks, at
/// least `grainSlices` slices each, equal runs of slices in order.
std::vector<int64_t> rowsPerThread(const RowSlices &split, int64_t threads) {
  auto divup = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int64_t tasks = std::min(threads, divup(split.count, split.grainSlices));
  int64_t chunk = divup(split.count, tasks);
  std::vector<int64_t> rows;
  for (int64_t first = 0; first < split.count; first += chunk)
    rows.push_back(split.begin(std::min(split.count, first + chunk)) -
                   split.begin(first));
  return rows;
}

TEST(RowSlices, BatchFirstRowsGiveEachThreadASlice) {
  // [2, 128, 512] bf16: two rows of 65536 elements, 128 KiB each.
  auto two = rowSlices(2, 65536, 131072, 2);
  EXPECT_EQ(two.count, 2);
  EXPECT_EQ(rowsPerThread(two, 2), (std::vector<int64_t>{1, 1}));
  // One thread keeps the 256 KiB slice.
  auto one = rowSlices(2, 65536, 131072, 1);
  EXPECT_EQ(one.count, 1);
  EXPECT_EQ(sliceRows(one, 0), 2);
}

TEST(RowSlices, SmallWorkStaysOneTask) {
  // 8 rows of 64 floats: far below a task's elements.
  auto split = rowSlices(8, 64, 256, 2);
  EXPECT_EQ(split.count, 1);
}

TEST(RowSlices, SlicesStayWithinTheCacheBudget) {
  // 4096 rows of 4096 floats (16 KiB): 16 rows a slice, 128 a thread.
  auto split = rowSlices(4096, 4096, 16384, 2);
  EXPECT_EQ(split.count, 256);
  for (int64_t index = 0; index < split.count; ++index)
    EXPECT_EQ(sliceRows(split, index), 16);
  EXPECT_EQ(rowsPerThread(split, 2), (std::vector<int64_t>{2048, 2048}));
}

TEST(RowSlices, TasksKeepTheirGrain) {
  // 256 rows of 512 floats: a task needs 64 rows; two threads, two slices.
  auto split = rowSlices(256, 512, 2048, 2);
  EXPECT_EQ(split.count, 2);
  for (int64_t rows : rowsPerThread(split, 2))
    EXPECT_GE(rows * 512, kMinElementsPerTask);
  // 100 rows of 512 floats on 16 threads: only one task has its grain.
  auto few = rowSlices(100, 512, 2048, 16);
  EXPECT_EQ(rowsPerThread(few, 16), (std::vector<int64_t>{100}));
}

TEST(RowSlices, ThreadsGetEqualShares) {
  // SwiGLU's [256, 1376] bf16 product on two threads: three slices of 95
  // rows (the cache budget) ran two on one thread, one on the other.
  auto swiglu = rowSlices(256, 1376, 2752, 2);
  EXPECT_EQ(rowsPerThread(swiglu, 2), (std::vector<int64_t>{128, 128}));
  // Nine slices' worth on eight threads ran two slices on one thread.
  auto nine = rowSlices(9 * 64, 4096, 4096 * 64, 8);
  for (int64_t rows : rowsPerThread(nine, 8))
    EXPECT_EQ(rows, 72);
}

TEST(RowSlices, SlicesCoverEveryRowOnce) {
  for (int64_t rows : {1, 2, 3, 7, 100, 1000, 4097})
    for (int64_t elements : {1, 64, 512, 1376, 65536})
      for (int64_t threads : {1, 2, 3, 8, 16}) {
        int64_t bytes = elements * 2;
        auto split = rowSlices(rows, elements, bytes, threads);
        ASSERT_GE(split.count, 1);
        ASSERT_GE(split.grainSlices, 1);
        EXPECT_EQ(split.begin(0), 0);
        EXPECT_EQ(split.begin(split.count), rows);
        int64_t budget = std::max<int64_t>(1, kSliceBytes / bytes);
        for (int64_t index = 0; index < split.count; ++index) {
          EXPECT_GE(sliceRows(split, index), 1);
          EXPECT_LE(sliceRows(split, index), budget);
        }
        // No thread runs more than a slice's rows beyond its fair share.
        std::vector<int64_t> shares = rowsPerThread(split, threads);
        int64_t tasks = static_cast<int64_t>(shares.size());
        EXPECT_LE(tasks, threads);
        int64_t most = *std::max_element(shares.begin(), shares.end());
        EXPECT_LE(most, (rows + tasks - 1) / tasks + split.grainSlices)
            << rows << " rows of " << elements << ", " << threads << " threads";
      }
}

} // namespace
