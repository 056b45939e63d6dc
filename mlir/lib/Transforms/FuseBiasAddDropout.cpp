//===- FuseBiasAddDropout.cpp - bias op + dropout (+ residual) fusion -----===//
//
// A training dropout of a single-use bias op (OneFlow's second seed fusion,
// and Megatron's bias_dropout_add when a residual add takes its output):
//   [add(residual,] dropout(f(x, b))[)]            before autodiff
//   [add(residual,] native_dropout(f(x, b))#0[)]   after autodiff
// where f is bias_add or a fused bias_add + activation (the
// fuse-bias-add-activation pass ran first: `Linear -> GELU -> Dropout`),
// becomes fused_bias_dropout_add(x, b, residual or none, activation), whose
// kernel draws the mask. The add, when it joins, is on either side, adds no
// broadcast and no promotion. Before autodiff the mask is packed at 1 bit
// per element (the fused op's own backward saves it); after autodiff,
// native_dropout's bool mask is a forward output the backward graph reads,
// so it stays bool. The pattern replaces up to three ops, the add and the
// dropout two roots, which DRR cannot say (a random op is never erased as
// dead).
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_FUSEBIASADDDROPOUT
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// act(x + bias): a bias op the fused dropout can compute first, with its
/// `activation` name (fused_ops.py's enum).
struct BiasActivation {
  Operation *op;
  Value x, bias;
  IntegerAttr axis;
  StringRef activation;
};

std::optional<BiasActivation> matchBiasActivation(Value input) {
  Operation *op = input.getDefiningOp();
  if (!op)
    return std::nullopt;
  using Result = std::optional<BiasActivation>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([](BiasAddOp sum) -> Result {
        return BiasActivation{sum, sum.getX(), sum.getBias(), sum.getAxisAttr(),
                              "none"};
      })
      .Case([](FusedBiasAddGeluOp gelu) -> Result {
        return BiasActivation{
            gelu, gelu.getX(), gelu.getBias(), gelu.getAxisAttr(),
            gelu.getApproximate() == "tanh" ? "gelu_tanh" : "gelu"};
      })
      .Case([](FusedBiasAddReluOp relu) -> Result {
        return BiasActivation{relu, relu.getX(), relu.getBias(),
                              relu.getAxisAttr(), "relu"};
      })
      .Case([](FusedBiasAddSiluOp silu) -> Result {
        return BiasActivation{silu, silu.getX(), silu.getBias(),
                              silu.getAxisAttr(), "silu"};
      })
      .Default([](Operation *) -> Result { return std::nullopt; });
}

/// The residual add that takes `output` as a whole, if any: alpha 1, the
/// other operand of output's type (no broadcast: a bias; no promotion:
/// autocast adds a bf16 dropout to an f32 residual), placed so that every
/// reader of `mask` (after autodiff) comes after it.
AddTensorOp matchResidualAdd(Value output, Value mask) {
  if (!output.hasOneUse())
    return nullptr;
  auto add = dyn_cast<AddTensorOp>(*output.getUsers().begin());
  if (!add || !isScalar(add.getAlphaAttr(), 1) ||
      add.getSelf().getType() != add.getOther().getType() ||
      add.getType() != output.getType())
    return nullptr;
  if (mask && !llvm::all_of(mask.getUsers(), [&](Operation *user) {
        return user->getBlock() == add->getBlock() &&
               add->isBeforeInBlock(user);
      }))
    return nullptr;
  return add;
}

/// DropoutOp before autodiff (mask packed, no mask result), NativeDropoutOp
/// after (bool mask result).
template <typename Dropout> struct FuseBiasDropout : OpRewritePattern<Dropout> {
  static constexpr bool kPacked = std::is_same_v<Dropout, DropoutOp>;
  using OpRewritePattern<Dropout>::OpRewritePattern;

  LogicalResult matchAndRewrite(Dropout dropout,
                                PatternRewriter &rewriter) const override {
    if (!isActiveDropout(dropout.getTrainAttr(), dropout.getPAttr()))
      return rewriter.notifyMatchFailure(dropout, "not a training dropout");
    std::optional<BiasActivation> producer =
        matchBiasActivation(dropout.getInput());
    if (!producer || !producer->op->hasOneUse())
      return rewriter.notifyMatchFailure(
          dropout, "the input is no single-use bias_add or fused bias_add + "
                   "activation");
    if (!isFusibleTensor(producer->x))
      return rewriter.notifyMatchFailure(dropout,
                                         "no fused kernel for the input type");

    Value output = dropout->getResult(0);
    Value mask = kPacked ? Value() : dropout->getResult(1);
    AddTensorOp add = matchResidualAdd(output, mask);
    Value residual;
    if (add)
      residual = add.getSelf() == output ? add.getOther() : add.getSelf();
    Operation *root = add ? add.getOperation() : dropout.getOperation();

    // The mask is drawn where the dropout drew it, so that random ops
    // between the dropout and its add keep eager's order of draws (what
    // eager_random reproduces), unless the residual comes later.
    Operation *residualDef = residual ? residual.getDefiningOp() : nullptr;
    bool residualLater = residualDef &&
                         residualDef->getBlock() == dropout->getBlock() &&
                         dropout->isBeforeInBlock(residualDef);
    rewriter.setInsertionPoint(residualLater ? root : dropout.getOperation());
    if (!residual)
      residual = createNone(rewriter, dropout.getLoc());
    Type maskType = kPacked ? packedMaskType(producer->x) : mask.getType();
    auto fused = FusedBiasDropoutAddOp::create(
        rewriter, root->getLoc(), output.getType(), maskType, producer->x,
        producer->bias, residual, producer->axis, dropout.getPAttr(),
        rewriter.getBoolAttr(kPacked),
        rewriter.getStringAttr(producer->activation),
        /*eager_random=*/BoolAttr()); // fxmlir-eager-random sets it
    if (mask)
      rewriter.replaceAllUsesWith(mask, fused.getMask());
    if (add)
      rewriter.replaceOp(add, fused.getY());
    else
      rewriter.replaceAllUsesWith(output, fused.getY());
    rewriter.eraseOp(dropout);
    rewriter.eraseOp(producer->op);
    return success();
  }
};

struct FuseBiasAddDropoutPass
    : public PatternPass<FuseBiasAddDropoutPass, impl::FuseBiasAddDropoutBase,
                         /*kFusion=*/true> {
  static void populate(RewritePatternSet &patterns) {
    populateBiasAddDropoutFusionPatterns(patterns);
  }
};
} // namespace

void populateBiasAddDropoutFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseBiasDropout<DropoutOp>, FuseBiasDropout<NativeDropoutOp>>(
      patterns.getContext());
}
} // namespace mlir::fxmlir
