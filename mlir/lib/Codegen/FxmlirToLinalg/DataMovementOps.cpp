//===- DataMovementOps.cpp - slices, concatenation, transposes, copies ----===//
//
// Ops that move elements without computing them: slices and their gradient
// (slice_backward: the slice's elements in zeros), concatenation, transposes
// and contiguous copies, as in rotary embeddings and attention's head
// layouts. Inside a region every value is a whole tensor, so a copy is its
// operand and a slice an extract_slice. A concatenation is a tensor.concat,
// and slice_backward one of zeros and the gradient, which
// fxmlir-fuse-elementwise splits its elementwise readers at; a strided
// slice_backward reads the gradient at computed indices (tensor.extract at
// an index clamped in bounds, then a select). None moves elements across
// dim 0: the runtime splits a region's rows along it.
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Support/Dims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::lowering;

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// `dim` normalized for a tensor of `rank`, unless it is dim 0 or invalid.
static std::optional<int64_t> innerDim(int64_t dim, int64_t rank) {
  std::optional<int64_t> normalized = normalizeDim(dim, rank);
  if (!normalized || *normalized == 0)
    return std::nullopt;
  return normalized;
}

namespace {
/// The elements a slice takes along its dim: start, start + step, ...
struct SliceBounds {
  int64_t dim, start, length, step;
  /// The whole dim: a view of all of it, or a gradient placed as it is.
  bool isWhole(int64_t size) const {
    return start == 0 && step == 1 && length == size;
  }
};
} // namespace

/// torch's bounds of `[start:end:step]` on `dim` (size `size`): negative
/// ends count from the end, both are clamped to the dim. A dynamic size
/// takes only `[0:]` (`[:]`, the whole dim: length `size`, dynamic too, as
/// AOTAutograd's gradients of a varying length's full slice). Nothing for
/// dim 0, another slice of a dynamic size or a step below 1.
static std::optional<SliceBounds> sliceBounds(int64_t dim, int64_t rank,
                                              int64_t size, int64_t start,
                                              int64_t end, int64_t step) {
  std::optional<int64_t> d = innerDim(dim, rank);
  if (d && ShapedType::isDynamic(size) && start == 0 && end == INT64_MAX &&
      step == 1)
    return SliceBounds{*d, 0, size, 1};
  if (!d || ShapedType::isDynamic(size) || step < 1)
    return std::nullopt;
  auto wrap = [&](int64_t index) {
    if (index < 0)
      index += size;
    return std::clamp<int64_t>(index, 0, size);
  };
  start = wrap(start);
  end = std::max(wrap(end), start);
  return SliceBounds{*d, start, (end - start + step - 1) / step, step};
}

/// The lowered sizes of `value` with dim `dim` set to `size`.
static SmallVector<OpFoldResult> sizesWith(ImplicitLocOpBuilder &b,
                                           Value value, int64_t dim,
                                           int64_t size) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, b.getLoc(), value);
  sizes[dim] = b.getIndexAttr(size);
  return sizes;
}

/// A tensor of `sizes` whose element at each index is `body(index)`.
static Value generate(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes,
                      Type elementType,
                      function_ref<Value(ImplicitLocOpBuilder &, ValueRange)>
                          body) {
  int64_t rank = sizes.size();
  Value init = tensor::EmptyOp::create(b, sizes, elementType);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank)}, iterators,
      [&](OpBuilder &nested, Location loc, ValueRange) {
        ImplicitLocOpBuilder nb(loc, nested);
        SmallVector<Value> index;
        for (int64_t d = 0; d < rank; ++d)
          index.push_back(linalg::IndexOp::create(nb, d));
        linalg::YieldOp::create(nb, body(nb, index));
      });
  return generic.getResult(0);
}

/// `source[index]` with `index[dim]` replaced by `position` clamped to
/// [0, size): a read that stays in bounds whatever the position.
static Value readClamped(ImplicitLocOpBuilder &b, Value source,
                         ValueRange index, int64_t dim, Value position,
                         int64_t size) {
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value last = arith::ConstantIndexOp::create(b, size - 1);
  Value clamped = arith::MinSIOp::create(
      b, arith::MaxSIOp::create(b, position, zero), last);
  SmallVector<Value> at(index);
  at[dim] = clamped;
  return tensor::ExtractOp::create(b, source, at);
}

