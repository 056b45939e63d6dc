//===- ScalarMath.cpp - torch scalar semantics in arith/math --------------===//

#include "ScalarMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::fxmlir;
using namespace mlir::fxmlir::jit;

bool jit::isSupportedElementType(Type torchType) {
  if (isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(torchType))
    return true;
  auto integer = dyn_cast<IntegerType>(torchType);
  if (!integer)
    return false;
  // Torch's integer dtypes: bool (i1), uint8 and int8..int64 (signed).
  unsigned width = integer.getWidth();
  if (width == 1)
    return true;
  if (integer.isUnsigned())
    return width == 8;
  return integer.isSigned() &&
         (width == 8 || width == 16 || width == 32 || width == 64);
}

Type jit::storageType(Type torchType) {
  if (auto integer = dyn_cast<IntegerType>(torchType))
    return IntegerType::get(torchType.getContext(), integer.getWidth());
  return torchType;
}

Type jit::computeType(Type torchType) {
  if (isa<Float16Type, BFloat16Type>(torchType))
    return Float32Type::get(torchType.getContext());
  return storageType(torchType);
}

/// Whether integer `type` converts as unsigned (uint8 and bool).
static bool isUnsignedLike(Type torchType) {
  auto integer = cast<IntegerType>(torchType);
  return integer.isUnsigned() || integer.getWidth() == 1;
}

Value jit::castTo(ImplicitLocOpBuilder &b, Value value, Type from, Type to) {
  if (from == to)
    return value;
  Type target = storageType(to);
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, value,
                                   constant(b, from, 0.0));
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, value,
                                 constant(b, storageType(from), 0.0));
  }
  if (fromFloat && toFloat) {
    unsigned fromWidth = fromFloat.getWidth(), toWidth = toFloat.getWidth();
    if (fromWidth == toWidth) // bf16 <-> f16 goes through f32.
      value = arith::ExtFOp::create(b, b.getF32Type(), value);
    if (fromWidth < toWidth)
      return arith::ExtFOp::create(b, target, value);
    return arith::TruncFOp::create(b, target, value);
  }
  if (toFloat) {
    if (isUnsignedLike(from))
      return arith::UIToFPOp::create(b, target, value);
    return arith::SIToFPOp::create(b, target, value);
  }
  if (fromFloat) {
    if (!isUnsignedLike(to))
      return arith::FPToSIOp::create(b, target, value);
    // uint8: through int64, wrapping as torch's C++ cast does on x86.
    Value wide = arith::FPToSIOp::create(b, b.getI64Type(), value);
    return arith::TruncIOp::create(b, target, wide);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth == toWidth)
    return value;
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, target, value);
  if (isUnsignedLike(from))
    return arith::ExtUIOp::create(b, target, value);
  return arith::ExtSIOp::create(b, target, value);
}

Value jit::toCompute(ImplicitLocOpBuilder &b, Value value, Type from,
                     Type common) {
  Value cast = castTo(b, value, from, common);
  Type compute = computeType(common);
  if (cast.getType() == compute)
    return cast;
  return arith::ExtFOp::create(b, compute, cast);
}

Value jit::fromCompute(ImplicitLocOpBuilder &b, Value value, Type torchType) {
  Type storage = storageType(torchType);
  if (value.getType() == storage)
    return value;
  return arith::TruncFOp::create(b, storage, value);
}

Value jit::constant(ImplicitLocOpBuilder &b, Type type, double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(
      b, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value jit::constant(ImplicitLocOpBuilder &b, Type type, Attribute scalar) {
  if (auto boolean = dyn_cast<BoolAttr>(scalar))
    return constant(b, type, boolean.getValue() ? 1.0 : 0.0);
  if (auto integer = dyn_cast<IntegerAttr>(scalar)) {
    if (isa<FloatType>(type))
      return constant(b, type, static_cast<double>(integer.getInt()));
    return arith::ConstantOp::create(
        b, b.getIntegerAttr(type, integer.getValue().getSExtValue()));
  }
  return constant(b, type, cast<FloatAttr>(scalar).getValueAsDouble());
}

Value jit::add(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, x, y);
  return arith::AddIOp::create(b, x, y);
}

Value jit::sub(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::SubFOp::create(b, x, y);
  return arith::SubIOp::create(b, x, y);
}

Value jit::mul(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, x, y);
  return arith::MulIOp::create(b, x, y);
}

Value jit::neg(ImplicitLocOpBuilder &b, Value x) {
  if (isa<FloatType>(x.getType()))
    return arith::NegFOp::create(b, x);
  return arith::SubIOp::create(b, constant(b, x.getType(), 0.0), x);
}

Value jit::maximum(ImplicitLocOpBuilder &b, Value x, Value y) {
  // maximumf propagates NaN, like torch's max/relu/amax.
  if (isa<FloatType>(x.getType()))
    return arith::MaximumFOp::create(b, x, y);
  return arith::MaxSIOp::create(b, x, y);
}

Value jit::sigmoid(ImplicitLocOpBuilder &b, Value x) {
  Value one = constant(b, x.getType(), 1.0);
  Value e = math::ExpOp::create(b, arith::NegFOp::create(b, x));
  return arith::DivFOp::create(b, one, arith::AddFOp::create(b, one, e));
}

Value jit::compare(ImplicitLocOpBuilder &b, Comparison kind, Value x, Value y,
                   Type torchType) {
  if (isa<FloatType>(x.getType())) {
    static constexpr arith::CmpFPredicate kFloat[] = {
        arith::CmpFPredicate::OEQ, arith::CmpFPredicate::UNE,
        arith::CmpFPredicate::OLT, arith::CmpFPredicate::OLE,
        arith::CmpFPredicate::OGT, arith::CmpFPredicate::OGE};
    return arith::CmpFOp::create(b, kFloat[static_cast<int>(kind)], x, y);
  }
  static constexpr arith::CmpIPredicate kSigned[] = {
      arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
      arith::CmpIPredicate::slt, arith::CmpIPredicate::sle,
      arith::CmpIPredicate::sgt, arith::CmpIPredicate::sge};
  static constexpr arith::CmpIPredicate kUnsigned[] = {
      arith::CmpIPredicate::eq,  arith::CmpIPredicate::ne,
      arith::CmpIPredicate::ult, arith::CmpIPredicate::ule,
      arith::CmpIPredicate::ugt, arith::CmpIPredicate::uge};
  const arith::CmpIPredicate *table =
      isUnsignedLike(torchType) ? kUnsigned : kSigned;
  return arith::CmpIOp::create(b, table[static_cast<int>(kind)], x, y);
}
