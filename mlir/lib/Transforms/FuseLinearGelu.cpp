//===- FuseLinearGelu.cpp - linear + bias + GELU into one CUDA matmul -----===//
//
// gelu(bias_add(product, b), "tanh") on CUDA, where product is the linear
// layer's matrix product in one of its spellings:
//   linear(x, w, none)            (Dynamo's graphs: nn.Linear)
//   mm(x, m), view(mm(x, m))      (addmm decomposed: AOTAutograd's graphs,
//                                  HF's Conv1D)
// becomes fused_linear_gelu(x, w, b) (w = t(m) for the mm spelling), whose
// CUDA kernel is one cuBLASLt matmul with the GELU_AUX_BIAS epilogue.
// cuBLASLt's GELU is the tanh form, so erf GELU is left to
// fused_bias_add_gelu unless fxmlir-approximate-gelu made it tanh first.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fxmlir {
#define GEN_PASS_DEF_FUSELINEARGELU
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// The input and [N, K] weight of a linear layer's product, and the view
/// (if any) from the product's rows back to the bias_add's shape.
struct LinearProduct {
  Value x;
  Value weight;
  Operation *view = nullptr;
};

static bool isSingleUse(Operation *op) { return op && op->hasOneUse(); }

/// t(m), folding t(t(w)) to w.
static Value transposed(PatternRewriter &rewriter, Location loc, Value m) {
  if (auto t = m.getDefiningOp<TOp>())
    return t.getSelf();
  auto type = cast<RankedTensorType>(m.getType());
  auto result = RankedTensorType::get(
      {type.getDimSize(1), type.getDimSize(0)}, type.getElementType(),
      type.getEncoding());
  return TOp::create(rewriter, loc, result, m);
}

/// The linear layer computing `product`, all of whose ops have no other
/// use; creates t(m) for the mm spelling only once everything matched.
static std::optional<LinearProduct>
matchProduct(Value product, PatternRewriter &rewriter, Location loc) {
  Operation *def = product.getDefiningOp();
  if (!isSingleUse(def))
    return std::nullopt;
  if (auto linear = dyn_cast<LinearOp>(def)) {
    auto weight = cast<RankedTensorType>(linear.getWeight().getType());
    if (!isa<NoneType>(linear.getBias().getType()) || weight.getRank() != 2)
      return std::nullopt;
    return LinearProduct{linear.getInput(), linear.getWeight()};
  }
  Operation *view = nullptr;
  if (isa<ViewOp, UnderscoreUnsafeViewOp>(def)) {
    view = def;
    def = def->getOperand(0).getDefiningOp();
    if (!isSingleUse(def))
      return std::nullopt;
  }
  auto mm = dyn_cast<MmOp>(def);
  if (!mm)
    return std::nullopt;
  // The view must keep the columns: the bias is added along the last dim.
  int64_t columns = mm.getType().getDimSize(1);
  auto productType = cast<RankedTensorType>(product.getType());
  if (view && (ShapedType::isDynamic(columns) ||
               productType.getShape().back() != columns))
    return std::nullopt;
  return LinearProduct{mm.getSelf(), transposed(rewriter, loc, mm.getMat2()),
                       view};
}

struct FuseLinearGeluPattern : OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GeluOp gelu,
                                PatternRewriter &rewriter) const override {
    if (gelu.getApproximate() != "tanh")
      return rewriter.notifyMatchFailure(gelu, "cuBLASLt's GELU is tanh's");
    auto sum = gelu.getSelf().getDefiningOp<BiasAddOp>();
    if (!isSingleUse(sum) || !isCudaTensor(sum.getX()))
      return rewriter.notifyMatchFailure(gelu, "no single-use CUDA bias_add");
    int64_t rank = sum.getType().getRank();
    if (normalizeDim(sum.getAxis(), rank) != rank - 1)
      return rewriter.notifyMatchFailure(gelu, "bias is not on the last dim");
    std::optional<LinearProduct> product =
        matchProduct(sum.getX(), rewriter, gelu.getLoc());
    if (!product)
      return rewriter.notifyMatchFailure(gelu, "no single-use linear product");
    Type type = product->view ? product->view->getOperand(0).getType()
                              : gelu.getType();
    auto fused = FusedLinearGeluOp::create(
        rewriter, gelu.getLoc(), type, type, product->x, product->weight,
        sum.getBias(), gelu.getApproximateAttr());
    Value y = fused.getY();
    if (product->view)
      y = ViewOp::create(
          rewriter, gelu.getLoc(), gelu.getType(), y,
          product->view->getAttrOfType<DenseI64ArrayAttr>("size"));
    rewriter.replaceOp(gelu, y);
    return success();
  }
};

struct FuseLinearGeluPass : public impl::FuseLinearGeluBase<FuseLinearGeluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateLinearGeluFusionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void populateLinearGeluFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseLinearGeluPattern>(patterns.getContext());
}
} // namespace mlir::fxmlir
