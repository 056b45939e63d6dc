//===- ExpandBF16Conversions.cpp - 16-bit float conversions via f32 -------===//
//
// f32 <-> bf16 conversions become integer ops (arith's expansion). Other
// conversions to or from f16/bf16 go through f32, as c10::Half and
// c10::BFloat16 convert (the lowering emits them so, but canonicalization
// folds `truncf(sitofp)` back into one op): LLVM would otherwise call
// compiler-rt (`__truncdfbf2`, `__truncdfhf2`, `__truncsfbf2` for integers),
// which the JIT does not link. For the same reason a select of f16/bf16
// values selects their bits.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {
#define GEN_PASS_DEF_EXPANDBF16CONVERSIONS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

static bool isHalfPrecision(Type type) {
  return isa<Float16Type, BFloat16Type>(type);
}

namespace {
/// f64 or an integer -> f16/bf16 as a conversion to f32, then truncf.
template <typename ConvertOp>
struct ToHalfThroughF32 : public OpRewritePattern<ConvertOp> {
  using OpRewritePattern<ConvertOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rewriter) const override {
    Type in = op.getIn().getType();
    if (!isHalfPrecision(op.getType()) || in.isF32() || isHalfPrecision(in))
      return rewriter.notifyMatchFailure(op, "not f64/integer to f16/bf16");
    Value f32 = ConvertOp::create(rewriter, op.getLoc(), rewriter.getF32Type(),
                                  op.getIn());
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), f32);
    return success();
  }
};

/// extf f16/bf16 -> f64 as extf to f32, then to f64 (both exact).
struct ExtendThroughF32 : public OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isHalfPrecision(op.getIn().getType()) || !op.getType().isF64())
      return rewriter.notifyMatchFailure(op, "not f16/bf16 to f64");
    Value f32 = arith::ExtFOp::create(rewriter, op.getLoc(),
                                      rewriter.getF32Type(), op.getIn());
    rewriter.replaceOpWithNewOp<arith::ExtFOp>(op, op.getType(), f32);
    return success();
  }
};

/// A select of f16/bf16 values as a select of their bits: x86 has no
/// 16-bit float select, and LLVM would promote it through f32 and back (a
/// `__truncsfbf2` call). arith's bf16 truncation selects its NaN so.
struct SelectHalfAsBits : public OpRewritePattern<arith::SelectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::SelectOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isHalfPrecision(type))
      return rewriter.notifyMatchFailure(op, "not a select of f16/bf16");
    Type bits = rewriter.getI16Type();
    Location loc = op.getLoc();
    Value onTrue =
        arith::BitcastOp::create(rewriter, loc, bits, op.getTrueValue());
    Value onFalse =
        arith::BitcastOp::create(rewriter, loc, bits, op.getFalseValue());
    Value selected = arith::SelectOp::create(rewriter, loc, op.getCondition(),
                                             onTrue, onFalse);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, type, selected);
    return success();
  }
};

struct ExpandBF16ConversionsPass
    : public fxmlir::impl::ExpandBF16ConversionsBase<
          ExpandBF16ConversionsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<ToHalfThroughF32<arith::TruncFOp>,
                 ToHalfThroughF32<arith::SIToFPOp>,
                 ToHalfThroughF32<arith::UIToFPOp>, ExtendThroughF32,
                 SelectHalfAsBits>(ctx);
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