//===----------------------------------------------------------------------===//
// slice.Tensor
//===----------------------------------------------------------------------===//

static std::optional<SliceBounds> boundsOf(SliceTensorOp slice) {
  RankedTensorType type = tensorType(slice.getSelf());
  std::optional<int64_t> d = normalizeDim(slice.getDim(),
                                                    type.getRank());
  if (!d)
    return std::nullopt;
  return sliceBounds(*d, type.getRank(), type.getDimSize(*d),
                     slice.getStart().value_or(0),
                     slice.getEnd().value_or(INT64_MAX), slice.getStep());
}

/// Free in eager (a view) and inside a region (read in place).
static std::optional<JitOpKind> checkSlice(Operation *op) {
  auto slice = cast<SliceTensorOp>(op);
  std::optional<SliceBounds> bounds = boundsOf(slice);
  if (!bounds || bounds->length == 0 ||
      tensorType(slice.getResult()).getDimSize(bounds->dim) != bounds->length)
    return std::nullopt;
  return JitOpKind::Identity;
}

static SmallVector<Value> lowerSlice(ImplicitLocOpBuilder &b, Operation *op,
                                     ValueRange operands) {
  auto slice = cast<SliceTensorOp>(op);
  SliceBounds bounds = *boundsOf(slice);
  Value source = operands[0];
  if (bounds.isWhole(tensorType(slice.getSelf()).getDimSize(bounds.dim)))
    return {source};
  int64_t rank = tensorType(source).getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  offsets[bounds.dim] = b.getIndexAttr(bounds.start);
  strides[bounds.dim] = b.getIndexAttr(bounds.step);
  return {tensor::ExtractSliceOp::create(
      b, source, offsets, sizesWith(b, source, bounds.dim, bounds.length),
      strides)};
}

//===----------------------------------------------------------------------===//
// slice_backward (an fxmlir.call: AOTAutograd's gradient of a slice)
//===----------------------------------------------------------------------===//

/// `aten::slice_backward(grad, input_sizes, dim, start, end, step)`: the
/// bounds of the slice in a tensor of the result's shape.
static std::optional<SliceBounds> sliceBackwardBounds(Operation *op) {
  auto call = cast<CallOp>(op);
  ArrayRef<Attribute> args = call.getArgs().getValue();
  if (args.size() != 6 || !call.getKwargs().empty() ||
      !isa<OperandRefAttr>(args[0]) || call.getNumOperands() != 1)
    return std::nullopt;
  SmallVector<int64_t> ints;
  for (Attribute arg : args.drop_front(2)) {
    auto integer = dyn_cast<IntegerAttr>(arg);
    if (!integer)
      return std::nullopt;
    ints.push_back(integer.getInt());
  }
  RankedTensorType result = tensorType(op->getResult(0));
  std::optional<int64_t> d = normalizeDim(ints[0], result.getRank());
  if (!d)
    return std::nullopt;
  return sliceBounds(*d, result.getRank(), result.getDimSize(*d), ints[1],
                     ints[2], ints[3]);
}

static std::optional<JitOpKind> checkSliceBackward(Operation *op) {
  std::optional<SliceBounds> bounds = sliceBackwardBounds(op);
  RankedTensorType grad = tensorType(op->getOperand(0));
  RankedTensorType result = tensorType(op->getResult(0));
  if (!bounds || bounds->length == 0 ||
      grad.getElementType() != result.getElementType() ||
      grad.getRank() != result.getRank() ||
      grad.getDimSize(bounds->dim) != bounds->length)
    return std::nullopt;
  return JitOpKind::Elementwise;
}

