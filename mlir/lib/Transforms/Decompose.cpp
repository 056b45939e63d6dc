//===- Decompose.cpp - linear layers to one canonical bias_add form -------===//
//
// addmm(b, x, w) -> bias_add(mm(x, w), b); linear(x, w, b) ->
// bias_add(linear(x, w, none), b); add(x, b) with a 1-D b broadcast along the
// last dim -> bias_add(x, b); and a single-use bias_add sinks below a view
// that keeps the last dim, so that gelu/dropout meet the bias_add directly.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Support/Dims.h"
#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {
#define GEN_PASS_DEF_DECOMPOSE
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// Whether the 1-D `bias` can be added along the last dim of `input`,
/// giving `result`: same element type and device, matching sizes.
static bool isLastDimBias(Value input, Value bias, Value result) {
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  auto biasType = dyn_cast<RankedTensorType>(bias.getType());
  if (!inputType || !biasType || inputType.getRank() < 1 ||
      biasType.getRank() != 1 || inputType != result.getType() ||
      inputType.getElementType() != biasType.getElementType() ||
      getDevice(inputType) != getDevice(biasType))
    return false;
  int64_t last = inputType.getShape().back();
  int64_t size = biasType.getShape().front();
  // A size-1 addend broadcasts over a dynamic dim: it is not a bias. (A
  // dynamic size is never 1: torch specializes sizes 0 and 1.)
  if (size == 1)
    return last == 1;
  return last == size || ShapedType::isDynamic(last) ||
         ShapedType::isDynamic(size);
}

static BiasAddOp createBiasAdd(PatternRewriter &rewriter, Location loc,
                               Value input, Value bias) {
  int64_t axis = cast<RankedTensorType>(input.getType()).getRank() - 1;
  return BiasAddOp::create(rewriter, loc, input.getType(), input, bias,
                           rewriter.getI64IntegerAttr(axis));
}

struct AddmmToBiasAdd : OpRewritePattern<AddmmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddmmOp op,
                                PatternRewriter &rewriter) const override {
    if (!isScalar(op.getBetaAttr(), 1) || !isScalar(op.getAlphaAttr(), 1))
      return rewriter.notifyMatchFailure(op, "beta or alpha is not 1");
    if (!isLastDimBias(op.getResult(), op.getSelf(), op.getResult()))
      return rewriter.notifyMatchFailure(op, "not a 1-D bias of the columns");
    auto mm = MmOp::create(rewriter, op.getLoc(), op.getType(), op.getMat1(),
                           op.getMat2());
    rewriter.replaceOp(op,
                       createBiasAdd(rewriter, op.getLoc(), mm, op.getSelf()));
    return success();
  }
};

struct LinearToBiasAdd : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    Value bias = op.getBias();
    if (isa<NoneType>(bias.getType()) ||
        !isLastDimBias(op.getResult(), bias, op.getResult()))
      return rewriter.notifyMatchFailure(op, "no 1-D bias");
    Value none = NoneOp::create(rewriter, op.getLoc(), rewriter.getNoneType());
    auto linear = LinearOp::create(rewriter, op.getLoc(), op.getType(),
                                   op.getInput(), op.getWeight(), none);
    rewriter.replaceOp(op, createBiasAdd(rewriter, op.getLoc(), linear, bias));
    return success();
  }
};

struct BroadcastAddToBiasAdd : OpRewritePattern<AddTensorOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddTensorOp op,
                                PatternRewriter &rewriter) const override {
    if (!isScalar(op.getAlphaAttr(), 1))
      return rewriter.notifyMatchFailure(op, "alpha is not 1");
    Value input = op.getSelf(), bias = op.getOther();
    if (!isLastDimBias(input, bias, op.getResult()))
      std::swap(input, bias);
    if (!isLastDimBias(input, bias, op.getResult()) ||
        cast<RankedTensorType>(input.getType()).getRank() < 2)
      return rewriter.notifyMatchFailure(op, "not a 1-D bias broadcast");
    rewriter.replaceOp(op, createBiasAdd(rewriter, op.getLoc(), input, bias));
    return success();
  }
};

/// view(bias_add(y, b), size) -> bias_add(view(y, size), b) when the view
/// keeps the last dim, the bias axis.
struct SinkBiasAddBelowView : OpRewritePattern<ViewOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ViewOp op,
                                PatternRewriter &rewriter) const override {
    auto biasAdd = op.getSelf().getDefiningOp<BiasAddOp>();
    if (!biasAdd || !biasAdd->hasOneUse())
      return rewriter.notifyMatchFailure(op, "no single-use bias_add input");
    auto inputType = cast<RankedTensorType>(biasAdd.getType());
    auto viewType = cast<RankedTensorType>(op.getType());
    int64_t rank = inputType.getRank();
    if (normalizeDim(biasAdd.getAxis(), rank) != rank - 1 ||
        viewType.getRank() < 1 ||
        ShapedType::isDynamic(inputType.getShape().back()) ||
        viewType.getShape().back() != inputType.getShape().back())
      return rewriter.notifyMatchFailure(op, "view changes the bias dim");
    auto view = ViewOp::create(rewriter, op.getLoc(), viewType, biasAdd.getX(),
                               op.getSizeAttr());
    rewriter.replaceOp(
        op, createBiasAdd(rewriter, op.getLoc(), view, biasAdd.getBias()));
    return success();
  }
};

struct DecomposePass
    : public PatternPass<DecomposePass, impl::DecomposeBase,
                         /*kFusion=*/false> {
  static void populate(RewritePatternSet &patterns) {
    populateDecomposePatterns(patterns);
  }
};
} // namespace

void populateDecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<AddmmToBiasAdd, LinearToBiasAdd, BroadcastAddToBiasAdd,
               SinkBiasAddBelowView>(patterns.getContext());
}
} // namespace fxmlir
