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
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace fxmlir;

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

LogicalResult fxmlir::verifyBiasOp(Operation *op, Value x, Value bias,
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
  std::optional<int64_t> dim = normalizeDim(axis, xType.getRank());
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

LogicalResult fxmlir::verifyMaskOp(Operation *op, Value like,
                                         Value result, const APFloat &p) {
  double rate = p.convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError("p must be in [0, 1), got ") << rate;
  if (failed(verifyShapedLike(op, result, like, "result")))
    return failure();
  return verifyBool(op, result, "result");
}

LogicalResult fxmlir::verifyDropoutOp(Operation *op, Value x, Value bias,
                                            int64_t axis, Value residual,
                                            Value y, Value mask,
                                            const APFloat &p, bool packed) {
  double rate = p.convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return op->emitOpError("p must be in [0, 1), got ") << rate;
  SmallVector<ShapedLikeX> others;
  if (!isa<NoneType>(residual.getType()))
    others.push_back({"residual", residual, false});
  others.push_back({"y", y, false});
  if (!packed)
    others.push_back({"mask", mask, true});
  if (failed(verifyBiasOp(op, x, bias, axis, others)))
    return failure();
  if (!packed)
    return success();
  return verifyPackedMaskOp(op, x, mask, Value());
}

LogicalResult fxmlir::verifyPackedMaskOp(Operation *op, Value grad,
                                               Value mask, Value result) {
  auto maskType = cast<RankedTensorType>(mask.getType());
  if (maskType.getRank() != 1 ||
      !maskType.getElementType().isUnsignedInteger(8))
    return op->emitOpError("packed mask must be a 1-D ui8 tensor, got ")
           << maskType;
  auto gradType = cast<RankedTensorType>(grad.getType());
  if (gradType.hasStaticShape() && !maskType.isDynamicDim(0) &&
      maskType.getDimSize(0) != (gradType.getNumElements() + 7) / 8)
    return op->emitOpError("packed mask has ")
           << maskType.getDimSize(0) << " bytes for "
           << gradType.getNumElements() << " elements";
  if (getDevice(maskType) != getDevice(gradType))
    return op->emitOpError("packed mask and its tensor are on different "
                           "devices");
  if (result && result.getType() != grad.getType())
    return op->emitOpError("result type ")
           << result.getType() << " differs from " << grad.getType();
  return success();
}

LogicalResult fxmlir::verifyCastsOp(Operation *op, ValueRange tensors,
                                    ValueRange results, Type dtype) {
  if (tensors.size() != results.size())
    return op->emitOpError("has ")
           << results.size() << " results for " << tensors.size()
           << " tensors";
  for (auto [index, pair] : llvm::enumerate(llvm::zip(tensors, results))) {
    auto [tensor, result] = pair;
    auto type = cast<RankedTensorType>(tensor.getType());
    if (result.getType() != type.clone(dtype))
      return op->emitOpError("result ")
             << index << " must be " << type.clone(dtype) << ", got "
             << result.getType();
  }
  return success();
}

LogicalResult fxmlir::verifyEmbeddingGradOp(Operation *op, Value grad,
                                            Value indices, int64_t numWeights,
                                            Value result) {
  auto gradType = cast<RankedTensorType>(grad.getType());
  auto indicesType = cast<RankedTensorType>(indices.getType());
  auto resultType = cast<RankedTensorType>(result.getType());
  if (!isa<FloatType>(gradType.getElementType()) || gradType.getRank() < 1)
    return op->emitOpError("needs a floating-point grad [..., D], got ")
           << gradType;
  if (!isa<IntegerType>(indicesType.getElementType()))
    return op->emitOpError("needs integer indices, got ") << indicesType;
  if (failed(verifyCompatibleShape(indicesType.getShape(),
                                   gradType.getShape().drop_back())))
    return op->emitOpError("indices ")
           << indicesType << " do not have grad's leading dims (" << gradType
           << ")";
  if (numWeights < 0)
    return op->emitOpError("num_weights must be at least 0, got ")
           << numWeights;
  int64_t dims[] = {numWeights, gradType.getShape().back()};
  if (resultType.getElementType() != gradType.getElementType() ||
      failed(verifyCompatibleShape(resultType.getShape(), dims)))
    return op->emitOpError("result ")
           << resultType << " must be [num_weights = " << numWeights
           << ", D] of grad's element type (" << gradType << ")";
  if (getDevice(indicesType) != getDevice(gradType) ||
      getDevice(resultType) != getDevice(gradType))
    return op->emitOpError("tensors are on different devices");
  return success();
}

LogicalResult fxmlir::verifyLinearOp(Operation *op,
                                           ArrayRef<LinearDims> tensors) {
  auto xType = cast<RankedTensorType>(tensors.front().value.getType());
  Type element = xType.getElementType();
  if (!isa<FloatType>(element))
    return op->emitOpError("needs floating-point tensors, got ") << element;
  ArrayRef<int64_t> leading = xType.getShape().drop_back();
  llvm::SmallDenseMap<char, int64_t> sizes;
  for (const LinearDims &tensor : tensors) {
    auto type = cast<RankedTensorType>(tensor.value.getType());
    StringRef dims = tensor.dims;
    bool batched = dims.consume_front("*");
    int64_t rank = (batched ? leading.size() : 0) + dims.size();
    if (type.getRank() != rank)
      return op->emitOpError()
             << tensor.name << " must have rank " << rank << ", got " << type;
    if (type.getElementType() != element)
      return op->emitOpError()
             << tensor.name << " element type " << type.getElementType()
             << " differs from x's " << element;
    if (getDevice(type) != getDevice(xType))
      return op->emitOpError() << tensor.name << " and x are on different "
                               << "devices";
    ArrayRef<int64_t> shape = type.getShape();
    if (batched && failed(verifyCompatibleShape(
                       shape.take_front(leading.size()), leading)))
      return op->emitOpError()
             << tensor.name << " " << type << " does not have x's leading dims";
    for (auto [name, size] : llvm::zip(dims, shape.take_back(dims.size()))) {
      auto [it, inserted] = sizes.try_emplace(name, size);
      if (inserted || ShapedType::isDynamic(size))
        continue;
      if (ShapedType::isDynamic(it->second))
        it->second = size;
      else if (it->second != size)
        return op->emitOpError()
               << tensor.name << " has " << size << " for dim " << name
               << " where another tensor has " << it->second;
    }
  }
  return success();
}

LogicalResult fxmlir::verifyLinearLossOp(Operation *op, Value x,
                                         Value weight, Value bias,
                                         Value target, Value logits,
                                         Value gradLogits, Value lse) {
  auto xType = cast<RankedTensorType>(x.getType());
  Type element = xType.getElementType();
  if (!isa<FloatType>(element) || xType.getRank() < 2)
    return op->emitOpError("needs a floating-point x [..., K], got ") << xType;
  ArrayRef<int64_t> leading = xType.getShape().drop_back();
  int64_t rows = llvm::any_of(leading, ShapedType::isDynamic)
                     ? ShapedType::kDynamic
                     : ShapedType::getNumElements(leading);
  int64_t classes = cast<RankedTensorType>(weight.getType()).getDimSize(0);
  SmallVector<int64_t> byClasses(leading);
  byClasses.push_back(classes);
  struct Expected {
    StringRef name;
    Value value;
    SmallVector<int64_t> shape;
    StringRef dims;
    Type element; // null: any integer type
  };
  Type f32 = Float32Type::get(op->getContext());
  // A 16-bit layer's weight may be float32: the op casts it block by block.
  Type weightElement = getElementTypeOrSelf(weight);
  bool wideWeight = weightElement.isF32() && (element.isBF16() || element.isF16());
  Expected tensors[] = {
      {"weight", weight, {classes, xType.getShape().back()}, "[N, K]",
       wideWeight ? weightElement : element},
      {"bias", bias, {classes}, "[N]", element},
      {"target", target, {rows}, "[M]", Type()},
      {"logits", logits, byClasses, "[..., N]", element},
      {"grad_logits", gradLogits, byClasses, "[..., N]", element},
      {"lse", lse, {rows}, "[M]", f32},
  };
  for (const Expected &tensor : tensors) {
    auto type = tensor.value
                    ? dyn_cast<RankedTensorType>(tensor.value.getType())
                    : RankedTensorType();
    if (!type)
      continue; // an absent optional tensor (none)
    bool notReturned = tensor.name == "logits" &&
                       type.getShape() == ArrayRef<int64_t>{0};
    if (!notReturned &&
        failed(verifyCompatibleShape(type.getShape(), tensor.shape)))
      return op->emitOpError()
             << tensor.name << " " << type << " is not " << tensor.dims
             << " for x " << xType << " ([..., K], M rows) and weight "
             << weight.getType() << " ([N, K])";
    Type got = type.getElementType();
    if (!tensor.element && !got.isInteger())
      return op->emitOpError()
             << tensor.name << " element type " << got << " is not an integer";
    if (tensor.element && got != tensor.element)
      return op->emitOpError() << tensor.name << " element type " << got
                               << " is not " << tensor.element;
    if (getDevice(type) != getDevice(xType))
      return op->emitOpError() << tensor.name << " and x are on different "
                               << "devices";
  }
  return success();
}

LogicalResult fxmlir::verifyStrEnum(Operation *op, StringRef name,
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
