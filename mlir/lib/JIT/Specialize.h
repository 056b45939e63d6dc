//===- Specialize.h - a JIT function for one input signature ----*- C++ -*-===//

#ifndef FXMLIR_LIB_JIT_SPECIALIZE_H
#define FXMLIR_LIB_JIT_SPECIALIZE_H

#include "fxmlir/JIT/Jit.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace fxmlir::jit {

/// A module holding only the function (private), its arguments retyped to
/// an input signature, and what it takes and returns.
struct SpecializedFunction {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  Signature signature;
};

/// Parses `text` and specializes `function` to `inputs`, or, without
/// inputs, to its own argument types with dim 0 of the row inputs made
/// dynamic when rows can be split. Throws Error with the diagnostics.
SpecializedFunction specialize(mlir::MLIRContext &context, llvm::StringRef text,
                               llvm::StringRef function,
                               const std::vector<TensorSpec> *inputs);

/// The MLIR element type (with torch's signedness) of `dtype`.
mlir::Type elementType(mlir::MLIRContext &context, DType dtype);

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_SPECIALIZE_H
