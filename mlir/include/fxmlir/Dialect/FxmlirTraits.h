//===- FxmlirTraits.h - verification rules of generated ops -----*- C++ -*-===//
//
// The shape and dtype rules that hold for whole families of ATen ops, so the
// op generator attaches them by trait instead of per-op C++.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_DIALECT_FXMLIRTRAITS_H
#define FXMLIR_DIALECT_FXMLIRTRAITS_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/IR/OpDefinition.h"

namespace fxmlir {

/// Checks that every ranked tensor result has the broadcast shape of the
/// ranked tensor operands (torch's broadcasting; `?` matches any size).
LogicalResult verifyBroadcastShapes(Operation *op);

/// Checks that every ranked tensor operand has a floating-point element type.
LogicalResult verifyFloatingPointOperands(Operation *op);

namespace OpTrait {

template <typename ConcreteType>
class BroadcastShapes
    : public mlir::OpTrait::TraitBase<ConcreteType, BroadcastShapes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyBroadcastShapes(op);
  }
};

template <typename ConcreteType>
class FloatingPointOperands
    : public mlir::OpTrait::TraitBase<ConcreteType, FloatingPointOperands> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyFloatingPointOperands(op);
  }
};

} // namespace OpTrait
} // namespace fxmlir

#endif // FXMLIR_DIALECT_FXMLIRTRAITS_H
