//===- PatternUtils.cpp - constraints the rewrite patterns share ----------===//

#include "fxmlir/Transforms/PatternUtils.h"

#include "fxmlir/Dialect/FxmlirDialect.h"

using namespace mlir;

bool fxmlir::isFusibleTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return false;
  Type element = type.getElementType();
  if (!element.isF32() && !element.isF16() && !element.isBF16())
    return false;
  DeviceAttr device = getDevice(type);
  return device && (device.getType() == "cpu" || device.getType() == "cuda");
}

bool fxmlir::isCudaTensor(Value value) {
  if (!isFusibleTensor(value))
    return false;
  return getDevice(value.getType()).getType() == "cuda";
}

bool fxmlir::isCpuTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  DeviceAttr device = type ? getDevice(type) : DeviceAttr();
  return device && device.getType() == "cpu";
}

Type fxmlir::packedMaskType(Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  int64_t bytes = type.hasStaticShape() ? (type.getNumElements() + 7) / 8
                                        : ShapedType::kDynamic;
  auto element = IntegerType::get(type.getContext(), 8, IntegerType::Unsigned);
  return RankedTensorType::get({bytes}, element, type.getEncoding());
}

Type fxmlir::boolMaskType(Value like) {
  auto type = cast<RankedTensorType>(like.getType());
  return RankedTensorType::get(type.getShape(),
                               IntegerType::get(type.getContext(), 1),
                               type.getEncoding());
}

FloatAttr fxmlir::dropoutScale(Builder &builder, FloatAttr p) {
  return builder.getF64FloatAttr(1.0 / (1.0 - p.getValueAsDouble()));
}

Value fxmlir::createNone(OpBuilder &builder, Location loc) {
  return NoneOp::create(builder, loc, builder.getNoneType());
}

bool fxmlir::isActiveDropout(Attribute train, FloatAttr p) {
  auto trainFlag = dyn_cast_or_null<BoolAttr>(train);
  bool training = !trainFlag || trainFlag.getValue();
  double rate = p.getValueAsDouble();
  return training && rate > 0.0 && rate < 1.0;
}

bool fxmlir::isScalar(Attribute scalar, double value) {
  if (auto b = dyn_cast_or_null<BoolAttr>(scalar))
    return double(b.getValue()) == value;
  if (auto i = dyn_cast_or_null<IntegerAttr>(scalar))
    return double(i.getValue().getSExtValue()) == value;
  if (auto f = dyn_cast_or_null<FloatAttr>(scalar))
    return f.getValueAsDouble() == value;
  return false;
}
