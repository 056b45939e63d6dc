//===- FuseGemmEpilogues.cpp - work a CUDA matmul's epilogue can do -------===//
//
// On CUDA, a linear layer's bias, its tanh GELU and their gradients fold
// into cuBLASLt matmul epilogues (the fused ops' CUDA kernels):
//   gelu(bias_add(product, b), "tanh")  -> fused_linear_gelu(x, w, b)
//       where product is linear(x, w, none) (Dynamo's graphs: nn.Linear) or
//       [view](mm(x, m)) (addmm decomposed, HF's Conv1D; w = t(m)):
//       GELU_AUX_BIAS, the pre-activation kept for backward;
//   fused_linear_gelu_grad([view](mm(a, b)), x, w, pre, "tanh")
//                                        -> fused_linear_gelu_grad_mm
//       the GELU's output gradient is the next layer's input gradient:
//       DGELU_BGRAD applies the GELU gradient and sums the bias gradient
//       inside that product;
//   mm(t(g), x) and sum(g, [0]) (a linear layer's weight and bias
//       gradients)                   -> linear_weight_bias_grad(g, x)
//       BGRADB sums the bias gradient inside the weight-gradient matmul.
// cuBLASLt's GELU is the tanh form, so erf GELU is left to
// fused_bias_act unless fxmlir-approximate-gelu made it tanh first.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Support/Dims.h"
#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {
#define GEN_PASS_DEF_FUSEGEMMEPILOGUES
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
  auto result =
      RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)},
                            type.getElementType(), type.getEncoding());
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
    if (!isCudaTensor(gelu.getSelf()))
      return rewriter.notifyMatchFailure(gelu, kOtherDeviceReason);
    if (gelu.getApproximate() != "tanh")
      return rewriter.notifyMatchFailure(gelu, "cuBLASLt's GELU is tanh's");
    auto sum = gelu.getSelf().getDefiningOp<BiasAddOp>();
    if (!isSingleUse(sum))
      return rewriter.notifyMatchFailure(gelu, "no single-use bias_add");
    int64_t rank = sum.getType().getRank();
    if (normalizeDim(sum.getAxis(), rank) != rank - 1)
      return rewriter.notifyMatchFailure(gelu, "bias is not on the last dim");
    std::optional<LinearProduct> product =
        matchProduct(sum.getX(), rewriter, gelu.getLoc());
    if (!product)
      return rewriter.notifyMatchFailure(gelu, "no single-use linear product");
    Type type =
        product->view ? product->view->getOperand(0).getType() : gelu.getType();
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

/// The matrix product behind `value`, through a single-use view, if any.
static MmOp productOf(Value value, Operation *&view) {
  Operation *def = value.getDefiningOp();
  view = nullptr;
  if (isSingleUse(def) && isa<ViewOp, UnderscoreUnsafeViewOp>(def)) {
    view = def;
    def = def->getOperand(0).getDefiningOp();
  }
  auto mm = dyn_cast_or_null<MmOp>(def);
  return isSingleUse(mm) ? mm : MmOp();
}

struct FuseLinearGeluGradMmPattern : OpRewritePattern<FusedLinearGeluGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FusedLinearGeluGradOp op,
                                PatternRewriter &rewriter) const override {
    if (!isCudaTensor(op.getX()))
      return rewriter.notifyMatchFailure(op, kOtherDeviceReason);
    if (op.getApproximate() != "tanh")
      return rewriter.notifyMatchFailure(op, "no tanh GELU gradient");
    Operation *view = nullptr;
    MmOp mm = productOf(op.getGrad(), view);
    if (!mm)
      return rewriter.notifyMatchFailure(op, "the gradient is no product");
    // grad_a gets x's leading dims, as the op's contract wants.
    Value gradA = mm.getSelf();
    auto aType = cast<RankedTensorType>(gradA.getType());
    auto xType = cast<RankedTensorType>(op.getX().getType());
    if (xType.getRank() != 2) {
      SmallVector<int64_t> size(xType.getShape().drop_back());
      size.push_back(aType.getShape().back());
      if (llvm::any_of(size, ShapedType::isDynamic))
        return rewriter.notifyMatchFailure(op, "dynamic leading dims");
      auto type = RankedTensorType::get(size, aType.getElementType(),
                                        aType.getEncoding());
      gradA = ViewOp::create(rewriter, op.getLoc(), type, gradA,
                             rewriter.getDenseI64ArrayAttr(size));
    }
    rewriter.replaceOpWithNewOp<FusedLinearGeluGradMmOp>(
        op, op.getResultTypes(), gradA, mm.getMat2(), op.getX(), op.getWeight(),
        op.getPre(), op.getApproximateAttr());
    return success();
  }
};

