//===- LinalgBuilders.cpp - torch broadcasting and reductions -------------===//

#include "LinalgBuilders.h"

#include "ScalarMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::lowering;

static int64_t maxRank(ValueRange inputs) {
  int64_t rank = 0;
  for (Value input : inputs)
    rank = std::max(rank, cast<RankedTensorType>(input.getType()).getRank());
  return rank;
}

SmallVector<OpFoldResult> lowering::broadcastSizes(ImplicitLocOpBuilder &b,
                                                   ValueRange inputs) {
  int64_t rank = maxRank(inputs);
  SmallVector<OpFoldResult> sizes;
  for (int64_t dim = 0; dim < rank; ++dim) {
    std::optional<int64_t> staticSize;
    Value dynamicSource;
    int64_t dynamicDim = 0;
    for (Value input : inputs) {
      auto type = cast<RankedTensorType>(input.getType());
      int64_t d = dim - (rank - type.getRank());
      if (d < 0)
        continue;
      int64_t size = type.getDimSize(d);
      if (ShapedType::isDynamic(size)) {
        if (!dynamicSource) {
          dynamicSource = input;
          dynamicDim = d;
        }
      } else if (size != 1) {
        staticSize = size;
      }
    }
    if (staticSize)
      sizes.push_back(b.getIndexAttr(*staticSize));
    else if (dynamicSource)
      sizes.push_back(
          tensor::DimOp::create(b, dynamicSource, dynamicDim).getResult());
    else
      sizes.push_back(b.getIndexAttr(1));
  }
  return sizes;
}

/// Reads `input` at each point of the broadcast space of `sizes`: its dims
/// align with the trailing ones, and its size-1 dims read index 0.
static AffineMap broadcastMap(Value input, ArrayRef<OpFoldResult> sizes) {
  auto type = cast<RankedTensorType>(input.getType());
  MLIRContext *ctx = input.getContext();
  int64_t rank = sizes.size(), offset = rank - type.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::optional<int64_t> full = getConstantIntValue(sizes[d + offset]);
    bool stretched = type.getDimSize(d) == 1 && full != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                              : getAffineDimExpr(d + offset, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value lowering::buildElementwise(ImplicitLocOpBuilder &b, ValueRange inputs,
                                 Type elementType, ElementFn body) {
  SmallVector<OpFoldResult> sizes = broadcastSizes(b, inputs);
  int64_t rank = sizes.size();
  Value init = tensor::EmptyOp::create(b, sizes, elementType);
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(input, sizes));
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        ImplicitLocOpBuilder nb(loc, nested);
        linalg::YieldOp::create(nb, body(nb, args.drop_back()));
      });
  return generic.getResult(0);
}

Value lowering::buildReduction(ImplicitLocOpBuilder &b, ValueRange inputs,
                               ArrayRef<int64_t> dims, bool keepDims,
                               Value init, ElementFn map, CombineFn combine) {
  SmallVector<OpFoldResult> sizes = broadcastSizes(b, inputs);
  int64_t rank = sizes.size();
  SmallVector<OpFoldResult> kept;
  SmallVector<AffineExpr> outputExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(dims, d)) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    kept.push_back(sizes[d]);
    outputExprs.push_back(b.getAffineDimExpr(d));
  }
  Value empty = tensor::EmptyOp::create(b, kept, init.getType());
  Value filled = linalg::FillOp::create(b, init, empty).getResult(0);
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(input, sizes));
  maps.push_back(AffineMap::get(rank, 0, outputExprs, b.getContext()));
  auto generic = linalg::GenericOp::create(
      b, TypeRange{filled.getType()}, inputs, ValueRange{filled}, maps,
      iterators, [&](OpBuilder &nested, Location loc, ValueRange args) {
        ImplicitLocOpBuilder nb(loc, nested);
        Value element = map(nb, args.drop_back());
        linalg::YieldOp::create(nb, combine(nb, element, args.back()));
      });
  Value result = generic.getResult(0);
  return keepDims ? keepReducedDims(b, result, dims, rank) : result;
}

SmallVector<ReassociationIndices>
lowering::groupDims(int64_t rank, llvm::function_ref<bool(int64_t)> dropped) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  for (int64_t d = 0; d < rank; ++d) {
    if (!dropped(d))
      groups.push_back({d});
    else if (groups.empty())
      leading.push_back(d);
    else
      groups.back().push_back(d);
  }
  if (!groups.empty())
    groups.front().insert(groups.front().begin(), leading.begin(),
                          leading.end());
  return groups;
}

/// The reassociation between a rank-`rank` space with `dims` of size 1 and
/// the same space without them.
static SmallVector<ReassociationIndices>
reducedDimGroups(ArrayRef<int64_t> dims, int64_t rank) {
  return lowering::groupDims(
      rank, [&](int64_t d) { return llvm::is_contained(dims, d); });
}

Value lowering::keepReducedDims(ImplicitLocOpBuilder &b, Value reduced,
                                ArrayRef<int64_t> dims, int64_t rank) {
  auto reducedType = cast<RankedTensorType>(reduced.getType());
  SmallVector<int64_t> shape;
  for (int64_t d = 0, kept = 0; d < rank; ++d)
    shape.push_back(llvm::is_contained(dims, d)
                        ? 1
                        : reducedType.getDimSize(kept++));
  auto type = RankedTensorType::get(shape, reducedType.getElementType());
  return tensor::ExpandShapeOp::create(b, type, reduced,
                                       reducedDimGroups(dims, rank));
}

Value lowering::dropReducedDims(ImplicitLocOpBuilder &b, Value kept,
                                ArrayRef<int64_t> dims) {
  int64_t rank = cast<RankedTensorType>(kept.getType()).getRank();
  return tensor::CollapseShapeOp::create(b, kept,
                                         reducedDimGroups(dims, rank));
}

Value lowering::countAlong(ImplicitLocOpBuilder &b, Value tensor,
                           ArrayRef<int64_t> dims, Type type) {
  auto tensorType = cast<RankedTensorType>(tensor.getType());
  int64_t staticCount = 1;
  Value dynamicCount;
  for (int64_t d : dims) {
    int64_t size = tensorType.getDimSize(d);
    if (!ShapedType::isDynamic(size)) {
      staticCount *= size;
      continue;
    }
    Value dim = tensor::DimOp::create(b, tensor, d);
    dynamicCount =
        dynamicCount ? arith::MulIOp::create(b, dynamicCount, dim) : dim;
  }
  Value count = constant(b, type, static_cast<double>(staticCount));
  if (!dynamicCount)
    return count;
  Value asInt = arith::IndexCastOp::create(b, b.getI64Type(), dynamicCount);
  return mul(b, count, arith::SIToFPOp::create(b, type, asInt));
}
