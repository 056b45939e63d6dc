//===- FxmlirToLinalg.h - which fxmlir ops JIT regions take -----*- C++ -*-===//

#ifndef FXMLIR_CODEGEN_FXMLIRTOLINALG_H
#define FXMLIR_CODEGEN_FXMLIRTOLINALG_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/IR/Operation.h"

#include <optional>

namespace fxmlir {

/// How a lowerable op relates its result to its operands' dim 0, which the
/// CPU runtime splits across threads.
enum class JitOpKind {
  /// Forwards its operand (detach, alias): computes nothing.
  Identity,
  /// Elementwise over broadcast operands.
  Elementwise,
  /// Reduces dims other than dim 0 (softmax, layer norm, row sums).
  Reduction,
  /// Reduces dim 0 too (bias gradients, sums of 1-D tensors).
  ReductionOverDim0,
  /// Elementwise, but reads a lower-rank operand along dim 0 (the targets of
  /// nll_loss_backward), which a row split would not slice with the rows.
  ElementwiseOverRows,
};

/// The kind of `op` if `fxmlir-convert-to-linalg` lowers it: a supported op
/// whose tensors have supported element types and one device (CPU or CUDA),
/// and whose attributes the lowering handles. Nothing otherwise.
std::optional<JitOpKind> getJitOpKind(Operation *op);

/// What a result of a lowerable op does with dim 0 (the rows) of its
/// operands.
enum class RowUse {
  /// Row i of the result comes from row i of the operands (or reduces no
  /// rows: every op not of kind ReductionOverDim0).
  Keeps,
  /// A plain f32 or f64 sum over dim 0 (and the other leading dims): the sums
  /// over slices of the rows add up to it (bias and layer-norm weight
  /// gradients). Rounding each slice's sum to 16 bits would not.
  Sums,
  /// Any other reduction over dim 0.
  Reduces,
};

/// The row use of `result`, whose op's getJitOpKind is `kind`.
RowUse getRowUse(OpResult result, JitOpKind kind);

} // namespace fxmlir

#endif // FXMLIR_CODEGEN_FXMLIRTOLINALG_H
