//===- ExpandBF16Conversions.cpp - bf16 conversions as integer ops --------===//

#include "fxmlir/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_EXPANDBF16CONVERSIONS
#include "fxmlir/Conversion/Passes.h.inc"
} // namespace mlir::fxmlir

using namespace mlir;
using namespace mlir::fxmlir;

namespace {
struct ExpandBF16ConversionsPass
    : public mlir::fxmlir::impl::ExpandBF16ConversionsBase<
          ExpandBF16ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
