//===- FuseBiasAddDropout.cpp - bias_add + dropout fusion -----------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_FUSEBIASADDDROPOUT
#include "fxmlir/Transforms/Passes.h.inc"

namespace {
struct FuseBiasAddDropoutPass
    : public impl::FuseBiasAddDropoutBase<FuseBiasAddDropoutPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateBiasAddDropoutFusionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     fusionRewriteConfig())))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::fxmlir
