//===- ElementwiseOps.cpp - elementwise fxmlir ops to linalg --------------===//
//
// Arithmetic with type promotion and Python-scalar operands, casts,
// comparisons, selects, activations and their gradients. Each op becomes one
// linalg.generic computing in the result's compute type (f32 for f16/bf16)
// and rounding to the result type, as torch's kernel for the op does.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "OpLowerings.h"
#include "ScalarMath.h"

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::lowering;

namespace {
/// A tensor input of an elementwise op and the torch type it is cast to.
struct Input {
  Value tensor;
  Type torchType;
  Type castType;
};

/// An operand of an arithmetic op: a tensor (and its torch type) or a
/// Python scalar.
struct Operand {
  Value tensor;
  Type torchType;
  Attribute scalar;
};

using ComputeFn =
    llvm::function_ref<Value(ImplicitLocOpBuilder &b, ArrayRef<Value> args)>;
} // namespace

static Type resultType(Operation *op, unsigned index = 0) {
  return torchElementType(op->getResult(index));
}

static Value elementwise(ImplicitLocOpBuilder &b, Type resultTorchType,
                         ArrayRef<Input> inputs, ComputeFn fn) {
  SmallVector<Value> tensors;
  for (const Input &input : inputs)
    tensors.push_back(input.tensor);
  return buildElementwise(
      b, tensors, storageType(resultTorchType),
      [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        SmallVector<Value> args;
        for (auto [input, element] : llvm::zip(inputs, elements))
          args.push_back(
              toCompute(nb, element, input.torchType, input.castType));
        return fromCompute(nb, fn(nb, args), resultTorchType);
      });
}

/// Operands cast to the result type: the common case.
static SmallVector<Input> castToResult(Operation *op, ValueRange operands) {
  SmallVector<Input> inputs;
  for (auto [original, lowered] : llvm::zip(op->getOperands(), operands))
    inputs.push_back({lowered, torchElementType(original), resultType(op)});
  return inputs;
}

static std::optional<JitOpKind> elementwiseIf(bool supported) {
  if (!supported)
    return std::nullopt;
  return JitOpKind::Elementwise;
}

static bool isScalarAttr(Attribute attr) {
  return isa_and_nonnull<IntegerAttr, FloatAttr, BoolAttr>(attr);
}

static double scalarValue(Attribute scalar) {
  if (auto boolean = dyn_cast<BoolAttr>(scalar))
    return boolean.getValue();
  if (auto integer = dyn_cast<IntegerAttr>(scalar))
    return static_cast<double>(integer.getInt());
  return cast<FloatAttr>(scalar).getValueAsDouble();
}

/// A Python scalar rounded to torch type `torchType`, then widened to its
/// compute type: how torch's kernels see a scalar converted to the dtype.
static Value roundedScalar(ImplicitLocOpBuilder &b, Attribute scalar,
                           Type torchType) {
  Value stored = constant(b, storageType(torchType), scalar);
  return toCompute(b, stored, torchType, torchType);
}

//===----------------------------------------------------------------------===//
// Identity
//===----------------------------------------------------------------------===//

static std::optional<JitOpKind> checkIdentity(Operation *) {
  return JitOpKind::Identity;
}

static SmallVector<Value> lowerIdentity(ImplicitLocOpBuilder &, Operation *,
                                        ValueRange operands) {
  return {operands.front()};
}

//===----------------------------------------------------------------------===//
// Arithmetic: add, sub, mul, div, rsub with tensors or Python scalars
//===----------------------------------------------------------------------===//

namespace {
enum class ArithKind { Add, Sub, Mul, Div };
} // namespace

