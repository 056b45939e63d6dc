//===- Specialize.h - a JIT function for one input signature ----*- C++ -*-===//

#ifndef FXMLIR_LIB_JIT_SPECIALIZE_H
#define FXMLIR_LIB_JIT_SPECIALIZE_H

#include "fxmlir/JIT/Jit.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

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

/// A function rewritten for more shapes than it was traced at.
struct GenericFunction {
  std::string text;
  std::vector<TensorSpec> inputs;
};

/// `function` with every dim but the last of each tensor dynamic where it
/// was static and not 1, when each of its ops takes its sizes from its
/// operands (pointwise ops, reductions, unit-dim reshapes; slices,
/// concatenations and permutations that keep the last dim in place): one
/// compile then serves every batch and length a graph is traced at. None
/// for other functions, for one that is generic already, and when `inputs`
/// do not fit the function as written (specialize() says why).
std::optional<GenericFunction>
generalize(mlir::MLIRContext &context, llvm::StringRef text,
           llvm::StringRef function, const std::vector<TensorSpec> &inputs);

/// The MLIR element type (with torch's signedness) of `dtype`.
mlir::Type elementType(mlir::MLIRContext &context, DType dtype);

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_SPECIALIZE_H
