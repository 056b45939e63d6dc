//===- ReusedBlocks.cpp - large CPU results reused across steps -----------===//

#include "ReusedBlocks.h"

#include <ATen/ATen.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <map>
#include <mutex>

namespace fxmlir::ops {
namespace {

/// Freed blocks kept for reuse, by size, up to kMaxKeptBytes in all.
constexpr size_t kMaxKeptBytes = size_t{1} << 30;

struct KeptBlocks {
  std::mutex mutex;
  std::multimap<size_t, void *> blocks;
  size_t keptBytes = 0;
  // Bytes handed out and not yet freed, for the profiler's totals.
  size_t liveBytes = 0;
};

/// Never destroyed: results may be freed during the process's exit.
KeptBlocks &kept() {
  static auto *blocks = new KeptBlocks;
  return *blocks;
}

void report(void *data, int64_t bytes, const KeptBlocks &state) {
  if (c10::memoryProfilingEnabled())
    c10::reportMemoryUsageToProfiler(data, bytes, state.liveBytes,
                                     state.liveBytes + state.keptBytes,
                                     c10::Device(c10::kCPU));
}

void release(void *data, size_t bytes) {
  KeptBlocks &state = kept();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.liveBytes -= bytes;
  report(data, -static_cast<int64_t>(bytes), state);
  if (state.keptBytes + bytes <= kMaxKeptBytes) {
    state.blocks.emplace(bytes, data);
    state.keptBytes += bytes;
    return;
  }
  c10::free_cpu(data);
}

} // namespace

at::Tensor emptyReused(at::IntArrayRef sizes, at::TensorOptions options) {
  size_t bytes = c10::multiply_integers(sizes) *
                 c10::scalarTypeToTypeMeta(
                     c10::typeMetaToScalarType(options.dtype()))
                     .itemsize();
  if (!options.device().is_cpu() || bytes < kReusedMinBytes ||
      options.requires_grad())
    return at::empty(sizes, options);
  KeptBlocks &state = kept();
  void *data = nullptr;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto found = state.blocks.find(bytes);
    if (found != state.blocks.end()) {
      data = found->second;
      state.blocks.erase(found);
      state.keptBytes -= bytes;
    }
  }
  if (!data)
    data = c10::alloc_cpu(bytes);
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.liveBytes += bytes;
    report(data, static_cast<int64_t>(bytes), state);
  }
  return at::from_blob(
      data, sizes, [bytes](void *freed) { release(freed, bytes); },
      options);
}

size_t releaseReusedBlocks() {
  KeptBlocks &state = kept();
  std::multimap<size_t, void *> blocks;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    blocks.swap(state.blocks);
    bytes = state.keptBytes;
    state.keptBytes = 0;
  }
  for (auto &[size, data] : blocks)
    c10::free_cpu(data);
  return bytes;
}

} // namespace fxmlir::ops

extern "C" __attribute__((visibility("default"))) size_t
fxmlir_release_reused_blocks() {
  return fxmlir::ops::releaseReusedBlocks();
}
