//===- Passes.h - fxmlir graph passes ---------------------------*- C++ -*-===//

#ifndef FXMLIR_TRANSFORMS_PASSES_H
#define FXMLIR_TRANSFORMS_PASSES_H

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fxmlir {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "fxmlir/Transforms/Passes.h.inc"

/// The pattern sets behind the passes, for any pass or driver to combine.
void populateDecomposePatterns(RewritePatternSet &patterns);
void populateBiasAddActivationFusionPatterns(RewritePatternSet &patterns);
void populateGemmEpilogueFusionPatterns(RewritePatternSet &patterns);
void populateGeluApproximationPatterns(RewritePatternSet &patterns);
/// Dropout of a bias op (+ activation), with its residual add if any.
void populateBiasAddDropoutFusionPatterns(RewritePatternSet &patterns);
void populateRecomposePatterns(RewritePatternSet &patterns);

} // namespace mlir::fxmlir

#endif // FXMLIR_TRANSFORMS_PASSES_H