/// `lhs kind alpha * rhs` in the result's compute type; the scalar `alpha`
/// only for add and sub.
static Value arithmetic(ImplicitLocOpBuilder &b, Operation *op, ArithKind kind,
                        Operand lhs, Operand rhs, Attribute alpha) {
  Type result = resultType(op);
  SmallVector<Input> inputs;
  for (const Operand &operand : {lhs, rhs})
    if (operand.tensor)
      inputs.push_back({operand.tensor, operand.torchType, result});
  return elementwise(b, result, inputs, [&](ImplicitLocOpBuilder &nb,
                                            ArrayRef<Value> args) {
    Type compute = computeType(result);
    unsigned next = 0;
    Value x = lhs.tensor ? args[next++] : constant(nb, compute, lhs.scalar);
    Value y = rhs.tensor ? args[next++] : constant(nb, compute, rhs.scalar);
    if (alpha && scalarValue(alpha) != 1.0) {
      Value scale = constant(nb, compute, alpha);
      if (kind == ArithKind::Sub)
        scale = neg(nb, scale);
      // Torch's kernels fuse x + alpha * y into one fma: no rounding, nor
      // overflow, of alpha * y on its own.
      if (isa<FloatType>(compute))
        return math::FmaOp::create(nb, y, scale, x).getResult();
      return add(nb, x, mul(nb, y, scale));
    }
    switch (kind) {
    case ArithKind::Add:
      return add(nb, x, y);
    case ArithKind::Sub:
      return sub(nb, x, y);
    case ArithKind::Mul:
      return mul(nb, x, y);
    case ArithKind::Div:
      return arith::DivFOp::create(nb, x, y).getResult();
    }
    llvm_unreachable("unknown arithmetic kind");
  });
}

/// Bool arithmetic is logic in torch; division is true division.
template <ArithKind kind>
static std::optional<JitOpKind> checkArithmetic(Operation *op) {
  Type result = resultType(op);
  if (kind == ArithKind::Div)
    return elementwiseIf(isa<FloatType>(result));
  return elementwiseIf(!result.isInteger(1));
}

static Operand tensorOperand(Operation *op, ValueRange operands,
                             unsigned index) {
  return {operands[index], torchElementType(op->getOperand(index)), {}};
}

template <ArithKind kind>
static SmallVector<Value> lowerArithTensor(ImplicitLocOpBuilder &b,
                                           Operation *op, ValueRange operands) {
  return {arithmetic(b, op, kind, tensorOperand(op, operands, 0),
                     tensorOperand(op, operands, 1), op->getAttr("alpha"))};
}

template <ArithKind kind>
static SmallVector<Value> lowerArithScalar(ImplicitLocOpBuilder &b,
                                           Operation *op, ValueRange operands) {
  Operand scalar{{}, {}, op->getAttr("other")};
  return {arithmetic(b, op, kind, tensorOperand(op, operands, 0), scalar,
                     op->getAttr("alpha"))};
}

//===----------------------------------------------------------------------===//
// fxmlir.call of ATen ops that have no typed op or got a Python scalar
//===----------------------------------------------------------------------===//

/// The arguments of a call: each a tensor operand or a Python scalar, and
/// its scalar `alpha` keyword if any. Nothing for anything else.
static std::optional<std::pair<SmallVector<Operand>, Attribute>>
callArguments(Operation *op, ValueRange operands) {
  auto call = cast<CallOp>(op);
  Attribute alpha;
  for (NamedAttribute kwarg : call.getKwargs()) {
    if (kwarg.getName() != "alpha" || !isScalarAttr(kwarg.getValue()))
      return std::nullopt;
    alpha = kwarg.getValue();
  }
  SmallVector<Operand> arguments;
  for (Attribute arg : call.getArgs()) {
    if (auto ref = dyn_cast<OperandRefAttr>(arg)) {
      Value original = call.getOperands()[ref.getIndex()];
      if (!isa<RankedTensorType>(original.getType()))
        return std::nullopt;
      Value lowered = operands.empty() ? Value() : operands[ref.getIndex()];
      arguments.push_back({lowered, torchElementType(original), {}});
    } else if (isScalarAttr(arg)) {
      arguments.push_back({{}, {}, arg});
    } else {
      return std::nullopt;
    }
  }
  return std::make_pair(arguments, alpha);
}

/// `aten::<op>.Tensor(a, b)` where one side is a Python scalar.
template <ArithKind kind>
static std::optional<JitOpKind> checkArithCall(Operation *op) {
  auto parsed = callArguments(op, {});
  if (!parsed || parsed->first.size() != 2 ||
      (!parsed->first[0].torchType && !parsed->first[1].torchType) ||
      (parsed->second && kind != ArithKind::Add && kind != ArithKind::Sub))
    return std::nullopt;
  return checkArithmetic<kind>(op);
}

template <ArithKind kind>
static SmallVector<Value> lowerArithCall(ImplicitLocOpBuilder &b,
                                         Operation *op, ValueRange operands) {
  auto [args, alpha] = *callArguments(op, operands);
  return {arithmetic(b, op, kind, args[0], args[1], alpha)};
}

