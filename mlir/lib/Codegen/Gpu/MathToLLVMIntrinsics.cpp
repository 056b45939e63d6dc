//===- MathToLLVMIntrinsics.cpp - native math ops as intrinsic calls ------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {
#define GEN_PASS_DEF_MATHTOLLVMINTRINSICS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
/// `<op>` -> `llvm.call_intrinsic "llvm.<intrinsic>"` on scalars.
template <typename SourceOp>
struct ToIntrinsic : public OpRewritePattern<SourceOp> {
  ToIntrinsic(MLIRContext *ctx, StringRef intrinsic)
      : OpRewritePattern<SourceOp>(ctx), intrinsic(intrinsic) {}

  LogicalResult matchAndRewrite(SourceOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a scalar float");
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, op.getType(), rewriter.getStringAttr(intrinsic),
        op->getOperands());
    return success();
  }

  std::string intrinsic;
};

struct MathToLLVMIntrinsicsPass
    : public fxmlir::impl::MathToLLVMIntrinsicsBase<MathToLLVMIntrinsicsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<ToIntrinsic<math::SqrtOp>>(ctx, "llvm.sqrt");
    patterns.add<ToIntrinsic<math::FloorOp>>(ctx, "llvm.floor");
    patterns.add<ToIntrinsic<math::CeilOp>>(ctx, "llvm.ceil");
    patterns.add<ToIntrinsic<math::AbsFOp>>(ctx, "llvm.fabs");
    patterns.add<ToIntrinsic<math::FmaOp>>(ctx, "llvm.fma");
    patterns.add<ToIntrinsic<math::CopySignOp>>(ctx, "llvm.copysign");
    patterns.add<ToIntrinsic<arith::MaxNumFOp>>(ctx, "llvm.maxnum");
    patterns.add<ToIntrinsic<arith::MinNumFOp>>(ctx, "llvm.minnum");
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
