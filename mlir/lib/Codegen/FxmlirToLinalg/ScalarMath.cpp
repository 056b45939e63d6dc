//===- ScalarMath.cpp - torch scalar semantics in arith/math --------------===//

#include "ScalarMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::lowering;

bool lowering::isSupportedElementType(Type torchType) {
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

Type lowering::storageType(Type torchType) {
  if (auto integer = dyn_cast<IntegerType>(torchType))
    return IntegerType::get(torchType.getContext(), integer.getWidth());
  return torchType;
}

Type lowering::computeType(Type torchType) {
  if (isa<Float16Type, BFloat16Type>(torchType))
    return Float32Type::get(torchType.getContext());
  return storageType(torchType);
}

/// Whether integer `type` converts as unsigned (uint8 and bool).
static bool isUnsignedLike(Type torchType) {
  auto integer = cast<IntegerType>(torchType);
  return integer.isUnsigned() || integer.getWidth() == 1;
}

Value lowering::castTo(ImplicitLocOpBuilder &b, Value value, Type from,
                       Type to) {
  if (from == to)
    return value;
  // c10::Half and c10::BFloat16 convert from and to float only: any other
  // conversion goes through f32, rounding twice on the way to them as eager
  // does (f64 -> f32 -> bf16), and the JIT needs no compiler-rt conversion
  // (`__truncdfbf2`, `__truncdfhf2`, integers to bf16).
  Type f32 = b.getF32Type();
  if (isa<Float16Type, BFloat16Type>(from) && !to.isF32() && !to.isInteger(1))
    return castTo(b, arith::ExtFOp::create(b, f32, value), f32, to);
  if (isa<Float16Type, BFloat16Type>(to) && !from.isF32())
    return castTo(b, castTo(b, value, from, f32), f32, to);
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
    if (fromFloat.getWidth() < toFloat.getWidth())
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

Value lowering::toCompute(ImplicitLocOpBuilder &b, Value value, Type from,
                          Type common) {
  Value cast = castTo(b, value, from, common);
  Type compute = computeType(common);
  if (cast.getType() == compute)
    return cast;
  return arith::ExtFOp::create(b, compute, cast);
}

Value lowering::fromCompute(ImplicitLocOpBuilder &b, Value value,
                            Type torchType) {
  Type storage = storageType(torchType);
  if (value.getType() == storage)
    return value;
  return arith::TruncFOp::create(b, storage, value);
}

Value lowering::constant(ImplicitLocOpBuilder &b, Type type, double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(
      b, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value lowering::constant(ImplicitLocOpBuilder &b, Type type, Attribute scalar) {
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

Value lowering::add(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, x, y);
  return arith::AddIOp::create(b, x, y);
}

Value lowering::sub(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::SubFOp::create(b, x, y);
  return arith::SubIOp::create(b, x, y);
}

Value lowering::mul(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, x, y);
  return arith::MulIOp::create(b, x, y);
}

Value lowering::neg(ImplicitLocOpBuilder &b, Value x) {
  if (isa<FloatType>(x.getType()))
    return arith::NegFOp::create(b, x);
  return arith::SubIOp::create(b, constant(b, x.getType(), 0.0), x);
}

Value lowering::maximum(ImplicitLocOpBuilder &b, Value x, Value y) {
  // maximumf propagates NaN, like torch's max/relu/amax.
  if (isa<FloatType>(x.getType()))
    return arith::MaximumFOp::create(b, x, y);
  return arith::MaxSIOp::create(b, x, y);
}

Value lowering::sigmoid(ImplicitLocOpBuilder &b, Value x) {
  Value one = constant(b, x.getType(), 1.0);
  Value e = math::ExpOp::create(b, arith::NegFOp::create(b, x));
  return arith::DivFOp::create(b, one, arith::AddFOp::create(b, one, e));
}

Value lowering::pow(ImplicitLocOpBuilder &b, Value x, Value y) {
  using arith::CmpFPredicate;
  Type type = x.getType();
  auto cmp = [&](CmpFPredicate predicate, Value lhs, Value rhs) -> Value {
    return arith::CmpFOp::create(b, predicate, lhs, rhs);
  };
  auto select = [&](Value condition, Value t, Value f) -> Value {
    return arith::SelectOp::create(b, condition, t, f);
  };
  Value zero = constant(b, type, 0.0), one = constant(b, type, 1.0);
  Value inf = constant(b, type, std::numeric_limits<double>::infinity());
  // |x|^y = exp(y log|x|) is right for every |x| (log 0 = -inf, log inf =
  // inf), except where y log|x| is 0 * inf: the cases fixed below.
  Value magnitude = math::AbsFOp::create(b, x);
  Value power = math::ExpOp::create(
      b, mul(b, y, math::LogOp::create(b, magnitude)));
  // Integral y (the infinities count as even), and odd y.
  Value integral = cmp(CmpFPredicate::OEQ, math::FloorOp::create(b, y), y);
  Value half = mul(b, y, constant(b, type, 0.5));
  Value odd = arith::AndIOp::create(
      b, integral,
      cmp(CmpFPredicate::ONE, math::FloorOp::create(b, half), half));
  // A negative x (-0 included) and odd y give a negative result.
  Value negativeX = cmp(CmpFPredicate::OLT,
                        math::CopySignOp::create(b, one, x), zero);
  Value signedPower = select(arith::AndIOp::create(b, negativeX, odd),
                             arith::NegFOp::create(b, power), power);
  // A finite negative x and a non-integral y: no real result.
  Value finiteNegative = arith::AndIOp::create(
      b, cmp(CmpFPredicate::OLT, x, zero),
      cmp(CmpFPredicate::OGT, x, arith::NegFOp::create(b, inf)));
  Value noRealResult = arith::AndIOp::create(
      b, finiteNegative,
      arith::XOrIOp::create(b, integral,
                            arith::ConstantOp::create(b, b.getBoolAttr(true))));
  Value nan =
      constant(b, type, std::numeric_limits<double>::quiet_NaN());
  Value real = select(noRealResult, nan, signedPower);
  // x^0 = 1 (NaN x too), 1^y = 1 (NaN y too), (-1)^+-inf = 1.
  Value unitBase = cmp(CmpFPredicate::OEQ, x, one);
  Value zeroExponent = cmp(CmpFPredicate::OEQ, y, zero);
  Value unitInfinity = arith::AndIOp::create(
      b, cmp(CmpFPredicate::OEQ, magnitude, one),
      cmp(CmpFPredicate::OEQ, math::AbsFOp::create(b, y), inf));
  Value isOne = arith::OrIOp::create(
      b, arith::OrIOp::create(b, unitBase, zeroExponent), unitInfinity);
  return select(isOne, one, real);
}

Value lowering::compare(ImplicitLocOpBuilder &b, Comparison kind, Value x,
                        Value y, Type torchType) {
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
