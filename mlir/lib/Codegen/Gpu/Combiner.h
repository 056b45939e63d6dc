//===- Combiner.h - how a reduction body folds an element -------*- C++ -*-===//
//
// The GPU reduction mappings (a block per row, a block per group of
// columns) split a linalg reduction among threads and combine their partial
// results with the body's own combining op.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_CODEGEN_GPU_COMBINER_H
#define FXMLIR_LIB_CODEGEN_GPU_COMBINER_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace fxmlir {

/// How a reduction body folds an element into its accumulator.
struct Combiner {
  Operation *op;
  gpu::AllReduceOperation kind;
  /// The value combine(x, identity) leaves x unchanged with.
  TypedAttr identity;
  /// Which of `op`'s operands is the accumulator.
  unsigned accumulatorOperand;

  /// `element` folded into `accumulated`: a clone of `op` at `builder`'s
  /// insertion point, its operands in the body's order.
  Value combine(OpBuilder &builder, Value accumulated, Value element) const;
};

/// The combining op of a body yielding `combine(f(inputs), acc)` where the
/// accumulator `acc` is used by that op only.
std::optional<Combiner> findCombiner(linalg::GenericOp generic);

} // namespace fxmlir

#endif // FXMLIR_LIB_CODEGEN_GPU_COMBINER_H
