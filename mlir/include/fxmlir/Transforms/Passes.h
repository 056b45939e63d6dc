//===- Passes.h - fxmlir graph passes ---------------------------*- C++ -*-===//

#ifndef FXMLIR_TRANSFORMS_PASSES_H
#define FXMLIR_TRANSFORMS_PASSES_H

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir::fxmlir {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "fxmlir/Transforms/Passes.h.inc"

} // namespace mlir::fxmlir

#endif // FXMLIR_TRANSFORMS_PASSES_H
