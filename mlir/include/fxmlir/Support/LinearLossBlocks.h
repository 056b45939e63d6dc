//===- LinearLossBlocks.h - the fused LM loss's block size ------*- C++ -*-===//
//
// Header-only and dependency-free: fused_linear_cross_entropy's kernels
// (csrc/ops) work a block of vocabulary columns of about this many float32
// logits at a time, and fxmlir-fuse-linear-cross-entropy fuses only logits
// larger than one block (smaller ones save nothing by blocks).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_SUPPORT_LINEARLOSSBLOCKS_H
#define FXMLIR_SUPPORT_LINEARLOSSBLOCKS_H

#include <cstdint>

namespace fxmlir {

/// Float32 logits per block: 4 MiB.
constexpr int64_t kLinearLossBlockElements = int64_t(1) << 20;

} // namespace fxmlir

#endif // FXMLIR_SUPPORT_LINEARLOSSBLOCKS_H
