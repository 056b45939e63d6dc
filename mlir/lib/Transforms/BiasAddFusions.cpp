//===- BiasAddFusions.cpp - the bias_add fusion pattern sets --------------===//

#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

namespace mlir::fxmlir {
namespace {
#include "fxmlir/Transforms/Patterns/BiasAddFusions.inc"
} // namespace

void populateBiasAddActivationFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseBiasAddGeluPattern, FuseBiasAddGeluGradPattern,
               FuseBiasAddReluPattern, FuseBiasAddSiluPattern,
               FuseBiasAddSiluGradPattern>(patterns.getContext());
}

void populateBiasAddDropoutFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseBiasAddDropoutPattern>(patterns.getContext());
}
} // namespace mlir::fxmlir
