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

/// `generic`'s body at loop indices `point` folding into `accumulated`: its
/// inputs loaded through their indexing maps, linalg.index as the point's
/// index (fused producers may read their position: nll_loss_backward's
/// class index), the body cloned at `builder`'s insertion point. Returns
/// the value it yields.
Value foldElement(OpBuilder &builder, Location loc, linalg::GenericOp generic,
                  ArrayRef<Value> point, Value accumulated);

/// The `linalg.fill` of `generic`'s whole output that gives it its values
/// before `generic` (nothing between them touches the output's memory), or
/// null. A mapping that writes every output element folds its result into
/// the fill's value and erases the fill: a kernel launch less.
linalg::FillOp initialFill(linalg::GenericOp generic);

/// `total` folded into output element `indices` (its value before the
/// reduction): the fill's value where `fill` is set, the identity adding
/// nothing, else the element loaded.
Value foldIntoOutput(OpBuilder &builder, Location loc,
                     const Combiner &combiner, linalg::FillOp fill,
                     Value output, ValueRange indices, Value total);

} // namespace fxmlir

#endif // FXMLIR_LIB_CODEGEN_GPU_COMBINER_H
