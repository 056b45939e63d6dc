//===- ReductionOps.cpp - reductions, softmax and layer norm to linalg ----===//
//
// Sums, means, maxima and variances over the last dim (or, for sums, over
// all leading dims: bias gradients), and the composite ops built on them:
// softmax and log-softmax with their gradients, layer norm and its backward.
// Composites compute in f32 for f16/bf16 and round only their results, as
// torch's kernels do; reductions accumulate in the compute type.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "OpLowerings.h"
#include "ScalarMath.h"

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::lowering;

static Type resultType(Operation *op, unsigned index = 0) {
  return torchElementType(op->getResult(index));
}

/// Reductions over the last dim keep dim 0 unless the tensor is 1-D;
/// reductions over all leading dims (bias gradients) reduce it.
static std::optional<JitOpKind> reductionKind(int64_t rank,
                                              ArrayRef<int64_t> dims) {
  if (rank == 0)
    return std::nullopt;
  if (dims.size() == 1 && dims.front() == rank - 1)
    return rank == 1 ? JitOpKind::ReductionOverDim0 : JitOpKind::Reduction;
  if (rank >= 2 && static_cast<int64_t>(dims.size()) == rank - 1 &&
      dims.back() == rank - 2)
    return JitOpKind::ReductionOverDim0;
  return std::nullopt;
}

static SmallVector<int64_t> lastDim(int64_t rank) { return {rank - 1}; }

static SmallVector<int64_t> leadingDims(int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
}

/// `tensor` (elements of torch type `from`) converted to torch type `to`.
static Value convertTensor(ImplicitLocOpBuilder &b, Value tensor, Type from,
                           Type to) {
  if (storageType(from) == storageType(to))
    return tensor;
  return buildElementwise(b, tensor, storageType(to),
                          [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
                            return castTo(nb, elements[0], from, to);
                          });
}

/// Sum of `map` over `dims`, in `accType`. Floats may be reassociated, so
/// that the loop vectorizes (and sums in several partial sums).
static Value sumOver(ImplicitLocOpBuilder &b, ValueRange inputs,
                     ArrayRef<int64_t> dims, bool keepDims, Type accType,
                     ElementFn map) {
  return buildReduction(
      b, inputs, dims, keepDims, constant(b, accType, 0.0), map,
      [](ImplicitLocOpBuilder &nb, Value element, Value acc) -> Value {
        if (!isa<FloatType>(acc.getType()))
          return arith::AddIOp::create(nb, element, acc);
        auto reassoc = arith::FastMathFlagsAttr::get(
            nb.getContext(), arith::FastMathFlags::reassoc);
        return arith::AddFOp::create(nb, element, acc, reassoc);
      });
}

/// The largest `map` element over `dims`: NaN if any is NaN, or with
/// `ignoreNaN` the largest other element (LLVM vectorizes only that one).
static Value maxOver(ImplicitLocOpBuilder &b, ValueRange inputs,
                     ArrayRef<int64_t> dims, bool keepDims, Type accType,
                     ElementFn map, bool ignoreNaN) {
  Value init;
  if (auto floatType = dyn_cast<FloatType>(accType))
    init = arith::ConstantOp::create(
        b, b.getFloatAttr(accType, APFloat::getInf(
                                       floatType.getFloatSemantics(), true)));
  else
    init = arith::ConstantOp::create(
        b, b.getIntegerAttr(accType, APInt::getSignedMinValue(
                                         accType.getIntOrFloatBitWidth())));
  return buildReduction(
      b, inputs, dims, keepDims, init, map,
      [ignoreNaN](ImplicitLocOpBuilder &nb, Value element, Value acc) -> Value {
        if (ignoreNaN && isa<FloatType>(acc.getType()))
          return arith::MaxNumFOp::create(nb, element, acc);
        return maximum(nb, element, acc);
      });
}

/// Each element of `tensor` divided by `count`, rounded to `torchType`.
static Value divideBy(ImplicitLocOpBuilder &b, Value tensor, Value count,
                      Type torchType) {
  return buildElementwise(b, tensor, storageType(torchType),
                          [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
                            Value mean = arith::DivFOp::create(
                                nb, elements[0], count);
                            return fromCompute(nb, mean, torchType);
                          });
}

namespace {
/// Per-row statistics of a tensor over reduced dims, with those dims kept
/// as size 1.
struct Moments {
  Value mean;
  /// The sum of squared deviations from the mean.
  Value squares;
};
} // namespace

