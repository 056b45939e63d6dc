//===- FuseBiasAddDropout.cpp - bias_add + dropout (+ residual) fusion ----===//
//
// The DRR patterns of Patterns/BiasAddDropoutFusions.td fuse a dropout of a
// bias_add; the pattern here, tried first on the same dropout, also takes
// the residual add of its output (Megatron's bias_dropout_add):
//   add(residual, dropout(bias_add(x, b)))         before autodiff
//   add(residual, native_dropout(bias_add(x, b))#0) after autodiff
// (either operand order) -> fused_bias_dropout_add(x, b, residual). It
// replaces two ops, the add and the dropout (whose bool mask, after
// autodiff, the backward graph reads), which DRR cannot: a DRR pattern
// rooted at the add would leave the dropout behind, and a random op is
// never erased as dead.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_FUSEBIASADDDROPOUT
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// DropoutOp before autodiff (mask packed, no mask result), NativeDropoutOp
/// after (bool mask result).
template <typename Dropout>
struct FuseResidualDropout : OpRewritePattern<Dropout> {
  static constexpr bool kPacked = std::is_same_v<Dropout, DropoutOp>;

  // Three ops matched: above the DRR patterns of the dropout alone (two).
  explicit FuseResidualDropout(MLIRContext *context)
      : OpRewritePattern<Dropout>(context, /*benefit=*/3) {}

  LogicalResult matchAndRewrite(Dropout dropout,
                                PatternRewriter &rewriter) const override {
    Value output = dropout->getResult(0);
    auto sum = dropout.getInput().template getDefiningOp<BiasAddOp>();
    if (!sum || !sum->hasOneUse() || !isFusibleTensor(sum.getX()) ||
        !isActiveDropout(dropout.getTrainAttr(), dropout.getPAttr()))
      return rewriter.notifyMatchFailure(
          dropout, "no training dropout of a single-use fusible bias_add");
    auto add = dyn_cast_or_null<AddTensorOp>(
        output.hasOneUse() ? *output.getUsers().begin() : nullptr);
    if (!add || !isScalar(add.getAlphaAttr(), 1))
      return rewriter.notifyMatchFailure(dropout, "no residual add");
    Value residual = add.getSelf() == output ? add.getOther() : add.getSelf();
    // No broadcast, no promotion (autocast adds a bf16 dropout to an f32
    // residual): the kernel reads and writes x's type.
    if (residual == output || residual.getType() != output.getType() ||
        add.getType() != output.getType())
      return rewriter.notifyMatchFailure(dropout,
                                         "the add broadcasts or promotes");
    // The fused op stands where the add is: the mask's readers must come
    // after it.
    Value mask = kPacked ? Value() : dropout->getResult(1);
    if (mask && !llvm::all_of(mask.getUsers(), [&](Operation *user) {
          return user->getBlock() == add->getBlock() &&
                 add->isBeforeInBlock(user);
        }))
      return rewriter.notifyMatchFailure(dropout, "the mask is read earlier");

    rewriter.setInsertionPoint(add);
    Type maskType = kPacked ? packedMaskType(sum.getX()) : mask.getType();
    auto fused = FusedBiasDropoutAddOp::create(
        rewriter, add.getLoc(), add.getType(), maskType, sum.getX(),
        sum.getBias(), residual, sum.getAxisAttr(), dropout.getPAttr(),
        rewriter.getBoolAttr(kPacked));
    if (mask)
      rewriter.replaceAllUsesWith(mask, fused.getMask());
    rewriter.replaceOp(add, fused.getY());
    rewriter.eraseOp(dropout);
    rewriter.eraseOp(sum);
    return success();
  }
};

struct FuseBiasAddDropoutPass
    : public impl::FuseBiasAddDropoutBase<FuseBiasAddDropoutPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateBiasAddDropoutFusionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     fusionRewriteConfig())))
      signalPassFailure();
  }
};
} // namespace

void populateResidualDropoutFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseResidualDropout<DropoutOp>,
               FuseResidualDropout<NativeDropoutOp>>(patterns.getContext());
}
} // namespace mlir::fxmlir
