//===- MLIR.h - MLIR's names in fxmlir's namespace --------------*- C++ -*-===//
//
// All of fxmlir's C++ lives in one namespace, `fxmlir`: the dialect and its
// passes, the JIT (fxmlir::jit), the C++ API, and csrc's kernels and ops
// (fxmlir::kernels, fxmlir::ops), which link no MLIR. The compiler code
// names MLIR's classes (Value, Operation, LogicalResult, ...) unqualified,
// as code inside namespace mlir would; this using-directive lets it, and
// reaches only code inside namespace fxmlir.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_SUPPORT_MLIR_H
#define FXMLIR_SUPPORT_MLIR_H

#include "mlir/Support/LLVM.h"

namespace fxmlir {
using namespace mlir;
} // namespace fxmlir

#endif // FXMLIR_SUPPORT_MLIR_H
