//===- ReusedBlocks.h - large CPU results reused across steps ---*- C++ -*-===//
//
// glibc maps a block over 32 MiB anew at each allocation and unmaps it when
// freed, so a large tensor faults its pages in, zeroed by the kernel 4 KiB
// at a time, every time it is made: a training step's large results (the
// LM head's weight gradient, [32000, 512] float32) are made again each step
// once the loop frees its gradients. The ops that make such results take
// them from here, which keeps a freed block for the next result of its
// size; torch's profiler sees each result made and freed as its own
// allocator's. At most 1 GiB is kept; releaseReusedBlocks() frees it.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_REUSEDBLOCKS_H
#define FXMLIR_OPS_REUSEDBLOCKS_H

#include <ATen/core/Tensor.h>

namespace fxmlir::ops {

/// An uninitialized contiguous tensor like at::empty(sizes, options); on
/// the CPU, one of at least kReusedMinBytes takes a block a freed result of
/// its size left, when there is one.
at::Tensor emptyReused(at::IntArrayRef sizes, at::TensorOptions options);

/// Results below this size are at::empty's: glibc reuses their blocks.
constexpr size_t kReusedMinBytes = size_t{32} << 20;

/// Frees every kept block (results still alive are not touched); the bytes
/// freed. Python calls it as fxmlir.memory.release_reused_blocks(), through
/// the C symbol fxmlir_release_reused_blocks.
size_t releaseReusedBlocks();

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_REUSEDBLOCKS_H
