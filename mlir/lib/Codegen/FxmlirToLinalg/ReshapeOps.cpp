//===- ReshapeOps.cpp - views that add or drop size-1 dims ----------------===//
//
// view, _unsafe_view, unsqueeze and squeeze when they only add or remove
// dims of size 1 (keepdim sums viewed as bias gradients, [N, 1] statistics):
// a collapse_shape to the other dims and an expand_shape to the result.
// Which dims are unit dims comes from the types the graph recorded; sizes
// come from the lowered operand.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "OpLowerings.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::lowering;

static bool isUnit(int64_t size) { return size == 1; }

/// The sizes of the dims that are not a static 1, in order.
static SmallVector<int64_t> coreSizes(ArrayRef<int64_t> shape) {
  return llvm::to_vector(llvm::make_filter_range(
      shape, [](int64_t size) { return !isUnit(size); }));
}

/// Groups each unit dim of `shape` with the core dim before it (leading unit
/// dims with the first core dim): one group per core dim, none when all
/// dims are unit dims.
static SmallVector<ReassociationIndices>
unitDimGroups(ArrayRef<int64_t> shape) {
  return lowering::groupDims(shape.size(),
                             [&](int64_t d) { return isUnit(shape[d]); });
}

/// Whether two lists of core sizes name the same dims. A dynamic size
/// matches any other: a region's function is re-specialized with dynamic
/// batch dims while the types recorded inside keep the traced sizes (torch
/// specializes sizes 0 and 1, so a dynamic dim is never a unit dim).
static bool sameCoreSizes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return a.size() == b.size() &&
         llvm::all_of(llvm::zip(a, b), [](auto sizes) {
           auto [x, y] = sizes;
           return x == y || ShapedType::isDynamic(x) || ShapedType::isDynamic(y);
         });
}

static std::optional<JitOpKind> checkUnitDimReshape(Operation *op) {
  auto input = cast<RankedTensorType>(op->getOperand(0).getType());
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  if (input.getElementType() != result.getElementType() ||
      !sameCoreSizes(coreSizes(input.getShape()), coreSizes(result.getShape())))
    return std::nullopt;
  return JitOpKind::Identity;
}

static SmallVector<Value> lowerUnitDimReshape(ImplicitLocOpBuilder &b,
                                              Operation *op,
                                              ValueRange operands) {
  ArrayRef<int64_t> from =
      cast<RankedTensorType>(op->getOperand(0).getType()).getShape();
  ArrayRef<int64_t> to =
      cast<RankedTensorType>(op->getResult(0).getType()).getShape();
  Value value = operands[0];
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> core;
  for (auto [d, size] : llvm::enumerate(from))
    if (!isUnit(size))
      core.push_back(type.getDimSize(d));

  SmallVector<ReassociationIndices> collapse = unitDimGroups(from);
  if (collapse.size() != from.size()) {
    auto collapsed = RankedTensorType::get(core, type.getElementType());
    value = tensor::CollapseShapeOp::create(b, collapsed, value, collapse);
  }
  SmallVector<ReassociationIndices> expand = unitDimGroups(to);
  if (expand.size() == to.size())
    return {value};
  SmallVector<int64_t> shape;
  auto nextCore = core.begin();
  for (int64_t size : to)
    shape.push_back(isUnit(size) ? 1 : *nextCore++);
  auto expanded = RankedTensorType::get(shape, type.getElementType());
  return {tensor::ExpandShapeOp::create(b, expanded, value, expand)};
}

void lowering::addReshapeLowerings(LoweringTable &table) {
  for (StringRef name :
       {"view", "_unsafe_view", "unsqueeze", "squeeze.dim", "squeeze.dims"})
    table[("fxmlir.aten." + name).str()] = {checkUnitDimReshape,
                                            lowerUnitDimReshape};
}
