//===- FuseElementwise.cpp - elementwise fusion with recomputation --------===//

#include "SplitAtConcat.h"

#include "fxmlir/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "fxmlir/Conversion/Passes.h.inc"
} // namespace mlir::fxmlir

using namespace mlir;
using namespace mlir::fxmlir;

namespace {
struct FuseElementwisePass
    : public mlir::fxmlir::impl::FuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    unsigned limit = maxRecomputeOps;
    // Several users: recompute cheap arithmetic, not transcendental math
    // (softmax's exp feeds both its sum and its result). The bound is on the
    // fused body, not the producer's: a chain of reused values (x = x * x *
    // 0.5, repeated) fused from its end would otherwise copy each small
    // producer into a consumer that already holds copies, and grow
    // exponentially.
    auto cheap = [limit](linalg::GenericOp producer, size_t consumerSize) {
      return producer.getBlock()->getOperations().size() + consumerSize <=
                 limit &&
             llvm::none_of(producer.getBody()->getOperations(),
                           [](Operation &op) {
                             return isa<math::MathDialect>(op.getDialect());
                           });
    };
    linalg::ControlFusionFn control = [cheap](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer)
        return false;
      // A producer the consumer broadcasts (a per-row statistic read along
      // the row) would be recomputed for every element it is read at.
      auto consumer = cast<linalg::LinalgOp>(fused->getOwner());
      if (!consumer.getMatchingIndexingMap(fused).isPermutation())
        return false;
      if (producer->hasOneUse())
        return true;
      auto generic = dyn_cast<linalg::GenericOp>(producer);
      return generic &&
             cheap(generic, consumer.getBlock()->getOperations().size());
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    populateSplitAtConcatPatterns(
        patterns, [cheap](linalg::GenericOp op) { return cheap(op, 0); });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();

    // The concatenations left (of results, or read by reductions) write
    // each piece into its slice of one tensor.
    RewritePatternSet decompose(ctx);
    tensor::populateDecomposeTensorConcatPatterns(decompose);
    if (failed(applyPatternsGreedily(getOperation(), std::move(decompose))))
      signalPassFailure();
  }
};
} // namespace
