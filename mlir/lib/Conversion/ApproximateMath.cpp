//===- ApproximateMath.cpp - polynomial approximations of math ops --------===//

#include "fxmlir/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "fxmlir/Conversion/Passes.h.inc"
} // namespace mlir::fxmlir

using namespace mlir;
using namespace mlir::fxmlir;

namespace {
struct ApproximateMathPass
    : public mlir::fxmlir::impl::ApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    // Ops without an approximation first become ones with one (powf ->
    // exp/log, rsqrt -> 1/sqrt: sqrt is an instruction everywhere).
    RewritePatternSet expansions(&getContext());
    math::populateExpansionPatterns(expansions, {"powf", "fpowi", "rsqrt"});
    if (failed(applyPatternsGreedily(getOperation(), std::move(expansions))))
      return signalPassFailure();

    auto approximated = [](StringRef name) {
      return name.consume_front("math.") &&
             llvm::is_contained({"exp", "expm1", "log", "log1p", "log2",
                                 "tanh", "erf", "erfc", "atan", "atan2",
                                 "sin", "cos", "asin", "acos", "cbrt"},
                                name);
    };
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, approximated);
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
