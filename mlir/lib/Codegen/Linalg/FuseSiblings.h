//===- FuseSiblings.h - elementwise ops sharing an input --------*- C++ -*-===//

#ifndef FXMLIR_LIB_CODEGEN_LINALG_FUSESIBLINGS_H
#define FXMLIR_LIB_CODEGEN_LINALG_FUSESIBLINGS_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/IR/PatternMatch.h"

namespace fxmlir {

/// Elementwise linalg.generics over the same elements that read a common
/// operand merged into one with all their results, while the merged op has
/// at most `maxOperands` operands (inputs and inits).
void populateFuseSiblingsPatterns(RewritePatternSet &patterns,
                                  unsigned maxOperands);

} // namespace fxmlir

#endif // FXMLIR_LIB_CODEGEN_LINALG_FUSESIBLINGS_H
