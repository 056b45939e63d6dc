//===- Recompose.cpp - unfused bias_adds back to ATen ---------------------===//
//
// What fxmlir-decompose produced and no fusion used goes back to the op
// PyTorch would have run: bias_add(mm) -> addmm, bias_add(view(mm)) ->
// view(addmm), bias_add(linear(x, w, none)) -> linear(x, w, b), and any
// other last-dim bias_add -> add.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Support/Dims.h"
#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {
#define GEN_PASS_DEF_RECOMPOSE
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

static bool isLastAxis(BiasAddOp op) {
  int64_t rank = op.getType().getRank();
  return normalizeDim(op.getAxis(), rank) == rank - 1;
}

/// Whether the bias, added along the last dim after `view`, is also a bias
/// of the columns of `mm` (the view keeps the last dim).
static bool viewKeepsColumns(ViewOp view, MmOp mm) {
  int64_t columns = mm.getType().getShape().back();
  return !ShapedType::isDynamic(columns) &&
         view.getType().getShape().back() == columns;
}

static AddmmOp createAddmm(PatternRewriter &rewriter, MmOp mm, Value bias) {
  Attribute one = rewriter.getI64IntegerAttr(1);
  return AddmmOp::create(rewriter, mm.getLoc(), mm.getType(), bias,
                         mm.getSelf(), mm.getMat2(), one, one);
}

struct RecomposeBiasAdd : OpRewritePattern<BiasAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BiasAddOp op,
                                PatternRewriter &rewriter) const override {
    if (!isLastAxis(op))
      return rewriter.notifyMatchFailure(op, "bias is not on the last dim");
    Value input = op.getX();
    if (auto mm = input.getDefiningOp<MmOp>(); mm && mm->hasOneUse()) {
      rewriter.replaceOp(op, createAddmm(rewriter, mm, op.getBias()));
      return success();
    }
    if (auto view = input.getDefiningOp<ViewOp>(); view && view->hasOneUse()) {
      auto mm = view.getSelf().getDefiningOp<MmOp>();
      if (mm && mm->hasOneUse() && viewKeepsColumns(view, mm)) {
        auto addmm = createAddmm(rewriter, mm, op.getBias());
        rewriter.replaceOpWithNewOp<ViewOp>(op, op.getType(), addmm,
                                            view.getSizeAttr());
        return success();
      }
    }
    if (auto linear = input.getDefiningOp<LinearOp>();
        linear && linear->hasOneUse() &&
        isa<NoneType>(linear.getBias().getType())) {
      rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), linear.getInput(),
                                            linear.getWeight(), op.getBias());
      return success();
    }
    rewriter.replaceOpWithNewOp<AddTensorOp>(
        op, op.getType(), input, op.getBias(), rewriter.getI64IntegerAttr(1));
    return success();
  }
};

struct RecomposePass
    : public PatternPass<RecomposePass, impl::RecomposeBase,
                         /*kFusion=*/false> {
  static void populate(RewritePatternSet &patterns) {
    populateRecomposePatterns(patterns);
  }
};
} // namespace

void populateRecomposePatterns(RewritePatternSet &patterns) {
  patterns.add<RecomposeBiasAdd>(patterns.getContext());
}
} // namespace fxmlir