static SmallVector<Value> lowerSliceBackward(ImplicitLocOpBuilder &b,
                                             Operation *op,
                                             ValueRange operands) {
  SliceBounds bounds = *sliceBackwardBounds(op);
  Value grad = operands[0];
  int64_t size = tensorType(op->getResult(0)).getDimSize(bounds.dim);
  if (bounds.isWhole(size))
    return {grad};
  Type element = tensorType(grad).getElementType();
  int64_t after = size - bounds.start - bounds.length;
  if (bounds.step == 1) {
    // Zeros before and after the gradient: a concatenation, which the
    // elementwise ops reading it are split at.
    Value zero = arith::ConstantOp::create(b, b.getZeroAttr(element));
    auto zeros = [&](int64_t length) {
      Value empty = tensor::EmptyOp::create(
          b, sizesWith(b, grad, bounds.dim, length), element);
      return linalg::FillOp::create(b, zero, empty).getResult(0);
    };
    SmallVector<Value> pieces;
    if (bounds.start > 0)
      pieces.push_back(zeros(bounds.start));
    pieces.push_back(grad);
    if (after > 0)
      pieces.push_back(zeros(after));
    return {tensor::ConcatOp::create(b, bounds.dim, pieces)};
  }
  return {generate(
      b, sizesWith(b, grad, bounds.dim, size), element,
      [&](ImplicitLocOpBuilder &nb, ValueRange index) {
        // index = start + step * position holds for a position in the slice.
        Value offset = arith::SubIOp::create(
            nb, index[bounds.dim],
            arith::ConstantIndexOp::create(nb, bounds.start));
        Value step = arith::ConstantIndexOp::create(nb, bounds.step);
        Value position = arith::DivSIOp::create(nb, offset, step);
        Value zero = arith::ConstantIndexOp::create(nb, 0);
        Value afterStart =
            arith::CmpIOp::create(nb, arith::CmpIPredicate::sge, offset, zero);
        Value beforeEnd = arith::CmpIOp::create(
            nb, arith::CmpIPredicate::slt, position,
            arith::ConstantIndexOp::create(nb, bounds.length));
        Value inside = arith::AndIOp::create(nb, afterStart, beforeEnd);
        if (bounds.step > 1)
          inside = arith::AndIOp::create(
              nb, inside,
              arith::CmpIOp::create(nb, arith::CmpIPredicate::eq,
                                    arith::RemSIOp::create(nb, offset, step),
                                    zero));
        Value read = readClamped(nb, grad, index, bounds.dim, position,
                                 bounds.length);
        Value none = arith::ConstantOp::create(nb, nb.getZeroAttr(element));
        return arith::SelectOp::create(nb, inside, read, none).getResult();
      })};
}

//===----------------------------------------------------------------------===//
// cat
//===----------------------------------------------------------------------===//

/// torch's legacy empty piece: a 1-d tensor of size 0, which cat skips
/// whatever the other pieces' rank (an empty cache concatenated with keys).
static bool isSkippedPiece(Value piece) {
  ArrayRef<int64_t> shape = tensorType(piece).getShape();
  return shape.size() == 1 && shape[0] == 0;
}

/// Pieces of the result's rank and element type, concatenated along a dim
/// other than 0 where each has a static, non-zero size; legacy empty pieces
/// aside.
static std::optional<JitOpKind> checkCat(Operation *op) {
  auto cat = cast<CatOp>(op);
  RankedTensorType result = tensorType(cat.getResult());
  std::optional<int64_t> d = innerDim(cat.getDim(), result.getRank());
  if (!d)
    return std::nullopt;
  bool anyPiece = false;
  for (Value piece : cat.getTensors()) {
    if (isSkippedPiece(piece))
      continue;
    RankedTensorType type = tensorType(piece);
    if (type.getRank() != result.getRank() ||
        type.getElementType() != result.getElementType() ||
        ShapedType::isDynamic(type.getDimSize(*d)) || type.getDimSize(*d) == 0)
      return std::nullopt;
    anyPiece = true;
  }
  if (!anyPiece)
    return std::nullopt;
  return JitOpKind::Elementwise;
}

static SmallVector<Value> lowerCat(ImplicitLocOpBuilder &b, Operation *op,
                                   ValueRange operands) {
  auto cat = cast<CatOp>(op);
  int64_t rank = tensorType(cat.getResult()).getRank();
  int64_t dim = *innerDim(cat.getDim(), rank);
  SmallVector<Value> pieces;
  for (auto [piece, lowered] : llvm::zip(cat.getTensors(), operands))
    if (!isSkippedPiece(piece))
      pieces.push_back(lowered);
  if (pieces.size() == 1)
    return {pieces.front()};
  return {tensor::ConcatOp::create(b, dim, pieces)};
}

