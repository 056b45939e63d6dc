//===- FxmlirDialect.h - the fxmlir dialect ---------------------*- C++ -*-===//
//
// Declares the dialect, its attributes, the hand-written ops and the ops
// generated from ATen schemas.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_DIALECT_FXMLIRDIALECT_H
#define FXMLIR_DIALECT_FXMLIRDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fxmlir/Dialect/FxmlirTraits.h"

#include "fxmlir/Dialect/FxmlirDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fxmlir/Dialect/FxmlirAttrs.h.inc"

#define GET_OP_CLASSES
#include "fxmlir/Dialect/FxmlirOps.h.inc"

#define GET_OP_CLASSES
#include "fxmlir/Dialect/AtenOps.h.inc"

#define GET_OP_CLASSES
#include "fxmlir/Dialect/FusedOps.h.inc"

namespace mlir::fxmlir {
/// The device of a tensor type (its encoding), or null when it has none.
DeviceAttr getDevice(Type type);

//===----------------------------------------------------------------------===//
// Verifier hooks of the fused op families (called by the generated verify()
// of each op in FusedOps.td)
//===----------------------------------------------------------------------===//

/// A tensor of a bias op other than x and bias, which has x's shape: an
/// operand (grad, mask) or a result; `isBool` when it holds torch.bool.
struct ShapedLikeX {
  StringRef name;
  Value value;
  bool isBool;
};

/// Bias family: `bias` is 1-D and matches dim `axis` of `x`, with x's
/// element type and device; `others` are shaped like x, with x's element
/// type unless bool.
LogicalResult verifyBiasOp(Operation *op, Value x, Value bias, int64_t axis,
                           ArrayRef<ShapedLikeX> others);

/// Mask family: a bool `result` shaped like `like`, kept with probability
/// 1 - p for p in [0, 1).
LogicalResult verifyMaskOp(Operation *op, Value like, Value result,
                           const APFloat &p);

/// A string attribute that takes one of `accepted` (schema.STR_ENUMS).
LogicalResult verifyStrEnum(Operation *op, StringRef name, StringRef value,
                            ArrayRef<StringRef> accepted);
} // namespace mlir::fxmlir

#endif // FXMLIR_DIALECT_FXMLIRDIALECT_H