/// `aten::rsub.Scalar(x, other, alpha=1)`: other - alpha * x.
static std::optional<JitOpKind> checkRSubCall(Operation *op) {
  auto parsed = callArguments(op, {});
  if (!parsed || parsed->first.size() < 2 || parsed->first.size() > 3 ||
      !parsed->first[0].torchType || !parsed->first[1].scalar ||
      (parsed->first.size() == 3 && !parsed->first[2].scalar))
    return std::nullopt;
  return checkArithmetic<ArithKind::Sub>(op);
}

static SmallVector<Value> lowerRSubCall(ImplicitLocOpBuilder &b, Operation *op,
                                        ValueRange operands) {
  auto [args, alpha] = *callArguments(op, operands);
  if (args.size() == 3)
    alpha = args[2].scalar;
  return {arithmetic(b, op, ArithKind::Sub, args[1], args[0], alpha)};
}

//===----------------------------------------------------------------------===//
// Unary math and activations
//===----------------------------------------------------------------------===//

using UnaryFn = Value (*)(ImplicitLocOpBuilder &b, Value x);

template <UnaryFn fn>
static SmallVector<Value> lowerUnary(ImplicitLocOpBuilder &b, Operation *op,
                                     ValueRange operands) {
  return {elementwise(
      b, resultType(op), castToResult(op, operands.take_front()),
      [](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
        return fn(nb, args[0]);
      })};
}

static std::optional<JitOpKind> checkFloatResult(Operation *op) {
  return elementwiseIf(isa<FloatType>(resultType(op)));
}

static std::optional<JitOpKind> checkNumericResult(Operation *op) {
  return elementwiseIf(!resultType(op).isInteger(1));
}

/// relu and abs compare with 0: signed integers and floats.
static std::optional<JitOpKind> checkSignedResult(Operation *op) {
  Type result = resultType(op);
  return elementwiseIf(isa<FloatType>(result) || result.isSignedInteger());
}

/// `MathOp` of `x`: math's one-operand functions (exp, log, sqrt, ...).
template <typename MathOp>
static Value unaryMath(ImplicitLocOpBuilder &b, Value x) {
  return MathOp::create(b, x);
}
static Value reciprocal(ImplicitLocOpBuilder &b, Value x) {
  return arith::DivFOp::create(b, constant(b, x.getType(), 1.0), x);
}
static Value abs(ImplicitLocOpBuilder &b, Value x) {
  if (isa<FloatType>(x.getType()))
    return math::AbsFOp::create(b, x);
  return math::AbsIOp::create(b, x);
}
static Value relu(ImplicitLocOpBuilder &b, Value x) {
  return maximum(b, x, constant(b, x.getType(), 0.0));
}
static Value silu(ImplicitLocOpBuilder &b, Value x) {
  return mul(b, x, sigmoid(b, x));
}

/// x^exponent (x of torch type `torchType`) as torch's kernel computes it:
/// +-0.5 as (reciprocal) square roots except for f16, which calls pow (they
/// differ at -0 and -inf), small integral exponents as products, others as
/// C's pow.
static Value power(ImplicitLocOpBuilder &b, Value x, Type torchType,
                   double exponent) {
  Type type = x.getType();
  bool roots = !isa<Float16Type>(torchType);
  if (roots && exponent == 0.5)
    return unaryMath<math::SqrtOp>(b, x);
  if (roots && exponent == -0.5)
    return unaryMath<math::RsqrtOp>(b, x);
  if (exponent != std::trunc(exponent) || std::abs(exponent) > 8)
    return lowering::pow(b, x, constant(b, type, exponent));
  if (exponent == 0)
    return constant(b, type, 1.0);
  Value result = x;
  for (int i = 1, e = static_cast<int>(std::abs(exponent)); i < e; ++i)
    result = mul(b, result, x);
  return exponent < 0 ? reciprocal(b, result) : result;
}

static SmallVector<Value> lowerPowScalar(ImplicitLocOpBuilder &b, Operation *op,
                                         ValueRange operands) {
  double exponent = scalarValue(op->getAttr("exponent"));
  Type result = resultType(op);
  return {elementwise(b, result, castToResult(op, operands),
                      [&](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        return power(nb, args[0], result, exponent);
                      })};
}

