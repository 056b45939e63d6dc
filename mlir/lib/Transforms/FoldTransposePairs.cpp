//===- FoldTransposePairs.cpp - t(t(x)) -> x ------------------------------===//
//
// AOTAutograd's graphs transpose twice where a linear layer's weight and its
// gradient pass through mm: the forward saves t(t(w)) for backward, the
// backward returns t(t(mm)) as the weight's gradient. Each t is an op call
// at run time, and a saved view costs AOTAutograd a detach per step: a
// LLaMA-style step ran 29 such pairs in each graph. t swaps a tensor's two
// dims (and leaves one or none as they are), so the pair is the tensor
// itself: same sizes, strides and storage.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace fxmlir {
#define GEN_PASS_DEF_FOLDTRANSPOSEPAIRS
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

struct FoldTransposePair : OpRewritePattern<TOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getSelf().getDefiningOp<TOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "not a transpose of a transpose");
    Value original = inner.getSelf();
    if (original.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "the pair's type differs from "
                                             "its input's");
    rewriter.replaceOp(op, original);
    return success();
  }
};

struct FoldTransposePairsPass
    : public PatternPass<FoldTransposePairsPass, impl::FoldTransposePairsBase,
                         /*kFusion=*/false> {
  static void populate(RewritePatternSet &patterns) {
    populateTransposePairFoldPatterns(patterns);
  }
};
} // namespace

void populateTransposePairFoldPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldTransposePair>(patterns.getContext());
}
} // namespace fxmlir
