//===- FuseMaskDraws.cpp - a dropout's mask drawn in its kernel -----------===//
//
// After fxmlir-fuse-bias-add-dropout (the seed's rewrite), a dropout of a
// bias add is two kernels: random_mask_like writes a bool mask and
// fused_bias_add_mask_scale reads it. When the draw feeds only that scale
// (and, after autodiff, the backward graph), both become one
// fused_bias_dropout_add, whose kernel draws the mask as it applies it:
// before autodiff the mask is saved packed at 1 bit per element (the fused
// op's own backward reads it); after autodiff the bool mask stays a result
// for the backward graph. A residual add of the output joins the kernel
// (Megatron's bias_dropout_add).
//
// A dropout of a fused bias_add + activation (`Linear -> GELU -> Dropout`,
// after fxmlir-fuse-bias-add-activation) has no two-kernel form: it becomes
// fused_bias_dropout_add with its activation directly, here too.
//
// These patterns replace up to three ops, the add and the dropout two
// roots, which DRR cannot say (a random op is never erased as dead).
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

namespace fxmlir {
#define GEN_PASS_DEF_FUSEMASKDRAWS
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// What fused_bias_dropout_add computes, and the ops it replaces.
struct FusedDropout {
  Value x, bias;
  IntegerAttr axis;
  FloatAttr p;
  StringRef activation;
  BoolAttr eagerRandom;
  /// Where the mask is drawn: the dropout (or the draw) it replaces, so
  /// that random ops between it and its add keep eager's order of draws.
  Operation *draw;
  /// The dropout's output and the mask readers besides the fused kernel
  /// (after autodiff, the backward graph), if any.
  Value output, mask;
};

/// The residual add that takes `output` as a whole, if any: alpha 1, the
/// other operand of output's type (no broadcast: a bias; no promotion:
/// autocast adds a bf16 dropout to an f32 residual), placed so that every
/// reader of `mask` comes after it.
AddTensorOp matchResidualAdd(Value output, Value mask, Operation *except) {
  if (!output.hasOneUse())
    return nullptr;
  auto add = dyn_cast<AddTensorOp>(*output.getUsers().begin());
  if (!add || !isScalar(add.getAlphaAttr(), 1) ||
      add.getSelf().getType() != add.getOther().getType() ||
      add.getType() != output.getType())
    return nullptr;
  if (mask && !llvm::all_of(mask.getUsers(), [&](Operation *user) {
        return user == except || (user->getBlock() == add->getBlock() &&
                                  add->isBeforeInBlock(user));
      }))
    return nullptr;
  return add;
}

/// Replaces `fused.output` (or its residual add) with one
/// fused_bias_dropout_add; the caller erases the ops it replaced. `except`
/// is a mask reader the rewrite erases (the scale of a draw).
LogicalResult rewriteToFusedDropout(PatternRewriter &rewriter,
                                    const FusedDropout &fused, bool packed,
                                    Operation *except) {
  AddTensorOp add = matchResidualAdd(fused.output, fused.mask, except);
  Value residual;
  if (add)
    residual =
        add.getSelf() == fused.output ? add.getOther() : add.getSelf();
  Operation *root = add ? add.getOperation() : fused.output.getDefiningOp();
  // Drawn where the dropout drew, unless the residual comes later.
  DominanceInfo dominance;
  auto availableAt = [&](Value value, Operation *op) {
    return dominance.properlyDominates(value, op);
  };
  Operation *at = residual && !availableAt(residual, fused.draw)
                      ? root
                      : fused.draw;
  if (!availableAt(fused.x, at) || !availableAt(fused.bias, at) ||
      (residual && !availableAt(residual, at)))
    return rewriter.notifyMatchFailure(
        root, "an input is defined after the mask draw");
  rewriter.setInsertionPoint(at);
  if (!residual)
    residual = createNone(rewriter, fused.draw->getLoc());
  Type maskType = packed ? packedMaskType(fused.x) : fused.mask.getType();
  auto op = FusedBiasDropoutAddOp::create(
      rewriter, root->getLoc(), fused.output.getType(), maskType, fused.x,
      fused.bias, residual, fused.axis, fused.p, rewriter.getBoolAttr(packed),
      rewriter.getStringAttr(fused.activation), fused.eagerRandom);
  if (fused.mask && !packed)
    rewriter.replaceUsesWithIf(fused.mask, op.getMask(), [&](OpOperand &use) {
      return use.getOwner() != except;
    });
  if (add)
    rewriter.replaceOp(add, op.getY());
  else
    rewriter.replaceAllUsesWith(fused.output, op.getY());
  return success();
}

/// random_mask_like + fused_bias_add_mask_scale -> fused_bias_dropout_add,
/// when the scale is the dropout's, 1 / (1 - p).
struct MergeMaskDraw : OpRewritePattern<FusedBiasAddMaskScaleOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusedBiasAddMaskScaleOp scale,
                                PatternRewriter &rewriter) const override {
    auto draw = scale.getMask().getDefiningOp<RandomMaskLikeOp>();
    if (!draw)
      return rewriter.notifyMatchFailure(scale, "the mask is not drawn by "
                                                "random_mask_like");
    if (draw.getLike().getType() != scale.getX().getType())
      return rewriter.notifyMatchFailure(scale,
                                         "the mask is drawn like another type");
    double p = draw.getP().convertToDouble();
    double expected = 1.0 / (1.0 - p);
    if (std::abs(scale.getScale().convertToDouble() - expected) >
        1e-12 * expected)
      return rewriter.notifyMatchFailure(scale,
                                         "the scale is not 1 / (1 - p)");
    Value mask = draw.getResult();
    bool packed = mask.hasOneUse();
    FusedDropout fused{scale.getX(),      scale.getBias(),
                       scale.getAxisAttr(), draw.getPAttr(),
                       "none",            draw.getEagerRandomAttr(),
                       draw,              scale.getResult(),
                       packed ? Value() : mask};
    if (failed(rewriteToFusedDropout(rewriter, fused, packed, scale)))
      return failure();
    rewriter.eraseOp(scale);
    rewriter.eraseOp(draw);
    return success();
  }
};

