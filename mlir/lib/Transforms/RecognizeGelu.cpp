//===- RecognizeGelu.cpp - GELU written out becomes aten.gelu -------------===//
//
// The DRR patterns (Patterns/GeluRecognition.td) match the product around
// tanh/erf; the activation's argument is read here as a polynomial in x, so
// every spelling of sqrt(2/pi) * (x + 0.044715 x^3) or x / sqrt(2) matches,
// with constants to float precision.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <array>
#include <cmath>
#include <optional>

namespace fxmlir {
#define GEN_PASS_DEF_RECOGNIZEGELU
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// Relative tolerance of constants: models write sqrt(2/pi) with 8 to 16
/// digits and f32 graphs round 0.044715.
constexpr double kTolerance = 1e-6;
constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubeCoefficient = 0.044715;
constexpr double kInvSqrt2 = 0.7071067811865476;
/// Deep enough for every spelling above; bounds the walk on big graphs.
constexpr int kMaxDepth = 10;

static bool isNear(double value, double expected) {
  return std::abs(value - expected) <= kTolerance * std::abs(expected);
}

static std::optional<double> scalarValue(Attribute scalar) {
  if (auto i = dyn_cast_or_null<IntegerAttr>(scalar))
    return double(i.getValue().getSExtValue());
  if (auto f = dyn_cast_or_null<FloatAttr>(scalar))
    return f.getValueAsDouble();
  return std::nullopt;
}

static bool isScalarNear(Attribute scalar, double expected) {
  std::optional<double> value = scalarValue(scalar);
  return value && isNear(*value, expected);
}

/// c[0] + c[1] x + c[2] x^2 + c[3] x^3.
using Polynomial = std::array<double, 4>;

static std::optional<Polynomial> multiply(const Polynomial &a,
                                          const Polynomial &b) {
  Polynomial product{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      if (a[i] == 0 || b[j] == 0)
        continue;
      if (i + j > 3)
        return std::nullopt;
      product[i + j] += a[i] * b[j];
    }
  return product;
}

static Polynomial axpy(double alpha, const Polynomial &a, const Polynomial &b) {
  Polynomial sum;
  for (int i = 0; i < 4; ++i)
    sum[i] = b[i] + alpha * a[i];
  return sum;
}

static Polynomial scaled(const Polynomial &a, double factor) {
  return axpy(factor, a, Polynomial{});
}

/// `value` as a polynomial in `x` of degree <= 3, built from x with the
/// elementwise ops of x's own type (no cast, no broadcast in between).
static std::optional<Polynomial> polynomialIn(Value value, Value x,
                                              int depth = 0) {
  if (value == x)
    return Polynomial{0, 1, 0, 0};
  if (depth > kMaxDepth || value.getType() != x.getType())
    return std::nullopt;
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  auto of = [&](Value v) { return polynomialIn(v, x, depth + 1); };
  // p(v) * factor + offset, for the ops with one tensor and scalars.
  auto affine = [&](Value v, std::optional<double> factor,
                    std::optional<double> offset) -> std::optional<Polynomial> {
    std::optional<Polynomial> p = of(v);
    if (!p || !factor || !offset)
      return std::nullopt;
    Polynomial result = scaled(*p, *factor);
    result[0] += *offset;
    return result;
  };
  if (auto mul = dyn_cast<MulScalarOp>(op))
    return affine(mul.getSelf(), scalarValue(mul.getOtherAttr()), 0.0);
  if (auto div = dyn_cast<DivScalarOp>(op)) {
    std::optional<double> divisor = scalarValue(div.getOtherAttr());
    if (!divisor || *divisor == 0)
      return std::nullopt;
    return affine(div.getSelf(), 1 / *divisor, 0.0);
  }
  if (auto add = dyn_cast<AddScalarOp>(op)) {
    std::optional<double> alpha = scalarValue(add.getAlphaAttr());
    std::optional<double> other = scalarValue(add.getOtherAttr());
    if (!alpha || !other)
      return std::nullopt;
    return affine(add.getSelf(), 1.0, *alpha * *other);
  }
  if (auto pow = dyn_cast<PowTensorScalarOp>(op)) {
    std::optional<double> exponent = scalarValue(pow.getExponentAttr());
    std::optional<Polynomial> base = of(pow.getSelf());
    if (!exponent || !base || *exponent < 1 || *exponent > 3 ||
        *exponent != std::floor(*exponent))
      return std::nullopt;
    std::optional<Polynomial> power = base;
    for (int i = 1; power && i < int(*exponent); ++i)
      power = multiply(*power, *base);
    return power;
  }
  auto binary = [&](Value lhs, Value rhs, Attribute alphaAttr,
                    double sign) -> std::optional<Polynomial> {
    std::optional<Polynomial> a = of(lhs), b = of(rhs);
    std::optional<double> alpha = scalarValue(alphaAttr);
    if (!a || !b || !alpha)
      return std::nullopt;
    return axpy(sign * *alpha, *b, *a);
  };
  if (auto add = dyn_cast<AddTensorOp>(op))
    return binary(add.getSelf(), add.getOther(), add.getAlphaAttr(), 1);
  if (auto sub = dyn_cast<SubTensorOp>(op))
    return binary(sub.getSelf(), sub.getOther(), sub.getAlphaAttr(), -1);
  if (auto mul = dyn_cast<MulTensorOp>(op)) {
    std::optional<Polynomial> a = of(mul.getSelf()), b = of(mul.getOther());
    if (!a || !b)
      return std::nullopt;
    return multiply(*a, *b);
  }
  return std::nullopt;
}

static bool isPolynomial(Value value, Value x, const Polynomial &expected) {
  std::optional<Polynomial> p = polynomialIn(value, x);
  if (!p)
    return false;
  for (int i = 0; i < 4; ++i) {
    if (expected[i] == 0 ? (*p)[i] != 0 : !isNear((*p)[i], expected[i]))
      return false;
  }
  return true;
}

static bool isTanhGeluArgument(Value argument, Value x) {
  return isPolynomial(argument, x,
                      {0, kSqrt2OverPi, 0, kSqrt2OverPi * kCubeCoefficient});
}

static bool isErfGeluArgument(Value argument, Value x) {
  return isPolynomial(argument, x, {0, kInvSqrt2, 0, 0});
}

/// Whether `cast` (a _to_copy of `input`) only widens a 16-bit float to f32
/// or f64, keeping shape and device.
static bool isWideningCast(Value cast, Value input) {
  auto from = dyn_cast<RankedTensorType>(input.getType());
  auto to = dyn_cast<RankedTensorType>(cast.getType());
  if (!from || !to || from.getShape() != to.getShape() ||
      from.getEncoding() != to.getEncoding())
    return false;
  Type narrow = from.getElementType(), wide = to.getElementType();
  return (narrow.isF16() || narrow.isBF16()) && (wide.isF32() || wide.isF64());
}

#include "fxmlir/Transforms/Patterns/GeluRecognition.inc"

struct RecognizeGeluPass
    : public PatternPass<RecognizeGeluPass, impl::RecognizeGeluBase,
                         /*kFusion=*/false> {
  static void populate(RewritePatternSet &patterns) {
    populateWithGenerated(patterns);
  }
};
} // namespace
} // namespace fxmlir
