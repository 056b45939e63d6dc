//===- FuseBiasAddActivation.cpp - bias_add + activation fusion -----------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_FUSEBIASADDACTIVATION
#include "fxmlir/Transforms/Passes.h.inc"

namespace {
struct FuseBiasAddActivationPass
    : public impl::FuseBiasAddActivationBase<FuseBiasAddActivationPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateBiasAddActivationFusionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     fusionRewriteConfig())))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::fxmlir
