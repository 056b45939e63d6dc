//===- FuseBiasAddActivation.cpp - bias_add + activation fusion -----------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"

namespace fxmlir {
#define GEN_PASS_DEF_FUSEBIASADDACTIVATION
#include "fxmlir/Transforms/Passes.h.inc"

namespace {
struct FuseBiasAddActivationPass
    : public PatternPass<FuseBiasAddActivationPass,
                         impl::FuseBiasAddActivationBase,
                         /*kFusion=*/true> {
  static void populate(RewritePatternSet &patterns) {
    populateBiasAddActivationFusionPatterns(patterns);
  }
};
} // namespace
} // namespace fxmlir