/// The first element of each row of `x` (index 0 along `dims`), with `dims`
/// kept as size 1; none if a row may be empty.
static Value firstOfRows(ImplicitLocOpBuilder &b, Value x,
                         ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, b.getLoc(), x);
  for (int64_t d : dims) {
    if (type.getDimSize(d) == 0 || ShapedType::isDynamic(type.getDimSize(d)))
      return {};
    sizes[d] = b.getIndexAttr(1);
  }
  return tensor::ExtractSliceOp::create(b, x, offsets, sizes, strides);
}

/// Two passes over each row (the second reads it from cache): the mean,
/// then the sum of squared deviations from it. The mean is the row's first
/// element plus the mean of the differences from it, so that a constant row
/// has its own value as mean and a variance of exactly 0, as with torch's
/// Welford kernels. Computing these statistics of [4096, 1024] f32 rows on
/// this repository's CPU, the shift costs 6% over plain two passes, where a
/// third pass correcting the mean costs 45% and Welford recurrences in 8
/// lanes 90% (sequential Welford: 14x). `input` reads an element of `x` in
/// `acc`.
static Moments rowMoments(
    ImplicitLocOpBuilder &b, Value x, ArrayRef<int64_t> dims, Type acc,
    Value count,
    llvm::function_ref<Value(ImplicitLocOpBuilder &, Value)> input) {
  Value first = firstOfRows(b, x, dims);
  SmallVector<Value> inputs = {x};
  if (first)
    inputs.push_back(first);
  Value sum = sumOver(b, inputs, dims, /*keepDims=*/true, acc,
                      [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
                        Value v = input(nb, elements[0]);
                        return first ? sub(nb, v, input(nb, elements[1])) : v;
                      });
  inputs[0] = sum;
  Value mean = buildElementwise(
      b, inputs, acc, [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        Value shift = arith::DivFOp::create(nb, elements[0], count);
        return first ? add(nb, input(nb, elements[1]), shift) : shift;
      });
  Value squares = sumOver(b, {x, mean}, dims, /*keepDims=*/true, acc,
                          [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
                            Value d = sub(nb, input(nb, elements[0]),
                                          elements[1]);
                            return mul(nb, d, d);
                          });
  // Torch's Welford mean is NaN for a row holding an infinity (inf - inf
  // in its updates), as is the sum of squares here.
  Value reported = buildElementwise(
      b, {mean, squares}, acc,
      [](ImplicitLocOpBuilder &nb, ValueRange elements) -> Value {
        Value nan = arith::CmpFOp::create(nb, arith::CmpFPredicate::UNO,
                                          elements[1], elements[1]);
        return arith::SelectOp::create(nb, nan, elements[1], elements[0]);
      });
  return {reported, squares};
}

//===----------------------------------------------------------------------===//
// sum, mean, amax, var_mean
//===----------------------------------------------------------------------===//

/// The reduced dims of an op with a `dim` list attribute.
static std::optional<SmallVector<int64_t>> reducedDims(Operation *op) {
  auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dim");
  std::optional<ArrayRef<int64_t>> list;
  if (dims)
    list = dims.asArrayRef();
  return normalizeDims(list, rankOf(op->getOperand(0)));
}

static std::optional<JitOpKind> checkReduction(Operation *op,
                                               bool floatOnly) {
  Type result = resultType(op);
  if (result.isInteger(1) || (floatOnly && !isa<FloatType>(result)))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> dims = reducedDims(op);
  if (!dims)
    return std::nullopt;
  return reductionKind(rankOf(op->getOperand(0)), *dims);
}

static std::optional<JitOpKind> checkSum(Operation *op) {
  return checkReduction(op, /*floatOnly=*/false);
}

static std::optional<JitOpKind> checkFloatReduction(Operation *op) {
  return checkReduction(op, /*floatOnly=*/true);
}

/// amax compares signed: floats and signed integers.
static std::optional<JitOpKind> checkAmax(Operation *op) {
  Type result = resultType(op);
  if (!isa<FloatType>(result) && !result.isSignedInteger())
    return std::nullopt;
  return checkReduction(op, /*floatOnly=*/false);
}

static bool keepDim(Operation *op) {
  return op->getAttrOfType<BoolAttr>("keepdim").getValue();
}

