//===- FuseLinearCrossEntropy.cpp - a language model's head and loss ------===//
//
// Before autodiff, a cross-entropy of a linear layer's output:
//   cross_entropy_loss([view|cast]*(linear(x, w, b)), target)
//       -> fused_linear_cross_entropy(x, w, b, target)
// as transformers' causal-LM loss (`logits.float()`, shifted labels viewed
// to rows), masked-LM loss and F.cross_entropy spell it, mean or sum, any
// ignore_index. The fused op's autograd formula saves the rows' log-sum-exp
// instead of the [tokens, vocabulary] log-softmax, and its gradient never
// materializes the logits' gradient. Where the graph uses the layer's
// output elsewhere (it returns the logits) and upcasts it for the loss
// (autocast's bf16 logits, `.float()`), the fused op computes and returns
// it (`return_logits`), so that the gradient reaching it joins the loss's
// in the op's backward instead of taking two more matrix products; float32
// logits the graph reads elsewhere are left unfused (no memory to save).
// Otherwise the op computes the logits a block of columns at a time.
// Autocast's cast of a float32 weight to the layer's 16-bit dtype folds into
// the op (it casts each block as it reads it) where nothing else reads the
// weight: no 16-bit copy of the [vocabulary, hidden] weight is made and
// saved for backward, and the weight's gradient comes out in float32, block
// by block.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Support/LinearLossBlocks.h"
#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

