//===- FxmlirToLinalg.h - which fxmlir ops JIT regions take -----*- C++ -*-===//

#ifndef FXMLIR_CONVERSION_FXMLIRTOLINALG_H
#define FXMLIR_CONVERSION_FXMLIRTOLINALG_H

#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::fxmlir {

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

} // namespace mlir::fxmlir

#endif // FXMLIR_CONVERSION_FXMLIRTOLINALG_H
