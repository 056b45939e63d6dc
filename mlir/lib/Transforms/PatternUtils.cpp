//===- PatternUtils.cpp - constraints the rewrite patterns share ----------===//

#include "fxmlir/Transforms/PatternUtils.h"

#include "fxmlir/Dialect/FxmlirDialect.h"

using namespace mlir;

bool mlir::fxmlir::isFusibleTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return false;
  Type element = type.getElementType();
  if (!element.isF32() && !element.isF16() && !element.isBF16())
    return false;
  DeviceAttr device = getDevice(type);
  return device && (device.getType() == "cpu" || device.getType() == "cuda");
}

bool mlir::fxmlir::isActiveDropout(Attribute train, FloatAttr p) {
  auto trainFlag = dyn_cast_or_null<BoolAttr>(train);
  bool training = !trainFlag || trainFlag.getValue();
  double rate = p.getValueAsDouble();
  return training && rate > 0.0 && rate < 1.0;
}

FloatAttr mlir::fxmlir::dropoutScale(Builder &builder, FloatAttr p) {
  return builder.getF64FloatAttr(1.0 / (1.0 - p.getValueAsDouble()));
}

bool mlir::fxmlir::isScalar(Attribute scalar, double value) {
  if (auto b = dyn_cast_or_null<BoolAttr>(scalar))
    return double(b.getValue()) == value;
  if (auto i = dyn_cast_or_null<IntegerAttr>(scalar))
    return double(i.getValue().getSExtValue()) == value;
  if (auto f = dyn_cast_or_null<FloatAttr>(scalar))
    return f.getValueAsDouble() == value;
  return false;
}
