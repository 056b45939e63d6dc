//===- ReuseEmbeddingGrads.cpp - CPU embedding gradients in reused blocks -===//
//
//   embedding_dense_backward(g, i, n, pad, scale_grad_by_freq=false)
//       -> fxmlir.embedding_grad(g, i, n, pad)      (CPU tensors)
// The result is the same, bit for bit. ATen's makes it in a fresh
// zero-filled block each step: a large vocabulary's gradient (LLaMA's
// [32000, 512] float32, 62.5 MiB) is a block glibc maps anew, its pages
// faulted in one at a time once the loop has freed the step before's
// gradient (15.5 ms of a one-thread float32 LLaMA-style step, AMD EPYC).
// The fused op takes that freed block back (csrc/ops/ReusedBlocks.h) and
// zeroes it in place. Frequency-scaled gradients keep ATen's op (the op has
// no such scaling), and so do other devices' (CUDA's caching allocator
// reuses blocks already).
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"

namespace fxmlir {
#define GEN_PASS_DEF_REUSEEMBEDDINGGRADS
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

struct ReuseEmbeddingGrad : OpRewritePattern<EmbeddingDenseBackwardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(EmbeddingDenseBackwardOp op,
                                PatternRewriter &rewriter) const override {
    Value grad = op.getGradOutput(), indices = op.getIndices();
    if (!isCpuTensor(grad) || !isCpuTensor(indices) ||
        !isCpuTensor(op.getResult()))
      return rewriter.notifyMatchFailure(op, kOtherDeviceReason);
    if (op.getScaleGradByFreq())
      return rewriter.notifyMatchFailure(op, "scale_grad_by_freq: the fused "
                                             "op does not scale");
    auto gradType = cast<RankedTensorType>(grad.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    if (gradType.getRank() < 1 ||
        failed(verifyCompatibleShape(indicesType.getShape(),
                                     gradType.getShape().drop_back())))
      return rewriter.notifyMatchFailure(
          op, "the indices are not shaped as grad's leading dims");
    rewriter.replaceOpWithNewOp<EmbeddingGradOp>(
        op, op.getType(), grad, indices, op.getNumWeightsAttr(),
        op.getPaddingIdxAttr());
    return success();
  }
};

struct ReuseEmbeddingGradsPass
    : public PatternPass<ReuseEmbeddingGradsPass, impl::ReuseEmbeddingGradsBase,
                         /*kFusion=*/true> {
  static void populate(RewritePatternSet &patterns) {
    populateEmbeddingGradReusePatterns(patterns);
  }
};
} // namespace

void populateEmbeddingGradReusePatterns(RewritePatternSet &patterns) {
  patterns.add<ReuseEmbeddingGrad>(patterns.getContext());
}
} // namespace fxmlir
