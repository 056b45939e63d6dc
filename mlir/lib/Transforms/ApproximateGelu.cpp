//===- ApproximateGelu.cpp - erf GELU as tanh GELU (opt-in) ---------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {
#define GEN_PASS_DEF_APPROXIMATEGELU
#include "fxmlir/Transforms/Passes.h.inc"

namespace approximation {
#include "fxmlir/Transforms/Patterns/GeluApproximation.inc"
} // namespace approximation

namespace {
struct ApproximateGeluPass
    : public PatternPass<ApproximateGeluPass, impl::ApproximateGeluBase,
                         /*kFusion=*/false> {
  static void populate(RewritePatternSet &patterns) {
    populateGeluApproximationPatterns(patterns);
  }
};
} // namespace

void populateGeluApproximationPatterns(RewritePatternSet &patterns) {
  approximation::populateWithGenerated(patterns);
}
} // namespace fxmlir