//===----------------------------------------------------------------------===//
// transpose.int, permute
//===----------------------------------------------------------------------===//

/// The permutation `op` applies (result dim i is operand dim perm[i]), if
/// it keeps dim 0 in place.
static std::optional<SmallVector<int64_t>> permutationOf(Operation *op) {
  int64_t rank = tensorType(op->getOperand(0)).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (auto transpose = dyn_cast<TransposeIntOp>(op)) {
    std::optional<int64_t> a = normalizeDim(transpose.getDim0(), rank);
    std::optional<int64_t> c = normalizeDim(transpose.getDim1(), rank);
    if (!a || !c)
      return std::nullopt;
    std::swap(perm[*a], perm[*c]);
  } else {
    ArrayRef<int64_t> dims = cast<PermuteOp>(op).getDims();
    if (static_cast<int64_t>(dims.size()) != rank)
      return std::nullopt;
    for (auto [i, dim] : llvm::enumerate(dims)) {
      std::optional<int64_t> d = normalizeDim(dim, rank);
      if (!d)
        return std::nullopt;
      perm[i] = *d;
    }
    if (!isPermutationVector(perm))
      return std::nullopt;
  }
  if (rank > 0 && perm[0] != 0)
    return std::nullopt;
  return perm;
}

/// A view in eager; inside a region a read at permuted indices, which
/// elementwise fusion folds into the consumer.
static std::optional<JitOpKind> checkPermutation(Operation *op) {
  if (!permutationOf(op))
    return std::nullopt;
  return JitOpKind::Identity;
}

static SmallVector<Value> lowerPermutation(ImplicitLocOpBuilder &b,
                                           Operation *op,
                                           ValueRange operands) {
  SmallVector<int64_t> perm = *permutationOf(op);
  Value source = operands[0];
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return {source};
  SmallVector<OpFoldResult> sourceSizes =
      tensor::getMixedSizes(b, b.getLoc(), source);
  SmallVector<OpFoldResult> sizes;
  for (int64_t d : perm)
    sizes.push_back(sourceSizes[d]);
  int64_t rank = perm.size();
  // Operand dim perm[i] is read at loop dim i.
  SmallVector<AffineExpr> reads(rank);
  for (int64_t i = 0; i < rank; ++i)
    reads[perm[i]] = b.getAffineDimExpr(i);
  Type element = tensorType(source).getElementType();
  Value init = tensor::EmptyOp::create(b, sizes, element);
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank, 0, reads, b.getContext()),
      b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, ValueRange{source}, ValueRange{init}, maps,
      iterators, [](OpBuilder &nested, Location loc, ValueRange args) {
        linalg::YieldOp::create(nested, loc, args.front());
      });
  return {generic.getResult(0)};
}

//===----------------------------------------------------------------------===//
// clone
//===----------------------------------------------------------------------===//

/// A copy in eager; inside a region the value itself (regions write their
/// results contiguously and the exporter restores any other layout).
static std::optional<JitOpKind> checkClone(Operation *op) {
  std::optional<StringRef> format = cast<CloneOp>(op).getMemoryFormat();
  if (format && *format != "contiguous_format" && *format != "preserve_format")
    return std::nullopt;
  return JitOpKind::Elementwise;
}

static SmallVector<Value> lowerClone(ImplicitLocOpBuilder &, Operation *,
                                     ValueRange operands) {
  return {operands[0]};
}

void lowering::addDataMovementLowerings(LoweringTable &table) {
  table["fxmlir.aten.slice.Tensor"] = {checkSlice, lowerSlice};
  table["fxmlir.call:aten::slice_backward.default"] = {checkSliceBackward,
                                                       lowerSliceBackward};
  table["fxmlir.aten.cat"] = {checkCat, lowerCat};
  table["fxmlir.aten.transpose.int"] = {checkPermutation, lowerPermutation};
  table["fxmlir.aten.permute"] = {checkPermutation, lowerPermutation};
  table["fxmlir.aten.clone"] = {checkClone, lowerClone};
}
