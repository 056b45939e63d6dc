//===- FuseSiblings.h - ops sharing an input in one loop -------*- C++ -*-===//

#ifndef FXMLIR_LIB_CODEGEN_LINALG_FUSESIBLINGS_H
#define FXMLIR_LIB_CODEGEN_LINALG_FUSESIBLINGS_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/IR/PatternMatch.h"

namespace fxmlir {

/// Operands (inputs and outputs) of a loop nest merged from siblings: each
/// is a stream of memory the loop walks, and beyond a dozen the hardware
/// prefetchers lose track.
constexpr unsigned kMaxSiblingOperands = 12;

/// Elementwise linalg.generics over the same elements that read a common
/// operand merged into one with all their results, while the merged op has
/// at most `maxOperands` operands (inputs and inits).
void populateFuseSiblingsPatterns(RewritePatternSet &patterns,
                                  unsigned maxOperands);

/// Reductions over the same loops (the same iterator types and sizes) that
/// read a common operand through a map naming every loop merged into one
/// with all their results, within the same bound: one pass over the shared
/// rows instead of one per reduction.
void populateFuseSiblingReductionsPatterns(RewritePatternSet &patterns,
                                           unsigned maxOperands);

} // namespace fxmlir

#endif // FXMLIR_LIB_CODEGEN_LINALG_FUSESIBLINGS_H
