//===- FusedOps.cpp - the fused ops and their families' verifiers ---------===//
//
// The ops themselves are generated from python/fxmlir/fused_ops.py; each
// one's verify() calls its family's hook here.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Support/Dims.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fxmlir;

#define GET_OP_CLASSES
#include "fxmlir/Dialect/FusedOps.cpp.inc"

void FxmlirDialect::registerFusedOps() {
  addOperations<
#define GET_OP_LIST
#include "fxmlir/Dialect/FusedOps.cpp.inc"
      >();
}

/// Checks that `value` is shaped like `like`, naming it `what` in errors.
static LogicalResult verifyShapedLike(Operation *op, Value value, Value like,
                                      StringRef what) {
  if (failed(verifyCompatibleShape(value.getType(), like.getType())))
    return op->emitOpError() << what << " type " << value.getType()
                             << " is not shaped like " << like.getType();
  return success();
}

static LogicalResult verifyBool(Operation *op, Value value, StringRef what) {
  Type element = getElementTypeOrSelf(value);
  if (!element.isInteger(1))
    return op->emitOpError()
           << what << " must have element type i1, got " << element;
  return success();
}

LogicalResult mlir::fxmlir::verifyBiasOp(Operation *op, Value x, Value bias,
                                         int64_t axis,
                                         ArrayRef<ShapedLikeX> others) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto isResult = [](const ShapedLikeX &t) { return isa<OpResult>(t.value); };
  for (const ShapedLikeX &operand : llvm::make_filter_range(
           others, [&](const ShapedLikeX &t) { return !isResult(t); })) {
    if (failed(verifyShapedLike(op, operand.value, x, operand.name)))
      return failure();
    Type element = getElementTypeOrSelf(operand.value);
    if (operand.isBool) {
      if (failed(verifyBool(op, operand.value, operand.name)))
        return failure();
    } else if (element != xType.getElementType()) {
      return op->emitOpError()
             << operand.name << " element type " << element
             << " differs from input element type " << xType.getElementType();
    }
    if (getDevice(operand.value.getType()) != getDevice(xType))
      return op->emitOpError() << operand.name << " and input are on "
                               << "different devices";
  }

  auto biasType = cast<RankedTensorType>(bias.getType());
  if (biasType.getRank() != 1)
    return op->emitOpError("needs a 1-D bias, got rank ") << biasType.getRank();
  std::optional<int64_t> dim = ::fxmlir::normalizeDim(axis, xType.getRank());
  if (!dim)
    return op->emitOpError("axis ") << axis << " is out of range for an input "
                                    << "of rank " << xType.getRank();
  if (failed(verifyCompatibleShape({xType.getDimSize(*dim)},
                                   {biasType.getDimSize(0)})))
    return op->emitOpError("bias of size ")
           << biasType.getDimSize(0) << " does not match dim " << *dim
           << " of size " << xType.getDimSize(*dim);
  if (xType.getElementType() != biasType.getElementType())
    return op->emitOpError("input element type ")
           << xType.getElementType() << " differs from bias element type "
           << biasType.getElementType();
  if (getDevice(xType) != getDevice(biasType))
    return op->emitOpError("input and bias are on different devices");

  for (const ShapedLikeX &result : llvm::make_filter_range(others, isResult)) {
    if (result.isBool) {
      if (failed(verifyShapedLike(op, result.value, x, result.name)) ||
          failed(verifyBool(op, result.value, result.name)))
        return failure();
      continue;
    }
    Type type = result.value.getType();
    if (failed(verifyCompatibleShape(type, xType)) ||
        getElementTypeOrSelf(type) != xType.getElementType())
      return op->emitOpError() << result.name << " type " << type
                               << " does not match input type " << xType;
  }
  return success();
}

LogicalResult mlir::fxmlir::verifyMaskOp(Operation *op, Value like,
                                         Value result, const APFloat &p) {
  double rate = p.convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError("p must be in [0, 1), got ") << rate;
  if (failed(verifyShapedLike(op, result, like, "result")))
    return failure();
  return verifyBool(op, result, "result");
}

LogicalResult mlir::fxmlir::verifyStrEnum(Operation *op, StringRef name,
                                          StringRef value,
                                          ArrayRef<StringRef> accepted) {
  if (llvm::is_contained(accepted, value))
    return success();
  InFlightDiagnostic diag = op->emitOpError() << name << " must be ";
  llvm::interleave(
      accepted, [&](StringRef v) { diag << "\"" << v << "\""; },
      [&] { diag << (accepted.size() == 2 ? " or " : ", "); });
  return diag << ", got \"" << value << "\"";
}