static SmallVector<Value> lowerPowTensor(ImplicitLocOpBuilder &b, Operation *op,
                                         ValueRange operands) {
  return {elementwise(b, resultType(op), castToResult(op, operands),
                      [](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        return lowering::pow(nb, args[0], args[1]);
                      })};
}

static std::optional<JitOpKind> checkGelu(Operation *op) {
  auto approximate = op->getAttrOfType<StringAttr>("approximate");
  if (!approximate ||
      (approximate.getValue() != "none" && approximate.getValue() != "tanh"))
    return std::nullopt;
  return checkFloatResult(op);
}

static bool usesTanh(Operation *op) {
  return op->getAttrOfType<StringAttr>("approximate").getValue() == "tanh";
}

// Torch's GELU constants.
static constexpr double kSqrtHalf = 0.70710678118654752440;
static constexpr double kSqrtTwoOverPi = 0.79788456080286535588;
static constexpr double kInvSqrtTwoPi = 0.39894228040143267794;
static constexpr double kKappa = 0.044715;

/// The tanh approximation's inner argument sqrt(2/pi) (x + 0.044715 x^3).
static Value geluTanhInner(ImplicitLocOpBuilder &b, Value x) {
  Type type = x.getType();
  Value cube = mul(b, mul(b, x, x), x);
  Value inner = add(b, x, mul(b, constant(b, type, kKappa), cube));
  return mul(b, constant(b, type, kSqrtTwoOverPi), inner);
}

static SmallVector<Value> lowerGelu(ImplicitLocOpBuilder &b, Operation *op,
                                    ValueRange operands) {
  bool approximate = usesTanh(op);
  return {elementwise(
      b, resultType(op), castToResult(op, operands),
      [&](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
        Value x = args[0];
        Type type = x.getType();
        Value t =
            approximate
                ? unaryMath<math::TanhOp>(nb, geluTanhInner(nb, x))
                : unaryMath<math::ErfOp>(
                      nb, mul(nb, x, constant(nb, type, kSqrtHalf)));
        Value half = mul(nb, constant(nb, type, 0.5), x);
        return mul(nb, half, add(nb, constant(nb, type, 1.0), t));
      })};
}

static SmallVector<Value> lowerGeluBackward(ImplicitLocOpBuilder &b,
                                            Operation *op,
                                            ValueRange operands) {
  bool approximate = usesTanh(op);
  return {elementwise(
      b, resultType(op), castToResult(op, operands),
      [&](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
        Value grad = args[0], x = args[1];
        Type type = x.getType();
        Value one = constant(nb, type, 1.0), half = constant(nb, type, 0.5);
        if (!approximate) {
          Value erfTerm = unaryMath<math::ErfOp>(
              nb, mul(nb, x, constant(nb, type, kSqrtHalf)));
          Value cdf = mul(nb, half, add(nb, one, erfTerm));
          Value gauss = unaryMath<math::ExpOp>(
              nb, mul(nb, neg(nb, half), mul(nb, x, x)));
          Value pdf = mul(nb, constant(nb, type, kInvSqrtTwoPi), gauss);
          return mul(nb, grad, add(nb, cdf, mul(nb, x, pdf)));
        }
        // d/dx 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + k x^3).
        Value t = unaryMath<math::TanhOp>(nb, geluTanhInner(nb, x));
        Value left = mul(nb, half, x);
        Value leftDerivative = mul(nb, half, add(nb, one, t));
        Value du = mul(nb, constant(nb, type, kSqrtTwoOverPi),
                       add(nb, one, mul(nb, constant(nb, type, 3 * kKappa),
                                        mul(nb, x, x))));
        Value rightDerivative =
            mul(nb, mul(nb, left, sub(nb, one, mul(nb, t, t))), du);
        return mul(nb, grad, add(nb, leftDerivative, rightDerivative));
      })};
}

static SmallVector<Value> lowerTanhBackward(ImplicitLocOpBuilder &b,
                                            Operation *op,
                                            ValueRange operands) {
  return {elementwise(b, resultType(op), castToResult(op, operands),
                      [](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        Value y = args[1];
                        Value one = constant(nb, y.getType(), 1.0);
                        return mul(nb, args[0], sub(nb, one, mul(nb, y, y)));
                      })};
}

