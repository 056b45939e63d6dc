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

namespace mlir::fxmlir {
/// The device of a tensor type (its encoding), or null when it has none.
DeviceAttr getDevice(Type type);

/// `dim` in [0, rank) for a torch dim in [-rank, rank) (negative counts from
/// the end), or nothing when it is out of range.
std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank);
} // namespace mlir::fxmlir

#endif // FXMLIR_DIALECT_FXMLIRDIALECT_H
