//===- SplitAtConcat.h - elementwise ops per concatenated piece -*- C++ -*-===//

#ifndef FXMLIR_LIB_CODEGEN_LINALG_SPLITATCONCAT_H
#define FXMLIR_LIB_CODEGEN_LINALG_SPLITATCONCAT_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <functional>

namespace fxmlir {

/// An all-parallel generic without index reads, each operand read at dims
/// or constants: each element of its results depends on the same element
/// of its operands only, so any part of its iteration space can be
/// computed alone, or together with another's.
bool isPointwise(linalg::GenericOp op);

/// Elementwise generics reading a tensor.concat computed per piece, and
/// slices of elementwise generics computed on slices of their operands when
/// the generic has one use or `recompute` says it is cheap to recompute.
void populateSplitAtConcatPatterns(
    RewritePatternSet &patterns,
    std::function<bool(linalg::GenericOp)> recompute);

} // namespace fxmlir

#endif // FXMLIR_LIB_CODEGEN_LINALG_SPLITATCONCAT_H