static SmallVector<Value> lowerSigmoidBackward(ImplicitLocOpBuilder &b,
                                               Operation *op,
                                               ValueRange operands) {
  return {elementwise(b, resultType(op), castToResult(op, operands),
                      [](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        Value y = args[1];
                        Value one = constant(nb, y.getType(), 1.0);
                        return mul(nb, mul(nb, args[0], sub(nb, one, y)), y);
                      })};
}

/// grad * s * (1 + x * (1 - s)), s = sigmoid(x).
static SmallVector<Value> lowerSiluBackward(ImplicitLocOpBuilder &b,
                                            Operation *op,
                                            ValueRange operands) {
  return {elementwise(
      b, resultType(op), castToResult(op, operands),
      [](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
        Value x = args[1];
        Value one = constant(nb, x.getType(), 1.0);
        Value s = sigmoid(nb, x);
        Value slope = add(nb, one, mul(nb, x, sub(nb, one, s)));
        return mul(nb, mul(nb, args[0], s), slope);
      })};
}

/// self <= threshold ? 0 : grad (relu's gradient).
static SmallVector<Value> lowerThresholdBackward(ImplicitLocOpBuilder &b,
                                                 Operation *op,
                                                 ValueRange operands) {
  Attribute threshold = op->getAttr("threshold");
  Type result = resultType(op);
  return {elementwise(b, result, castToResult(op, operands),
                      [&](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        Value limit = roundedScalar(nb, threshold, result);
                        Value below = compare(nb, Comparison::Le, args[1],
                                              limit, result);
                        Value zero = constant(nb, args[0].getType(), 0.0);
                        return arith::SelectOp::create(nb, below, zero, args[0])
                            .getResult();
                      })};
}

static std::optional<JitOpKind> checkThresholdBackward(Operation *op) {
  if (torchElementType(op->getOperand(1)) != resultType(op))
    return std::nullopt;
  return checkSignedResult(op);
}


//===----------------------------------------------------------------------===//
// Comparisons, where, masked_fill, casts
//===----------------------------------------------------------------------===//

template <Comparison kind>
static SmallVector<Value> lowerCompareTensor(ImplicitLocOpBuilder &b,
                                             Operation *op,
                                             ValueRange operands) {
  Type common = torchElementType(op->getOperand(0));
  SmallVector<Input> inputs = {{operands[0], common, common},
                               {operands[1], common, common}};
  return {elementwise(b, resultType(op), inputs,
                      [&](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        return compare(nb, kind, args[0], args[1], common);
                      })};
}

/// Tensors of two dtypes compare in a promoted dtype; only equal dtypes are
/// lowered.
static std::optional<JitOpKind> checkCompareTensor(Operation *op) {
  return elementwiseIf(torchElementType(op->getOperand(0)) ==
                       torchElementType(op->getOperand(1)));
}

/// The dtype torch compares a tensor of `tensorType` with a Python scalar
/// in: a float scalar promotes integer tensors to the default float dtype,
/// an integer scalar promotes bool tensors to int64.
static Type scalarComparisonType(Type tensorType, Attribute scalar) {
  MLIRContext *ctx = tensorType.getContext();
  if (isa<FloatType>(tensorType))
    return tensorType;
  if (isa<FloatAttr>(scalar))
    return Float32Type::get(ctx);
  if (tensorType.isInteger(1) && isa<IntegerAttr>(scalar))
    return IntegerType::get(ctx, 64, IntegerType::Signed);
  return tensorType;
}

template <Comparison kind>
static SmallVector<Value> lowerCompareScalar(ImplicitLocOpBuilder &b,
                                             Operation *op,
                                             ValueRange operands) {
  Attribute scalar = op->getAttr("other");
  Type self = torchElementType(op->getOperand(0));
  Type common = scalarComparisonType(self, scalar);
  SmallVector<Input> inputs = {{operands[0], self, common}};
  return {elementwise(b, resultType(op), inputs,
                      [&](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        Value other = roundedScalar(nb, scalar, common);
                        return compare(nb, kind, args[0], other, common);
                      })};
}

static std::optional<JitOpKind> checkAlwaysElementwise(Operation *) {
  return JitOpKind::Elementwise;
}

static std::optional<JitOpKind> checkWhere(Operation *op) {
  return elementwiseIf(torchElementType(op->getOperand(0)).isInteger(1));
}

