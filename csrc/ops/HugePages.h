//===- HugePages.h - large CPU outputs on transparent huge pages -*- C++ -*-===//
//
// glibc hands out every block of 32 MiB or more as a fresh mmap, whose 4 KiB
// pages fault one by one on first write: the LM head's float32 gradient of
// LLaMA-style 32000 x 512 faulted 16384 times a step, ~24 ms of a 350 ms
// bf16 step on one AMD EPYC Zen 4 thread (the gradient is a new tensor each
// step: zero_grad frees it). Such a block on 2 MiB pages (madvise
// MADV_HUGEPAGE) faults 32 times. Torch does this for every CPU tensor only
// when THP_MEM_ALLOC_ENABLE=1 is set before it first allocates; these are
// the fused ops' own largest outputs. Allocations are reported to torch's
// profiler as its CPU allocator reports its own, so memory profiles count
// them. Elsewhere than Linux, and below kHugePageMinBytes, plain at::empty.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_HUGEPAGES_H
#define FXMLIR_OPS_HUGEPAGES_H

#include <ATen/ATen.h>

namespace fxmlir::ops {

/// glibc's largest mmap threshold (M_MMAP_THRESHOLD's maximum on 64-bit):
/// smaller blocks may be reused from its heap without faulting.
constexpr int64_t kHugePageMinBytes = int64_t{32} << 20;

/// A new contiguous CPU tensor of `sizes` and `options`' dtype, on huge
/// pages where it is at least kHugePageMinBytes and the OS has them.
at::Tensor emptyOnHugePages(at::IntArrayRef sizes,
                            const at::TensorOptions &options);

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_HUGEPAGES_H
