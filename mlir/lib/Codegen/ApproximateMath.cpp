//===- ApproximateMath.cpp - polynomial approximations of math ops --------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace fxmlir {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

/// MLIR's f32 log approximations take the exponent from the exponent field,
/// which is wrong for subnormals (log(2^-128) came out as -87.7, not
/// -88.7): `log(x)` becomes `log(x * 2^24) - 24 ln 2` for x below the
/// smallest normal number (zero and negative x keep their -inf and NaN).
static void scaleSubnormalLogs(Operation *root) {
  root->walk([](Operation *op) {
    double logOfScale;
    if (isa<math::LogOp>(op))
      logOfScale = 24 * std::log(2.0);
    else if (isa<math::Log2Op>(op))
      logOfScale = 24;
    else
      return;
    Value x = op->getOperand(0);
    if (!x.getType().isF32())
      return;
    ImplicitLocOpBuilder b(op->getLoc(), op);
    auto constant = [&](double value) -> Value {
      return arith::ConstantOp::create(b, b.getF32FloatAttr(value));
    };
    Value subnormal = arith::CmpFOp::create(
        b, arith::CmpFPredicate::OLT, x,
        constant(std::numeric_limits<float>::min()));
    Value scaled = arith::MulFOp::create(b, x, constant(0x1p24));
    op->setOperand(0, arith::SelectOp::create(b, subnormal, scaled, x));
    b.setInsertionPointAfter(op);
    Value correction = arith::SelectOp::create(
        b, subnormal, constant(logOfScale), constant(0.0));
    Value result = op->getResult(0);
    auto corrected = arith::SubFOp::create(b, result, correction);
    result.replaceAllUsesExcept(corrected, corrected);
  });
}

namespace {
struct ApproximateMathPass
    : public fxmlir::impl::ApproximateMathBase<ApproximateMathPass> {
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
    scaleSubnormalLogs(getOperation());
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, approximated);
    populateMathPolynomialApproximationPatterns(patterns, approximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
