//===- FuseBiasAddDropout.cpp - bias_add + dropout fusion -----------------===//

#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_FUSEBIASADDDROPOUT
#include "fxmlir/Transforms/Passes.h.inc"

namespace {
#include "fxmlir/Transforms/Patterns/BiasAddFusions.inc"

struct FuseBiasAddDropoutPass
    : public impl::FuseBiasAddDropoutBase<FuseBiasAddDropoutPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseBiasAddDropoutPattern>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::fxmlir
