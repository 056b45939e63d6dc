//===- SplitAtConcat.cpp - elementwise ops computed per concatenated piece ===//
//
// A concatenation lowered as element reads at computed indices (a gather and
// a select per element) defeats vectorization and costs LLVM much compile
// time; rotary embeddings' rotate_half is one in every attention layer. Here
// an elementwise linalg.generic reading a tensor.concat is computed once per
// piece instead, on slices of its other operands, and its results are
// concatenated: the concatenation moves towards the function's results,
// where it becomes writes into slices of the output. Slices of elementwise
// producers are computed as generics on slices of their operands, so that
// they fuse like any other producer.
//
//===----------------------------------------------------------------------===//

#include "SplitAtConcat.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace fxmlir;

bool fxmlir::isPointwise(linalg::GenericOp op) {
  return op.getNumLoops() == op.getNumParallelLoops() &&
         !op.hasIndexSemantics() &&
         llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
           return llvm::all_of(map.getResults(), [](AffineExpr e) {
             return isa<AffineDimExpr, AffineConstantExpr>(e);
           });
         });
}

namespace {
/// The part of a loop dim a computation covers: [offset, offset + size).
struct LoopRange {
  OpFoldResult offset, size;
};
using LoopRanges = SmallVector<std::optional<LoopRange>>;
} // namespace

/// The piece of `value` covering exactly [offset, offset + size) of its dim
/// `dim`, when `value` is a concatenation along `dim` with such a piece.
static Value concatPiece(Value value, int64_t dim, int64_t offset,
                         int64_t size) {
  auto concat = value.getDefiningOp<tensor::ConcatOp>();
  if (!concat || static_cast<int64_t>(concat.getDim()) != dim)
    return {};
  int64_t start = 0;
  for (Value piece : concat.getInputs()) {
    int64_t length = cast<RankedTensorType>(piece.getType()).getDimSize(dim);
    if (start == offset && length == size)
      return piece;
    start += length;
  }
  return {};
}

/// The part of `operand`, read through `map`, that the loop ranges cover.
static Value sliceOperand(PatternRewriter &rewriter, Location loc,
                          Value operand, AffineMap map,
                          const LoopRanges &ranges) {
  SmallVector<OpFoldResult> offsets, sizes =
      tensor::getMixedSizes(rewriter, loc, operand);
  std::optional<int64_t> onlyDim;
  int64_t slicedDims = 0;
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    offsets.push_back(rewriter.getIndexAttr(0));
    auto loop = dyn_cast<AffineDimExpr>(expr);
    if (!loop || !ranges[loop.getPosition()])
      continue;
    offsets[dim] = ranges[loop.getPosition()]->offset;
    sizes[dim] = ranges[loop.getPosition()]->size;
    onlyDim = dim;
    ++slicedDims;
  }
  if (slicedDims == 0)
    return operand;
  std::optional<int64_t> offset = getConstantIntValue(offsets[*onlyDim]);
  std::optional<int64_t> size = getConstantIntValue(sizes[*onlyDim]);
  if (slicedDims == 1 && offset && size)
    if (Value piece = concatPiece(operand, *onlyDim, *offset, *size))
      return piece;
  SmallVector<OpFoldResult> strides(offsets.size(), rewriter.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(rewriter, loc, operand, offsets, sizes,
                                        strides);
}

/// `op` computed over the loop ranges only: a clone of its body on slices
/// of its operands.
static linalg::GenericOp computePart(PatternRewriter &rewriter,
                                     linalg::GenericOp op,
                                     const LoopRanges &ranges) {
  Location loc = op.getLoc();
  SmallVector<Value> inputs, inits;
  for (OpOperand *input : op.getDpsInputOperands())
    inputs.push_back(sliceOperand(rewriter, loc, input->get(),
                                  op.getMatchingIndexingMap(input), ranges));
  for (OpOperand &init : op.getDpsInitsMutable())
    inits.push_back(sliceOperand(rewriter, loc, init.get(),
                                 op.getMatchingIndexingMap(&init), ranges));
  auto part = linalg::GenericOp::create(
      rewriter, loc, ValueRange(inits).getTypes(), inputs, inits,
      op.getIndexingMapsArray(), op.getIteratorTypesArray());
  rewriter.cloneRegionBefore(op.getRegion(), part.getRegion(),
                             part.getRegion().begin());
  return part;
}

