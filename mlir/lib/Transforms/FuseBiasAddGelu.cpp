//===- FuseBiasAddGelu.cpp - bias_add + gelu fusion -----------------------===//

#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_FUSEBIASADDGELU
#include "fxmlir/Transforms/Passes.h.inc"

namespace {
#include "fxmlir/Transforms/Patterns/BiasAddFusions.inc"

struct FuseBiasAddGeluPass
    : public impl::FuseBiasAddGeluBase<FuseBiasAddGeluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseBiasAddGeluPattern, FuseBiasAddGeluGradPattern>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::fxmlir
