//===- FuseElementwise.cpp - elementwise fusion with recomputation --------===//

#include "FuseSiblings.h"
#include "SplitAtConcat.h"

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
/// A producer whose other users all come after its consumer (a function
/// result: SwiGLU's silu(a), saved for the backward) fused into the
/// consumer, which yields the producer's values too; the producer goes. One
/// loop writes both, nothing is recomputed. (Upstream fusion keeps such a
/// producer for its other users and recomputes it in the consumer.)
struct FuseKeepingProducerResults : OpRewritePattern<linalg::GenericOp> {
  FuseKeepingProducerResults(MLIRContext *ctx)
      : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    // Into elementwise consumers only: a reduction with an elementwise
    // result is no row reduction to the GPU lowering.
    if (consumer.getNumLoops() != consumer.getNumParallelLoops())
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      // The consumer reads the producer once (x * x reads it twice: the
      // fused op would still read the producer, which must then stay).
      if (!producer || producer->hasOneUse() ||
          llvm::count_if(consumer->getOperands(),
                         [&](Value value) {
                           return value.getDefiningOp() == producer;
                         }) != 1 ||
          !linalg::areElementwiseOpsFusable(&operand) ||
          !consumer.getMatchingIndexingMap(&operand).isPermutation() ||
          !llvm::all_of(producer->getUsers(), [&](Operation *user) {
            return user == consumer ||
                   (user->getBlock() == consumer->getBlock() &&
                    consumer->isBeforeInBlock(user));
          }))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};
} // namespace

namespace {
struct FuseElementwisePass
    : public fxmlir::impl::FuseElementwiseBase<FuseElementwisePass> {
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
    patterns.add<FuseKeepingProducerResults>(ctx);
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

    // Then elementwise ops over the same elements that share an operand
    // become one loop nest; the concatenations left (of results, or read by
    // reductions) write each piece into its slice of one tensor.
    RewritePatternSet siblings(ctx);
    populateFuseSiblingsPatterns(siblings, kMaxSiblingOperands);
    tensor::populateDecomposeTensorConcatPatterns(siblings);
    if (failed(applyPatternsGreedily(getOperation(), std::move(siblings))))
      signalPassFailure();
  }
};
} // namespace