namespace {
/// generic(concat(a, b), c) -> concat(generic(a, c[:, :n]),
/// generic(b, c[:, n:])).
struct SplitConsumerOfConcat : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Beyond this many pieces the body's copies outweigh the gain.
  static constexpr size_t kMaxPieces = 8;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!isPointwise(op) || op.getNumDpsInits() == 0 ||
        !llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
          return op.getMatchingIndexingMap(&init).isPermutation();
        }))
      return failure();
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto concat = input->get().getDefiningOp<tensor::ConcatOp>();
      if (!concat || concat.getInputs().size() > kMaxPieces)
        continue;
      auto loop = dyn_cast<AffineDimExpr>(
          op.getMatchingIndexingMap(input).getResult(concat.getDim()));
      if (!loop)
        continue;
      return split(rewriter, op, concat, loop.getPosition());
    }
    return failure();
  }

  static LogicalResult split(PatternRewriter &rewriter, linalg::GenericOp op,
                             tensor::ConcatOp concat, unsigned loop) {
    SmallVector<SmallVector<Value>> parts(op.getNumResults());
    int64_t offset = 0;
    for (Value piece : concat.getInputs()) {
      int64_t size =
          cast<RankedTensorType>(piece.getType()).getDimSize(concat.getDim());
      if (ShapedType::isDynamic(size))
        return failure();
      LoopRanges ranges(op.getNumLoops());
      ranges[loop] =
          LoopRange{rewriter.getIndexAttr(offset), rewriter.getIndexAttr(size)};
      linalg::GenericOp part = computePart(rewriter, op, ranges);
      for (auto [index, result] : llvm::enumerate(part.getResults()))
        parts[index].push_back(result);
      offset += size;
    }
    SmallVector<Value> results;
    for (auto [index, pieces] : llvm::enumerate(parts)) {
      AffineMap map = op.getIndexingMapMatchingResult(op->getResult(index));
      unsigned dim = *map.getResultPosition(rewriter.getAffineDimExpr(loop));
      results.push_back(
          tensor::ConcatOp::create(rewriter, op.getLoc(), dim, pieces));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// extract_slice(generic(a, b)) -> generic(extract_slice(a),
/// extract_slice(b)) when the generic has no other use or is cheap to
/// recompute (`recompute`): a slice of a producer then fuses like the
/// producer itself.
struct SliceOfPointwise : OpRewritePattern<tensor::ExtractSliceOp> {
  SliceOfPointwise(MLIRContext *ctx,
                   std::function<bool(linalg::GenericOp)> recompute)
      : OpRewritePattern(ctx), recompute(std::move(recompute)) {}

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(slice.getSource());
    auto op = result ? dyn_cast<linalg::GenericOp>(result.getOwner())
                     : linalg::GenericOp();
    if (!op || !isPointwise(op) ||
        slice.getSourceType().getRank() != slice.getType().getRank() ||
        !llvm::all_of(slice.getMixedStrides(), [](OpFoldResult stride) {
          return isConstantIntValue(stride, 1);
        }))
      return failure();
    if (!op->hasOneUse() && !recompute(op))
      return failure();
    AffineMap map = op.getIndexingMapMatchingResult(result);
    if (!map.isPermutation())
      return failure();
    LoopRanges ranges(op.getNumLoops());
    for (auto [dim, expr] : llvm::enumerate(map.getResults()))
      ranges[cast<AffineDimExpr>(expr).getPosition()] =
          LoopRange{slice.getMixedOffsets()[dim], slice.getMixedSizes()[dim]};
    linalg::GenericOp part = computePart(rewriter, op, ranges);
    rewriter.replaceOp(slice, part->getResult(result.getResultNumber()));
    return success();
  }

  std::function<bool(linalg::GenericOp)> recompute;
};
} // namespace

void fxmlir::populateSplitAtConcatPatterns(
    RewritePatternSet &patterns,
    std::function<bool(linalg::GenericOp)> recompute) {
  patterns.add<SplitConsumerOfConcat>(patterns.getContext());
  patterns.add<SliceOfPointwise>(patterns.getContext(), std::move(recompute));
}