static SmallVector<Value> lowerWhere(ImplicitLocOpBuilder &b, Operation *op,
                                     ValueRange operands) {
  SmallVector<Input> inputs = castToResult(op, operands);
  inputs[0].castType = inputs[0].torchType;
  return {elementwise(b, resultType(op), inputs,
                      [](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        return arith::SelectOp::create(nb, args[0], args[1],
                                                       args[2])
                            .getResult();
                      })};
}

/// masked_fill.Scalar and masked_fill.Tensor (a 0-d value tensor).
static std::optional<JitOpKind> checkMaskedFill(Operation *op) {
  if (!torchElementType(op->getOperand(1)).isInteger(1))
    return std::nullopt;
  if (op->getNumOperands() == 3 &&
      cast<RankedTensorType>(op->getOperand(2).getType()).getRank() != 0)
    return std::nullopt;
  return JitOpKind::Elementwise;
}

static SmallVector<Value> lowerMaskedFill(ImplicitLocOpBuilder &b,
                                          Operation *op, ValueRange operands) {
  Type result = resultType(op);
  SmallVector<Input> inputs = castToResult(op, operands);
  inputs[1].castType = inputs[1].torchType;
  Attribute scalar = op->getAttr("value");
  return {elementwise(b, result, inputs,
                      [&](ImplicitLocOpBuilder &nb, ArrayRef<Value> args) {
                        Value fill = scalar ? roundedScalar(nb, scalar, result)
                                            : args[2];
                        return arith::SelectOp::create(nb, args[1], fill,
                                                       args[0])
                            .getResult();
                      })};
}

/// `_to_copy` that changes at most the dtype (a region's results are
/// contiguous, so contiguous_format is one too).
static std::optional<JitOpKind> checkToCopy(Operation *op) {
  return elementwiseIf(isPlainCopy(cast<UnderscoreToCopyOp>(op),
                                   /*orContiguous=*/true));
}

static SmallVector<Value> lowerToCopy(ImplicitLocOpBuilder &b, Operation *op,
                                      ValueRange operands) {
  return {elementwise(
      b, resultType(op), castToResult(op, operands),
      [](ImplicitLocOpBuilder &, ArrayRef<Value> args) { return args[0]; })};
}

/// A 0-d tensor holding a Python scalar (where's zeros in backward graphs).
static std::optional<JitOpKind> checkScalarTensor(Operation *op) {
  auto layout = op->getAttrOfType<StringAttr>("layout");
  return elementwiseIf(cast<RankedTensorType>(op->getResult(0).getType())
                           .getRank() == 0 &&
                       (!layout || layout.getValue() == "strided"));
}