/// Reduces `op`'s input, each element cast to the result type, with
/// `reduce` (sumOver or maxOver), in the result's compute type.
template <typename ReduceFn>
static Value reduceInput(ImplicitLocOpBuilder &b, Operation *op, Value input,
                         ReduceFn reduce) {
  Type from = torchElementType(op->getOperand(0)), to = resultType(op);
  return reduce(b, input, *reducedDims(op), keepDim(op), computeType(to),
                [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
                  return toCompute(nb, elements[0], from, to);
                });
}

static SmallVector<Value> lowerSum(ImplicitLocOpBuilder &b, Operation *op,
                                   ValueRange operands) {
  Type to = resultType(op);
  Value sum = reduceInput(b, op, operands[0], sumOver);
  return {convertTensor(b, sum, computeType(to), to)};
}

static SmallVector<Value> lowerMean(ImplicitLocOpBuilder &b, Operation *op,
                                    ValueRange operands) {
  Type to = resultType(op);
  Value sum = reduceInput(b, op, operands[0], sumOver);
  Value count = countAlong(b, operands[0], *reducedDims(op), computeType(to));
  return {divideBy(b, sum, count, to)};
}

static SmallVector<Value> lowerAmax(ImplicitLocOpBuilder &b, Operation *op,
                                    ValueRange operands) {
  Type to = resultType(op);
  // amax's result is seen: NaN must propagate.
  auto propagatingMax = [](ImplicitLocOpBuilder &nb, ValueRange inputs,
                           ArrayRef<int64_t> dims, bool keepDims, Type accType,
                           ElementFn map) {
    return maxOver(nb, inputs, dims, keepDims, accType, map,
                   /*ignoreNaN=*/false);
  };
  Value max = reduceInput(b, op, operands[0], propagatingMax);
  return {convertTensor(b, max, computeType(to), to)};
}

static SmallVector<Value> lowerVarMean(ImplicitLocOpBuilder &b, Operation *op,
                                       ValueRange operands) {
  Value x = operands[0];
  Type from = torchElementType(op->getOperand(0));
  Type varType = resultType(op, 0), meanType = resultType(op, 1);
  Type acc = computeType(varType);
  SmallVector<int64_t> dims = *reducedDims(op);
  Value count = countAlong(b, x, dims, acc);
  auto [mean, squares] =
      rowMoments(b, x, dims, acc, count,
                 [&](ImplicitLocOpBuilder &nb, Value element) {
                   return toCompute(nb, element, from, varType);
                 });
  if (!keepDim(op)) {
    mean = dropReducedDims(b, mean, dims);
    squares = dropReducedDims(b, squares, dims);
  }
  // Bessel's correction unless told otherwise.
  double dof = 1;
  if (auto integer = op->getAttrOfType<IntegerAttr>("correction"))
    dof = static_cast<double>(integer.getInt());
  else if (auto real = op->getAttrOfType<FloatAttr>("correction"))
    dof = real.getValueAsDouble();
  Value divisor = maximum(b, sub(b, count, constant(b, acc, dof)),
                          constant(b, acc, 0.0));
  Value var = divideBy(b, squares, divisor, varType);
  return {var, convertTensor(b, mean, acc, meanType)};
}

