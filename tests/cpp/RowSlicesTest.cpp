//===- RowSlicesTest.cpp - mlir_jit's CPU row slices -----------------------===//

#include "../../csrc/runtime/RowSlices.h"

#include <gtest/gtest.h>

using fxmlir::runtime::rowSlices;

namespace {

TEST(RowSlices, BatchFirstRowsGiveEachThreadASlice) {
  // [2, 128, 512] bf16: two rows of 65536 elements, 128 KiB each.
  auto two = rowSlices(2, 65536, 131072, 2);
  EXPECT_EQ(two.rows, 1);
  EXPECT_EQ(two.count, 2);
  EXPECT_EQ(two.grainSlices, 1);
  // One thread keeps the 256 KiB slice.
  auto one = rowSlices(2, 65536, 131072, 1);
  EXPECT_EQ(one.rows, 2);
  EXPECT_EQ(one.count, 1);
}

TEST(RowSlices, SmallWorkStaysOneTask) {
  // 8 rows of 64 floats: far below a task's elements.
  auto split = rowSlices(8, 64, 256, 2);
  EXPECT_EQ(split.count, 1);
}

TEST(RowSlices, SlicesStayWithinTheCacheBudget) {
  // 4096 rows of 4096 floats (16 KiB): 16 rows a slice whatever the threads.
  auto split = rowSlices(4096, 4096, 16384, 2);
  EXPECT_EQ(split.rows, 16);
  EXPECT_EQ(split.count, 256);
  EXPECT_EQ(split.grainSlices, 1);
}

TEST(RowSlices, TasksKeepTheirGrain) {
  // 256 rows of 512 floats: a task needs 64 rows; two threads, two slices.
  auto split = rowSlices(256, 512, 2048, 2);
  EXPECT_EQ(split.rows, 128);
  EXPECT_EQ(split.count, 2);
  EXPECT_GE(split.rows * split.grainSlices * 512, fxmlir::runtime::kMinElementsPerTask);
}

TEST(RowSlices, SlicesCoverEveryRowOnce) {
  for (int64_t rows : {2, 3, 7, 100, 1000, 4097})
    for (int64_t elements : {1, 64, 512, 65536})
      for (int64_t threads : {1, 2, 3, 16}) {
        auto split = rowSlices(rows, elements, elements * 2, threads);
        EXPECT_GE(split.rows, 1);
        EXPECT_GE(split.grainSlices, 1);
        EXPECT_GE(split.count * split.rows, rows);
        EXPECT_LT((split.count - 1) * split.rows, rows);
      }
}

} // namespace
