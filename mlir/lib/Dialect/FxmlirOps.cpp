//===- FxmlirOps.cpp - hand-written fxmlir ops ----------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::fxmlir;

#define GET_OP_CLASSES
#include "fxmlir/Dialect/FxmlirOps.cpp.inc"

//===----------------------------------------------------------------------===//
// NoneOp
//===----------------------------------------------------------------------===//

OpFoldResult NoneOp::fold(FoldAdaptor) { return NoneAttr::get(getContext()); }

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

/// Checks that every #fxmlir.operand<N> nested in `attr` names an operand.
static LogicalResult verifyOperandRefs(CallOp op, Attribute attr) {
  int64_t numOperands = op.getOperands().size();
  WalkResult result = attr.walk([&](OperandRefAttr ref) {
    if (ref.getIndex() < 0 || ref.getIndex() >= numOperands) {
      op.emitOpError() << "refers to operand " << ref.getIndex() << " but has "
                       << numOperands << " operands";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult CallOp::verify() {
  if (getTarget().empty())
    return emitOpError("needs a non-empty target name");
  if (failed(verifyOperandRefs(*this, getArgs())) ||
      failed(verifyOperandRefs(*this, getKwargs())))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Fused bias ops
//===----------------------------------------------------------------------===//

/// The checks all bias ops share: `bias` is 1-D, `axis` is a dim of `x`
/// whose size matches the bias, element types and devices agree, and the
/// result has x's type.
static LogicalResult verifyBiasOperands(Operation *op, Value x, Value bias,
                                        int64_t axis, Type resultType) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto biasType = cast<RankedTensorType>(bias.getType());
  if (biasType.getRank() != 1)
    return op->emitOpError("needs a 1-D bias, got rank ") << biasType.getRank();
  int64_t rank = xType.getRank();
  if (axis < -rank || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for an input of rank " << rank;
  int64_t dim = axis < 0 ? axis + rank : axis;
  if (failed(verifyCompatibleShape({xType.getDimSize(dim)},
                                   {biasType.getDimSize(0)})))
    return op->emitOpError("bias of size ")
           << biasType.getDimSize(0) << " does not match dim " << dim
           << " of size " << xType.getDimSize(dim);
  if (xType.getElementType() != biasType.getElementType())
    return op->emitOpError("input element type ")
           << xType.getElementType() << " differs from bias element type "
           << biasType.getElementType();
  if (getDevice(xType) != getDevice(biasType))
    return op->emitOpError("input and bias are on different devices");
  if (failed(verifyCompatibleShape(resultType, xType)) ||
      getElementTypeOrSelf(resultType) != xType.getElementType())
    return op->emitOpError("result type ")
           << resultType << " does not match input type " << xType;
  return success();
}

static LogicalResult verifyApproximate(Operation *op, StringRef approximate) {
  if (approximate != "none" && approximate != "tanh")
    return op->emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << approximate << "\"";
  return success();
}

/// Checks that `value` is shaped like `like`, naming it `what` in errors.
static LogicalResult verifyShapedLike(Operation *op, Value value, Value like,
                                      StringRef what) {
  if (failed(verifyCompatibleShape(value.getType(), like.getType())))
    return op->emitOpError() << what << " type " << value.getType()
                             << " is not shaped like " << like.getType();
  return success();
}

LogicalResult BiasAddOp::verify() {
  return verifyBiasOperands(*this, getX(), getBias(), getAxis(), getType());
}

LogicalResult FusedBiasAddGeluOp::verify() {
  if (failed(verifyApproximate(*this, getApproximate())))
    return failure();
  return verifyBiasOperands(*this, getX(), getBias(), getAxis(), getType());
}

LogicalResult FusedBiasAddGeluGradOp::verify() {
  if (failed(verifyApproximate(*this, getApproximate())) ||
      failed(verifyShapedLike(*this, getGrad(), getX(), "grad")))
    return failure();
  return verifyBiasOperands(*this, getX(), getBias(), getAxis(), getType());
}

LogicalResult FusedBiasAddMaskScaleOp::verify() {
  if (failed(verifyShapedLike(*this, getMask(), getX(), "mask")))
    return failure();
  if (!getMask().getType().getElementType().isInteger(1))
    return emitOpError("mask must have element type i1, got ")
           << getMask().getType().getElementType();
  return verifyBiasOperands(*this, getX(), getBias(), getAxis(), getType());
}

//===----------------------------------------------------------------------===//
// RandomMaskLikeOp
//===----------------------------------------------------------------------===//

LogicalResult RandomMaskLikeOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError("p must be in [0, 1), got ") << p;
  if (failed(verifyShapedLike(*this, getResult(), getLike(), "result")))
    return failure();
  if (!getType().getElementType().isInteger(1))
    return emitOpError("result must have element type i1, got ")
           << getType().getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// MlirJitOp
//===----------------------------------------------------------------------===//

LogicalResult MlirJitOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("callee ") << getCalleeAttr() << " is not a func.func";
  FunctionType type = callee.getFunctionType();
  if (TypeRange(type.getInputs()) != TypeRange(getOperands().getTypes()) ||
      TypeRange(type.getResults()) != TypeRange(getResults().getTypes()))
    return emitOpError("operand and result types do not match callee ")
           << getCalleeAttr() << " of type " << type;
  return success();
}