static std::optional<JitOpKind> checkVarMean(Operation *op) {
  Attribute correction = op->getAttr("correction");
  if (correction && !isa<IntegerAttr, FloatAttr>(correction))
    return std::nullopt;
  return checkFloatReduction(op);
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax and their gradients
//===----------------------------------------------------------------------===//

/// Softmax-like ops over `dim`, which must be the last dim.
static std::optional<JitOpKind> checkSoftmax(Operation *op) {
  if (!isa<FloatType>(resultType(op)))
    return std::nullopt;
  int64_t rank = rankOf(op->getOperand(0));
  int64_t dim = op->getAttrOfType<IntegerAttr>("dim").getInt();
  if (rank == 0 || (dim != -1 && dim != rank - 1))
    return std::nullopt;
  return reductionKind(rank, lastDim(rank));
}

/// exp(x - max) / sum, or with `log`, x - max - log(sum). Softmax computes
/// exp(x - max) once, for the sum and the result (fxmlir-fuse-elementwise
/// keeps such an expensive producer of two users materialized).
template <bool log>
static SmallVector<Value> lowerSoftmax(ImplicitLocOpBuilder &b, Operation *op,
                                       ValueRange operands) {
  Value x = operands[0];
  Type from = torchElementType(op->getOperand(0)), to = resultType(op);
  Type acc = computeType(to);
  SmallVector<int64_t> dims = lastDim(rankOf(x));
  auto input = [&](ImplicitLocOpBuilder &nb, Value element) {
    return toCompute(nb, element, from, to);
  };
  // A NaN in the row makes exp(x - max) and the sum NaN anyway: the max
  // may ignore it.
  Value max = maxOver(
      b, x, dims, /*keepDims=*/true, acc,
      [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        return input(nb, elements[0]);
      },
      /*ignoreNaN=*/true);
  Value exp = buildElementwise(
      b, {x, max}, acc, [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        Value shifted = sub(nb, input(nb, elements[0]), elements[1]);
        return math::ExpOp::create(nb, shifted).getResult();
      });
  Value sum = sumOver(b, exp, dims, /*keepDims=*/true, acc,
                      [](ImplicitLocOpBuilder &, ValueRange elements) {
                        return elements[0];
                      });
  // Once per row: log(sum), or 1 / sum (a multiply per element is cheaper
  // than a division).
  Value scale = buildElementwise(
      b, sum, acc, [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        if (log)
          return math::LogOp::create(nb, elements[0]).getResult();
        return arith::DivFOp::create(nb, constant(nb, acc, 1.0), elements[0])
            .getResult();
      });
  SmallVector<Value> inputs = log ? SmallVector<Value>{x, max, scale}
                                  : SmallVector<Value>{exp, scale};
  Value result = buildElementwise(
      b, inputs, storageType(to),
      [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        Value y = log ? sub(nb, sub(nb, input(nb, elements[0]), elements[1]),
                            elements[2])
                      : mul(nb, elements[0], elements[1]);
        return fromCompute(nb, y, to);
      });
  return {result};
}

/// softmax: y (g - sum(g y)); log_softmax: g - exp(y) sum(g).
template <bool log>
static SmallVector<Value> lowerSoftmaxBackward(ImplicitLocOpBuilder &b,
                                               Operation *op,
                                               ValueRange operands) {
  Value grad = operands[0], output = operands[1];
  Type gradType = torchElementType(op->getOperand(0));
  Type outputType = torchElementType(op->getOperand(1));
  Type to = resultType(op);
  Type acc = computeType(to);
  SmallVector<int64_t> dims = lastDim(rankOf(grad));
  auto inputs = [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
    return std::make_pair(toCompute(nb, elements[0], gradType, to),
                          toCompute(nb, elements[1], outputType, to));
  };
  Value sum = sumOver(b, {grad, output}, dims, /*keepDims=*/true, acc,
                      [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
                        auto [g, y] = inputs(nb, elements);
                        return log ? g : mul(nb, g, y);
                      });
  Value result = buildElementwise(
      b, {grad, output, sum}, storageType(to),
      [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        auto [g, y] = inputs(nb, elements);
        Value s = elements[2];
        Value dx = log ? sub(nb, g, mul(nb, math::ExpOp::create(nb, y), s))
                       : mul(nb, y, sub(nb, g, s));
        return fromCompute(nb, dx, to);
      });
  return {result};
}

//===----------------------------------------------------------------------===//
// native_layer_norm and its backward
//===----------------------------------------------------------------------===//

/// Layer norm of `input` over its last dim only, on float tensors.
static bool isLastDimLayerNorm(Operation *op, Value inputValue) {
  auto shape = op->getAttrOfType<DenseI64ArrayAttr>("normalized_shape");
  auto input = cast<RankedTensorType>(inputValue.getType());
  if (!shape || shape.size() != 1 || input.getRank() == 0)
    return false;
  int64_t last = input.getDimSize(input.getRank() - 1);
  if (!ShapedType::isDynamic(last) && last != shape[0])
    return false;
  for (Value result : op->getResults())
    if (!isa<FloatType>(torchElementType(result)))
      return false;
  return true;
}

static std::optional<JitOpKind> checkLayerNorm(Operation *op) {
  if (!isLastDimLayerNorm(op, op->getOperand(0)))
    return std::nullopt;
  int64_t rank = rankOf(op->getOperand(0));
  return reductionKind(rank, lastDim(rank));
}

/// A value `weight` that may be absent (None), read as 1 or 0.
static Value optionalElement(ImplicitLocOpBuilder &b, ValueRange elements,
                             int &next, Value tensor, Type from, Type to,
                             double absent) {
  if (!tensor)
    return constant(b, computeType(to), absent);
  return toCompute(b, elements[next++], from, to);
}

static void appendIfPresent(SmallVector<Value> &inputs, Value tensor) {
  if (tensor)
    inputs.push_back(tensor);
}

static Type optionalType(Operation *op, unsigned index) {
  Value operand = op->getOperand(index);
  return isa<RankedTensorType>(operand.getType()) ? torchElementType(operand)
                                                  : Type();
}

static SmallVector<Value> lowerLayerNorm(ImplicitLocOpBuilder &b, Operation *op,
                                         ValueRange operands) {
  auto norm = cast<NativeLayerNormOp>(op);
  Value x = operands[0], weight = operands[1], bias = operands[2];
  Type from = torchElementType(norm.getInput());
  Type to = resultType(op, 0);
  Type weightType = optionalType(op, 1), biasType = optionalType(op, 2);
  Type acc = computeType(to);
  SmallVector<int64_t> dims = lastDim(rankOf(x));
  Value count = countAlong(b, x, dims, acc);
  auto input = [&](ImplicitLocOpBuilder &nb, Value element) {
    return toCompute(nb, element, from, to);
  };
  auto [mean, squares] = rowMoments(b, x, dims, acc, count, input);
  double eps = norm.getEps().convertToDouble();
  Value rstd = buildElementwise(
      b, squares, acc, [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        Value var = arith::DivFOp::create(nb, elements[0], count);
        return math::RsqrtOp::create(nb, add(nb, var, constant(nb, acc, eps)))
            .getResult();
      });
  SmallVector<Value> inputs = {x, mean, rstd};
  appendIfPresent(inputs, weight);
  appendIfPresent(inputs, bias);
  Value y = buildElementwise(
      b, inputs, storageType(to),
      [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        int next = 3;
        Value w = optionalElement(nb, elements, next, weight, weightType, to,
                                  1.0);
        Value c = optionalElement(nb, elements, next, bias, biasType, to, 0.0);
        // Torch's kernel: x rstd + (-rstd mean), then the affine map. A
        // constant row gives exactly 0; x rstd overflowing gives NaN.
        Value mean = elements[1], rstd = elements[2];
        Value shift = mul(nb, neg(nb, rstd), mean);
        Value xhat = add(nb, mul(nb, input(nb, elements[0]), rstd), shift);
        return fromCompute(nb, add(nb, mul(nb, xhat, w), c), to);
      });
  return {y, convertTensor(b, mean, acc, resultType(op, 1)),
          convertTensor(b, rstd, acc, resultType(op, 2))};
}

/// The weight and bias gradients reduce dim 0; with neither used, only the
/// input gradient's row reductions remain.
static std::optional<JitOpKind> checkLayerNormBackward(Operation *op) {
  if (!isLastDimLayerNorm(op, op->getOperand(1)))
    return std::nullopt;
  int64_t rank = rankOf(op->getOperand(1));
  if (!op->getResult(1).use_empty() || !op->getResult(2).use_empty())
    return JitOpKind::ReductionOverDim0;
  return reductionKind(rank, lastDim(rank));
}

/// A placeholder for a gradient nobody uses (its output_mask entry may be
/// false): shaped like the last dim of `x`.
static Value unusedGradient(ImplicitLocOpBuilder &b, Value x, Type torchType) {
  int64_t last = rankOf(x) - 1;
  SmallVector<OpFoldResult> sizes = {
      tensor::getMixedSize(b, b.getLoc(), x, last)};
  return tensor::EmptyOp::create(b, sizes, storageType(torchType));
}

/// dx = rstd (w g - mean(w g) - xhat mean(w g xhat)), xhat = (x - mean) rstd;
/// dw = sum over rows of g xhat; db = sum over rows of g.
static SmallVector<Value> lowerLayerNormBackward(ImplicitLocOpBuilder &b,
                                                 Operation *op,
                                                 ValueRange operands) {
  auto norm = cast<NativeLayerNormBackwardOp>(op);
  Value grad = operands[0], x = operands[1], mean = operands[2],
        rstd = operands[3], weight = operands[4];
  Type gradType = torchElementType(norm.getGradOut());
  Type xType = torchElementType(norm.getInput());
  Type meanType = torchElementType(norm.getMean());
  Type rstdType = torchElementType(norm.getRstd());
  Type weightType = optionalType(op, 5);
  Type to = resultType(op, 0);
  Type acc = computeType(to);
  int64_t rank = rankOf(x);
  SmallVector<int64_t> dims = lastDim(rank);
  Value count = countAlong(b, x, dims, acc);

  // Elements in the order {grad, x, mean, rstd[, weight]}.
  SmallVector<Value> inputs = {grad, x, mean, rstd};
  appendIfPresent(inputs, weight);
  struct Row {
    Value g, xhat, wg, rstd;
  };
  auto row = [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
    Value g = toCompute(nb, elements[0], gradType, to);
    Value xv = toCompute(nb, elements[1], xType, to);
    Value mu = toCompute(nb, elements[2], meanType, to);
    Value r = toCompute(nb, elements[3], rstdType, to);
    int next = 4;
    Value w = optionalElement(nb, elements, next, weight, weightType, to, 1.0);
    return Row{g, mul(nb, sub(nb, xv, mu), r), mul(nb, g, w), r};
  };
  Value sumWg = sumOver(b, inputs, dims, /*keepDims=*/true, acc,
                        [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
                          return row(nb, elements).wg;
                        });
  Value sumWgXhat = sumOver(b, inputs, dims, /*keepDims=*/true, acc,
                            [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
                              Row r = row(nb, elements);
                              return mul(nb, r.wg, r.xhat);
                            });
  SmallVector<Value> dxInputs = inputs;
  dxInputs.append({sumWg, sumWgXhat});
  unsigned sums = inputs.size();
  Value dx = buildElementwise(
      b, dxInputs, storageType(to),
      [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
        Row r = row(nb, elements);
        Value c1 = arith::DivFOp::create(nb, elements[sums], count);
        Value c2 = arith::DivFOp::create(nb, elements[sums + 1], count);
        Value centered = sub(nb, sub(nb, r.wg, c1), mul(nb, r.xhat, c2));
        return fromCompute(nb, mul(nb, r.rstd, centered), to);
      });

  SmallVector<Value> results = {dx};
  for (unsigned index : {1u, 2u}) {
    Type type = resultType(op, index);
    if (op->getResult(index).use_empty()) {
      results.push_back(unusedGradient(b, x, type));
      continue;
    }
    bool isWeight = index == 1;
    auto gradient = [&](ImplicitLocOpBuilder &nb, ValueRange elements) {
      Row r = row(nb, elements);
      return isWeight ? mul(nb, r.g, r.xhat) : r.g;
    };
    Value sum = sumOver(b, inputs, leadingDims(rank), /*keepDims=*/false, acc,
                        gradient);
    results.push_back(convertTensor(b, sum, acc, type));
  }
  return results;
}

RowUse fxmlir::getRowUse(OpResult result, JitOpKind kind) {
  Operation *op = result.getOwner();
  if (kind != JitOpKind::ReductionOverDim0)
    return RowUse::Keeps;
  // The input gradient keeps the rows; the weight and bias gradients sum.
  bool layerNorm = isa<NativeLayerNormBackwardOp>(op);
  if (layerNorm && result.getResultNumber() == 0)
    return RowUse::Keeps;
  bool sum = layerNorm || isa<SumDimIntListOp>(op);
  return sum && isa<Float32Type, Float64Type>(torchElementType(result))
             ? RowUse::Sums
             : RowUse::Reduces;
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void lowering::addReductionLowerings(LoweringTable &table) {
  auto add = [&](StringRef name, CheckFn check, LowerFn lower) {
    table[("fxmlir.aten." + name).str()] = {check, lower};
  };
  add("sum.dim_IntList", checkSum, lowerSum);
  add("mean.dim", checkFloatReduction, lowerMean);
  add("amax", checkAmax, lowerAmax);
  add("var_mean.correction", checkVarMean, lowerVarMean);
  add("_softmax", checkSoftmax, lowerSoftmax</*log=*/false>);
  add("_log_softmax", checkSoftmax, lowerSoftmax</*log=*/true>);
  add("_softmax_backward_data", checkSoftmax,
      lowerSoftmaxBackward</*log=*/false>);
  add("_log_softmax_backward_data", checkSoftmax,
      lowerSoftmaxBackward</*log=*/true>);
  add("native_layer_norm", checkLayerNorm, lowerLayerNorm);
  add("native_layer_norm_backward", checkLayerNormBackward,
      lowerLayerNormBackward);
}