/// Rooted at the bias gradient sum(g, [0]) of a 2-D g; the weight gradient
/// mm(t(g), x) is found among g's users.
struct FuseLinearWeightBiasGradPattern : OpRewritePattern<SumDimIntListOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SumDimIntListOp sum,
                                PatternRewriter &rewriter) const override {
    Value grad = sum.getSelf();
    if (!isCudaTensor(grad))
      return rewriter.notifyMatchFailure(sum, kOtherDeviceReason);
    auto gradType = cast<RankedTensorType>(grad.getType());
    std::optional<ArrayRef<int64_t>> dims = sum.getDim();
    if (gradType.getRank() != 2 || !dims || dims->size() != 1 ||
        normalizeDim((*dims)[0], 2) != 0 || sum.getDtypeAttr())
      return rewriter.notifyMatchFailure(sum, "no column sum of a matrix");
    MmOp weightGrad;
    for (Operation *user : grad.getUsers())
      if (auto t = dyn_cast<TOp>(user))
        for (Operation *tUser : t->getUsers())
          if (auto mm = dyn_cast<MmOp>(tUser); mm && mm.getSelf() == t)
            weightGrad = mm;
    if (!weightGrad || weightGrad->getBlock() != sum->getBlock())
      return rewriter.notifyMatchFailure(sum, "no weight gradient mm(t(g), x)");
    // The fused op stands where the first of the two is; x must be there.
    Operation *first =
        sum->isBeforeInBlock(weightGrad) ? sum.getOperation() : weightGrad;
    Value x = weightGrad.getMat2();
    if (Operation *def = x.getDefiningOp();
        def && def->getBlock() == first->getBlock() &&
        !def->isBeforeInBlock(first))
      return rewriter.notifyMatchFailure(sum, "x comes after the bias sum");
    rewriter.setInsertionPoint(first);
    auto biasType = RankedTensorType::get({gradType.getDimSize(1)},
                                          gradType.getElementType(),
                                          gradType.getEncoding());
    auto fused = LinearWeightBiasGradOp::create(
        rewriter, sum.getLoc(), weightGrad.getType(), biasType, grad, x);
    Value bias = fused.getGradBias();
    if (sum.getKeepdim())
      bias = ViewOp::create(
          rewriter, sum.getLoc(), sum.getType(), bias,
          rewriter.getDenseI64ArrayAttr({1, gradType.getDimSize(1)}));
    rewriter.replaceOp(weightGrad, fused.getGradWeight());
    rewriter.replaceOp(sum, bias);
    return success();
  }
};

struct FuseGemmEpiloguesPass
    : public PatternPass<FuseGemmEpiloguesPass, impl::FuseGemmEpiloguesBase,
                         /*kFusion=*/true> {
  static void populate(RewritePatternSet &patterns) {
    populateGemmEpilogueFusionPatterns(patterns);
  }
};
} // namespace

void populateGemmEpilogueFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseLinearGeluPattern, FuseLinearGeluGradMmPattern,
               FuseLinearWeightBiasGradPattern>(patterns.getContext());
}
} // namespace fxmlir
