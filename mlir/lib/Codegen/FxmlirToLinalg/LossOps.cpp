//===- LossOps.cpp - the gradient of the negative log-likelihood ----------===//
//
// nll_loss_backward, which with _log_softmax_backward_data after it is
// cross-entropy's backward: the gradient of the loss at each row's target
// class, zero elsewhere. Its forward stays eager's kernel, which checks the
// targets (an out-of-range target raises there); the backward reads the same
// targets after that check.
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"
#include "ScalarMath.h"

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::lowering;

/// torch's `reduction` argument.
enum Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };

/// Rows of class scores [N, C] with int64 targets [N] and no class weights;
/// a 0-d grad_output and total_weight for mean and sum, [N] for none.
static std::optional<JitOpKind> checkNllLossBackward(Operation *op) {
  auto nll = cast<NllLossBackwardOp>(op);
  Type type = torchElementType(nll.getResult());
  int64_t reduction = nll.getReduction();
  auto target = cast<RankedTensorType>(nll.getTarget().getType());
  if (!isa<FloatType>(type) || !isa<NoneType>(nll.getWeight().getType()) ||
      rankOf(nll.getSelf()) != 2 || target.getRank() != 1 ||
      !target.getElementType().isSignedInteger(64) ||
      torchElementType(nll.getGradOutput()) != type ||
      torchElementType(nll.getTotalWeight()) != type ||
      rankOf(nll.getTotalWeight()) != 0 ||
      rankOf(nll.getGradOutput()) != (reduction == kNone ? 1 : 0) ||
      (reduction != kNone && reduction != kMean && reduction != kSum))
    return std::nullopt;
  return JitOpKind::ElementwiseOverRows;
}

/// grad_input[i, c] = -(grad_output / total_weight) where c is row i's
/// target (not ignore_index), as torch's kernel computes it (the quotient
/// rounded to the dtype, then negated); -grad_output[i] with no reduction,
/// -grad_output with a sum.
static SmallVector<Value> lowerNllLossBackward(ImplicitLocOpBuilder &b,
                                               Operation *op,
                                               ValueRange operands) {
  auto nll = cast<NllLossBackwardOp>(op);
  Type type = torchElementType(nll.getResult());
  int64_t reduction = nll.getReduction();
  Value gradOutput = operands[0], self = operands[1], target = operands[2];
  Value totalWeight = operands[4];
  MLIRContext *ctx = b.getContext();
  AffineMap scalar = AffineMap::get(2, 0, {}, ctx);
  AffineMap row = AffineMap::get(2, 0, {b.getAffineDimExpr(0)}, ctx);
  Value init = tensor::EmptyOp::create(
      b, tensor::getMixedSizes(b, b.getLoc(), self), storageType(type));
  SmallVector<AffineMap> maps = {reduction == kNone ? row : scalar, row,
                                 scalar, b.getMultiDimIdentityMap(2)};
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  int64_t ignoreIndex = nll.getIgnoreIndex();
  auto generic = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, ValueRange{gradOutput, target, totalWeight},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        ImplicitLocOpBuilder nb(loc, nested);
        Value grad = toCompute(nb, args[0], type, type);
        if (reduction == kMean)
          grad = toCompute(
              nb,
              fromCompute(nb,
                          arith::DivFOp::create(
                              nb, grad, toCompute(nb, args[2], type, type)),
                          type),
              type, type);
        Value value = fromCompute(nb, neg(nb, grad), type);
        Value targetClass = args[1];
        Value column = arith::IndexCastOp::create(
            nb, targetClass.getType(), linalg::IndexOp::create(nb, 1));
        Value isTarget = arith::CmpIOp::create(nb, arith::CmpIPredicate::eq,
                                               column, targetClass);
        Value ignored = arith::ConstantIntOp::create(
            nb, targetClass.getType(), ignoreIndex);
        Value counted = arith::CmpIOp::create(nb, arith::CmpIPredicate::ne,
                                              targetClass, ignored);
        Value hit = arith::AndIOp::create(nb, isTarget, counted);
        Value zero = arith::ConstantOp::create(
            nb, nb.getZeroAttr(storageType(type)));
        linalg::YieldOp::create(
            nb, ValueRange{arith::SelectOp::create(nb, hit, value, zero)});
      });
  return {generic.getResult(0)};
}

void lowering::addLossLowerings(LoweringTable &table) {
  table["fxmlir.aten.nll_loss_backward"] = {checkNllLossBackward,
                                            lowerNllLossBackward};
}
