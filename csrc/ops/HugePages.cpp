//===- HugePages.cpp - large CPU outputs on transparent huge pages --------===//

#include "HugePages.h"

#include <ATen/EmptyTensor.h>
#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace fxmlir::ops {

#if defined(__linux__)
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

/// Bytes this allocator holds, for the profiler's running totals.
std::atomic<size_t> heldBytes{0};

struct Block {
  void *data;
  size_t bytes;
};

void report(void *data, int64_t bytes) {
  size_t held = heldBytes += bytes;
  c10::reportMemoryUsageToProfiler(data, bytes, held, held,
                                   c10::Device(c10::DeviceType::CPU));
}

void freeBlock(void *context) {
  auto *block = static_cast<Block *>(context);
  report(block->data, -static_cast<int64_t>(block->bytes));
  std::free(block->data);
  delete block;
}

/// 2 MiB-aligned blocks the kernel may back with huge pages.
class HugePageAllocator final : public c10::Allocator {
public:
  c10::DataPtr allocate(size_t bytes) override {
    c10::Device cpu(c10::DeviceType::CPU);
    if (bytes == 0)
      return {nullptr, cpu};
    size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void *data = nullptr;
    TORCH_CHECK_WITH(OutOfMemoryError,
                     posix_memalign(&data, kHugePage, rounded) == 0,
                     "fxmlir: out of CPU memory allocating ", bytes, " bytes");
    // Advice only: without transparent huge pages the block has 4 KiB ones.
    madvise(data, rounded, MADV_HUGEPAGE);
    auto *block = new Block{data, bytes};
    report(data, static_cast<int64_t>(bytes));
    return {data, block, &freeBlock, cpu};
  }

  void copy_data(void *dest, const void *src, size_t count) const override {
    default_copy_data(dest, src, count);
  }
};

HugePageAllocator hugePageAllocator;

} // namespace
#endif

at::Tensor emptyOnHugePages(at::IntArrayRef sizes,
                            const at::TensorOptions &options) {
#if defined(__linux__)
  int64_t bytes = c10::elementSize(options.dtype().toScalarType());
  for (int64_t size : sizes)
    bytes *= size;
  if (options.device().is_cpu() && bytes >= kHugePageMinBytes)
    return at::detail::empty_generic(
        sizes, &hugePageAllocator, c10::DispatchKeySet(c10::DispatchKey::CPU),
        options.dtype().toScalarType(), c10::MemoryFormat::Contiguous);
#endif
  return at::empty(sizes, options);
}

} // namespace fxmlir::ops