namespace fxmlir {
#define GEN_PASS_DEF_FUSELINEARCROSSENTROPY
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// Whether `op` casts a floating-point tensor to another floating-point
/// dtype and does nothing else (a view or copy to another device does more).
static bool castsDtypeOnly(Operation *op) {
  if (auto to = dyn_cast<ToDtypeOp>(op))
    return !to.getMemoryFormat();
  auto copy = dyn_cast<UnderscoreToCopyOp>(op);
  return copy && fxmlir::isFloatCast(copy);
}

/// The float32 weight that `weight` is autocast's cast of, to the 16-bit
/// dtype of the layer, where nothing else reads the cast or the weight;
/// else `weight`. A tied weight (GPT-2's embedding reads it too) keeps its
/// cast: its gradient is a sum with the other use's, which a 16-bit
/// gradient joins at half the bytes (and in place, fxmlir.inplace_sums).
static Value foldedWeight(Value weight) {
  Operation *cast = weight.getDefiningOp();
  if (!cast || !castsDtypeOnly(cast) || !cast->hasOneUse())
    return weight;
  Value source = cast->getOperand(0);
  if (!source.hasOneUse())
    return weight;
  Type to = getElementTypeOrSelf(weight);
  if (!getElementTypeOrSelf(source).isF32() || !(to.isBF16() || to.isF16()))
    return weight;
  return source;
}

/// The linear layer whose output the loss's input is, through single-use
/// views and float casts, and the op of that chain that uses the layer's
/// output; a null layer and why not otherwise.
struct Producer {
  LinearOp linear;
  Operation *chainStart = nullptr;
  StringRef reason;
};

static Producer producingLinear(CrossEntropyLossOp loss) {
  Operation *user = loss;
  Value value = loss.getSelf();
  while (Operation *def = value.getDefiningOp()) {
    if (auto linear = dyn_cast<LinearOp>(def))
      return {linear, user, ""};
    if (!isa<ViewOp, ReshapeOp, UnderscoreUnsafeViewOp>(def) &&
        !castsDtypeOnly(def))
      break;
    if (!def->hasOneUse())
      return {LinearOp(), nullptr,
              "a view or cast of the logits has another use"};
    user = def;
    value = def->getOperand(0);
    if (!isa<FloatType>(getElementTypeOrSelf(value)))
      break;
  }
  return {LinearOp(), nullptr,
          "the logits are not a linear layer's output (through views and "
          "float casts)"};
}

struct FuseLinearCrossEntropyPattern : OpRewritePattern<CrossEntropyLossOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyLossOp loss,
                                PatternRewriter &rewriter) const override {
    if (!isa<NoneType>(loss.getWeight().getType()))
      return rewriter.notifyMatchFailure(loss, "class weights are given");
    if (loss.getLabelSmoothing().convertToDouble() != 0.0)
      return rewriter.notifyMatchFailure(loss, "label smoothing is not 0");
    if (loss.getReduction() != 1 && loss.getReduction() != 2)
      return rewriter.notifyMatchFailure(
          loss, "reduction is none (per-token losses), not mean or sum");
    auto rowsType = cast<RankedTensorType>(loss.getSelf().getType());
    if (rowsType.getRank() != 2 || !rowsType.getElementType().isF32())
      return rewriter.notifyMatchFailure(
          loss, "the input is not float32 [tokens, classes] (no upcast to "
                "float32 before the loss)");
    auto targetType = cast<RankedTensorType>(loss.getTarget().getType());
    if (targetType.getRank() != 1 || !targetType.getElementType().isInteger())
      return rewriter.notifyMatchFailure(
          loss, "the target is not one class index per row");
    auto [linear, chainStart, reason] = producingLinear(loss);
    if (!linear)
      return rewriter.notifyMatchFailure(loss, reason);
    Value x = linear.getInput();
    auto xType = cast<RankedTensorType>(x.getType());
    auto weightType = cast<RankedTensorType>(linear.getWeight().getType());
    Type element = xType.getElementType();
    if (!isFusibleTensor(linear.getResult()) ||
        weightType.getElementType() != element ||
        getElementTypeOrSelf(linear.getResult()) != element)
      return rewriter.notifyMatchFailure(
          loss, "the linear layer is not one f32/f16/bf16 dtype on CPU or "
                "CUDA");
    int64_t classes = weightType.getRank() == 2 ? weightType.getDimSize(0)
                                                : ShapedType::kDynamic;
    if (xType.getRank() < 2 || ShapedType::isDynamic(xType.getShape().back()) ||
        ShapedType::isDynamic(classes) ||
        rowsType.getDimSize(1) != classes)
      return rewriter.notifyMatchFailure(
          loss, "the layer's rows and classes are not the loss's (a static "
                "vocabulary and hidden size, rows viewed whole)");

    // Logits that fit in one block save nothing by blocks, and the fused
    // op's float32 temporaries of a block outweigh what it saves (measured
    // on the zoo's tiny models). Dynamic rows count as a short batch's, so
    // that a loss fuses at every length or at none.
    constexpr int64_t kDynamicRows = 256;
    int64_t rows = rowsType.getDimSize(0);
    int64_t sizedRows = ShapedType::isDynamic(rows) ? kDynamicRows : rows;
    if (sizedRows * classes <= kLinearLossBlockElements)
      return rewriter.notifyMatchFailure(
          loss, "the logits fit in one block (" +
                    Twine(kLinearLossBlockElements) + " elements, " +
                    Twine(kDynamicRows) +
                    " rows where they vary): fusing would save no memory");
    // The graph uses the layer's output elsewhere (returns the logits): the
    // fused op returns it, so that its gradient joins the loss's.
    Value logits = linear.getResult();
    bool returnLogits = !logits.hasOneUse();
    // Float32 logits the graph reads besides the loss are saved for backward
    // and take a gradient either way; the unfused backward frees them before
    // its weight gradient, the fused one holds a block more. Logits it only
    // returns are differentiated outside the graph (fxmlir.returned_logits):
    // fused, neither the log-softmax nor a gradient of them exists.
    bool onlyReturned = llvm::all_of(logits.getUsers(), [&](Operation *user) {
      return user == chainStart ||
             user->hasTrait<mlir::OpTrait::IsTerminator>();
    });
    if (returnLogits && element == rowsType.getElementType() && !onlyReturned)
      return rewriter.notifyMatchFailure(
          loss, "the graph reads its float32 logits besides the loss and "
                "returning them: fusing would save no memory (they are kept "
                "for backward either way)");
    // The fused op stands where the loss is: the logits' other uses must
    // come after it.
    for (Operation *user : logits.getUsers())
      if (user != chainStart && (user->getBlock() != loss->getBlock() ||
                                 user->isBeforeInBlock(loss)))
        return rewriter.notifyMatchFailure(
            loss, "the logits are used before the loss");
    auto logitsType = cast<RankedTensorType>(logits.getType());
    if (!returnLogits)
      logitsType = RankedTensorType::get({0}, element, logitsType.getEncoding());
    auto lseType = RankedTensorType::get({rows},
                                         rewriter.getF32Type(),
                                         rowsType.getEncoding());
    auto fused = FusedLinearCrossEntropyOp::create(
        rewriter, loss.getLoc(), loss.getType(), lseType, logitsType, x,
        foldedWeight(linear.getWeight()), linear.getBias(), loss.getTarget(),
        loss.getReductionAttr(), loss.getIgnoreIndexAttr(),
        rewriter.getBoolAttr(returnLogits));
    rewriter.replaceOp(loss, fused.getLoss());
    if (returnLogits)
      rewriter.replaceAllUsesWith(logits, fused.getLogits());
    return success();
  }
};

struct FuseLinearCrossEntropyPass
    : public PatternPass<FuseLinearCrossEntropyPass,
                         impl::FuseLinearCrossEntropyBase,
                         /*kFusion=*/true> {
  static void populate(RewritePatternSet &patterns) {
    populateLinearCrossEntropyFusionPatterns(patterns);
  }
};
} // namespace

void populateLinearCrossEntropyFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseLinearCrossEntropyPattern>(patterns.getContext());
}
} // namespace fxmlir
