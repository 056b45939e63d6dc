//===- Passes.h - fxmlir graph passes ---------------------------*- C++ -*-===//

#ifndef FXMLIR_TRANSFORMS_PASSES_H
#define FXMLIR_TRANSFORMS_PASSES_H

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Support/MLIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace fxmlir {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "fxmlir/Transforms/Passes.h.inc"

/// The pattern sets behind the passes, for any pass or driver to combine.
void populateDecomposePatterns(RewritePatternSet &patterns);
void populateBiasAddActivationFusionPatterns(RewritePatternSet &patterns);
void populateGemmEpilogueFusionPatterns(RewritePatternSet &patterns);
void populateLinearCrossEntropyFusionPatterns(RewritePatternSet &patterns);
void populateGeluApproximationPatterns(RewritePatternSet &patterns);
/// The seed's dropout of a bias_add: random_mask_like + its scale.
void populateBiasAddDropoutFusionPatterns(RewritePatternSet &patterns);
/// A mask draw (or a dropout of a bias_add + activation) in one kernel
/// with its scale and residual add.
void populateMaskDrawFusionPatterns(RewritePatternSet &patterns);
void populateRecomposePatterns(RewritePatternSet &patterns);
/// t(t(x)) -> x.
void populateTransposePairFoldPatterns(RewritePatternSet &patterns);
/// CPU embedding_dense_backward -> embedding_grad (its block reused).
void populateEmbeddingGradReusePatterns(RewritePatternSet &patterns);

/// The inverse of outlining one JIT region: the ops of private function
/// @name put back in place of each fxmlir.mlir_jit call of it (their FX node
/// names kept), and the function erased. Fails if there is no such function.
LogicalResult inlineJitRegion(ModuleOp module, StringRef name);

} // namespace fxmlir

#endif // FXMLIR_TRANSFORMS_PASSES_H