/// A splat constant, which elementwise fusion folds into its users.
static SmallVector<Value> lowerScalarTensor(ImplicitLocOpBuilder &b,
                                            Operation *op, ValueRange) {
  Type result = resultType(op);
  Value scalar = roundedScalar(b, op->getAttr("s"), result);
  Value stored = fromCompute(b, scalar, result);
  auto type = RankedTensorType::get({}, stored.getType());
  return {tensor::FromElementsOp::create(b, type, stored)};
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void lowering::addElementwiseLowerings(LoweringTable &table) {
  auto add = [&](StringRef name, CheckFn check, LowerFn lower) {
    table[("fxmlir.aten." + name).str()] = {check, lower};
  };
  auto addCall = [&](StringRef target, CheckFn check, LowerFn lower) {
    table[("fxmlir.call:" + target).str()] = {check, lower};
  };
  add("detach", checkIdentity, lowerIdentity);
  add("alias", checkIdentity, lowerIdentity);

  add("add.Tensor", checkArithmetic<ArithKind::Add>,
      lowerArithTensor<ArithKind::Add>);
  add("sub.Tensor", checkArithmetic<ArithKind::Sub>,
      lowerArithTensor<ArithKind::Sub>);
  add("mul.Tensor", checkArithmetic<ArithKind::Mul>,
      lowerArithTensor<ArithKind::Mul>);
  add("div.Tensor", checkArithmetic<ArithKind::Div>,
      lowerArithTensor<ArithKind::Div>);
  add("add.Scalar", checkArithmetic<ArithKind::Add>,
      lowerArithScalar<ArithKind::Add>);
  add("sub.Scalar", checkArithmetic<ArithKind::Sub>,
      lowerArithScalar<ArithKind::Sub>);
  add("mul.Scalar", checkArithmetic<ArithKind::Mul>,
      lowerArithScalar<ArithKind::Mul>);
  add("div.Scalar", checkArithmetic<ArithKind::Div>,
      lowerArithScalar<ArithKind::Div>);
  addCall("aten::add.Tensor", checkArithCall<ArithKind::Add>,
          lowerArithCall<ArithKind::Add>);
  addCall("aten::sub.Tensor", checkArithCall<ArithKind::Sub>,
          lowerArithCall<ArithKind::Sub>);
  addCall("aten::mul.Tensor", checkArithCall<ArithKind::Mul>,
          lowerArithCall<ArithKind::Mul>);
  addCall("aten::div.Tensor", checkArithCall<ArithKind::Div>,
          lowerArithCall<ArithKind::Div>);
  addCall("aten::rsub.Scalar", checkRSubCall, lowerRSubCall);

  add("neg", checkNumericResult, lowerUnary<neg>);
  add("abs", checkSignedResult, lowerUnary<abs>);
  add("relu", checkSignedResult, lowerUnary<relu>);
  add("exp", checkFloatResult, lowerUnary<unaryMath<math::ExpOp>>);
  add("log", checkFloatResult, lowerUnary<unaryMath<math::LogOp>>);
  add("sqrt", checkFloatResult, lowerUnary<unaryMath<math::SqrtOp>>);
  add("rsqrt", checkFloatResult, lowerUnary<unaryMath<math::RsqrtOp>>);
  add("reciprocal", checkFloatResult, lowerUnary<reciprocal>);
  add("tanh", checkFloatResult, lowerUnary<unaryMath<math::TanhOp>>);
  add("erf", checkFloatResult, lowerUnary<unaryMath<math::ErfOp>>);
  add("sigmoid", checkFloatResult, lowerUnary<sigmoid>);
  add("pow.Tensor_Scalar", checkFloatResult, lowerPowScalar);
  add("pow.Tensor_Tensor", checkFloatResult, lowerPowTensor);
  add("gelu", checkGelu, lowerGelu);
  add("gelu_backward", checkGelu, lowerGeluBackward);
  add("tanh_backward", checkFloatResult, lowerTanhBackward);
  add("sigmoid_backward", checkFloatResult, lowerSigmoidBackward);
  add("threshold_backward", checkThresholdBackward, lowerThresholdBackward);
  add("silu", checkFloatResult, lowerUnary<silu>);
  add("silu_backward", checkFloatResult, lowerSiluBackward);

  add("eq.Tensor", checkCompareTensor, lowerCompareTensor<Comparison::Eq>);
  add("ne.Tensor", checkCompareTensor, lowerCompareTensor<Comparison::Ne>);
  add("lt.Tensor", checkCompareTensor, lowerCompareTensor<Comparison::Lt>);
  add("le.Tensor", checkCompareTensor, lowerCompareTensor<Comparison::Le>);
  add("gt.Tensor", checkCompareTensor, lowerCompareTensor<Comparison::Gt>);
  add("ge.Tensor", checkCompareTensor, lowerCompareTensor<Comparison::Ge>);
  add("eq.Scalar", checkAlwaysElementwise, lowerCompareScalar<Comparison::Eq>);
  add("ne.Scalar", checkAlwaysElementwise, lowerCompareScalar<Comparison::Ne>);
  add("lt.Scalar", checkAlwaysElementwise, lowerCompareScalar<Comparison::Lt>);
  add("le.Scalar", checkAlwaysElementwise, lowerCompareScalar<Comparison::Le>);
  add("gt.Scalar", checkAlwaysElementwise, lowerCompareScalar<Comparison::Gt>);
  add("ge.Scalar", checkAlwaysElementwise, lowerCompareScalar<Comparison::Ge>);
  add("where.self", checkWhere, lowerWhere);
  add("masked_fill.Scalar", checkMaskedFill, lowerMaskedFill);
  add("masked_fill.Tensor", checkMaskedFill, lowerMaskedFill);
  add("_to_copy", checkToCopy, lowerToCopy);
  add("scalar_tensor", checkScalarTensor, lowerScalarTensor);
}