/// DropoutOp before autodiff (mask packed, no mask result), NativeDropoutOp
/// after (bool mask result) of a fused bias_add + activation.
template <typename Dropout>
struct FuseActivationDropout : OpRewritePattern<Dropout> {
  static constexpr bool kPacked = std::is_same_v<Dropout, DropoutOp>;
  using OpRewritePattern<Dropout>::OpRewritePattern;

  LogicalResult matchAndRewrite(Dropout dropout,
                                PatternRewriter &rewriter) const override {
    if (!isActiveDropout(dropout.getTrainAttr(), dropout.getPAttr()))
      return rewriter.notifyMatchFailure(dropout, "not a training dropout");
    auto producer =
        dropout.getInput().template getDefiningOp<FusedBiasActOp>();
    if (!producer || !producer->hasOneUse())
      return rewriter.notifyMatchFailure(
          dropout, "the input is no single-use fused bias_add + activation");
    if (!isFusibleTensor(producer.getX()))
      return rewriter.notifyMatchFailure(dropout,
                                         "no fused kernel for the input type");
    FusedDropout fused{producer.getX(),
                       producer.getBias(),
                       producer.getAxisAttr(),
                       dropout.getPAttr(),
                       producer.getActivation(),
                       /*eagerRandom=*/BoolAttr(), // fxmlir-eager-random sets it
                       dropout,
                       dropout->getResult(0),
                       kPacked ? Value() : dropout->getResult(1)};
    if (failed(rewriteToFusedDropout(rewriter, fused, kPacked, nullptr)))
      return failure();
    rewriter.eraseOp(dropout);
    rewriter.eraseOp(producer);
    return success();
  }
};

struct FuseMaskDrawsPass
    : public PatternPass<FuseMaskDrawsPass, impl::FuseMaskDrawsBase,
                         /*kFusion=*/true> {
  static void populate(RewritePatternSet &patterns) {
    populateMaskDrawFusionPatterns(patterns);
  }
};
} // namespace

void populateMaskDrawFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<MergeMaskDraw, FuseActivationDropout<DropoutOp>,
               FuseActivationDropout<NativeDropoutOp>>(patterns.getContext());
}
} // namespace fxmlir
