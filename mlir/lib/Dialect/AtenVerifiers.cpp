//===- AtenVerifiers.cpp - shape rules of generated matmul and view ops ---===//
//
// The ops schema.HAND_VERIFIED names: each computes its result shape from its
// operands and attributes in its own way. A `?` dim matches any size.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Support/Dims.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace fxmlir;

static constexpr int64_t kDynamic = ShapedType::kDynamic;

/// Checks that `value` is a tensor of rank `rank`.
static LogicalResult verifyRank(Operation *op, Value value, StringRef name,
                                int64_t rank) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != rank)
    return op->emitOpError()
           << name << " must be " << rank << "-D, got " << type;
  return success();
}

/// Checks that two sizes can be equal (either may be dynamic).
static LogicalResult verifySameSize(Operation *op, int64_t a, int64_t b,
                                    const Twine &what) {
  if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
    return op->emitOpError() << what << " differ: " << a << " and " << b;
  return success();
}

static LogicalResult verifySameElementType(Operation *op, Value a, Value b,
                                           StringRef what) {
  if (getElementTypeOrSelf(a) != getElementTypeOrSelf(b))
    return op->emitOpError()
           << what << " have different element types: " << a.getType()
           << " and " << b.getType();
  return success();
}

/// Checks that the op's one result has `shape` (dims may be kDynamic).
static LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> shape) {
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  if (result.getRank() != int64_t(shape.size()) ||
      failed(verifyCompatibleShape(result.getShape(), shape)))
    return op->emitOpError("result type ")
           << result << " does not have the expected shape "
           << RankedTensorType::get(shape, result.getElementType());
  return success();
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// [.., n, k] x [.., k, m] -> [n, m]: the shared checks of mm and addmm.
static LogicalResult verifyMatmul(Operation *op, Value lhs, Value rhs,
                                  StringRef lhsName, StringRef rhsName,
                                  SmallVectorImpl<int64_t> &shape) {
  if (failed(verifyRank(op, lhs, lhsName, 2)) ||
      failed(verifyRank(op, rhs, rhsName, 2)) ||
      failed(verifySameElementType(op, lhs, rhs, "matrix operands")) ||
      failed(verifySameSize(op, shapeOf(lhs)[1], shapeOf(rhs)[0],
                            "inner dimensions")))
    return failure();
  shape.assign({shapeOf(lhs)[0], shapeOf(rhs)[1]});
  return success();
}

LogicalResult MmOp::verify() {
  SmallVector<int64_t> shape;
  if (failed(verifyMatmul(*this, getSelf(), getMat2(), "self", "mat2", shape)))
    return failure();
  return verifyResultShape(*this, shape);
}

LogicalResult AddmmOp::verify() {
  SmallVector<int64_t> shape;
  if (failed(verifyMatmul(*this, getMat1(), getMat2(), "mat1", "mat2", shape)))
    return failure();
  // self broadcasts to [n, m].
  ArrayRef<int64_t> self = shapeOf(getSelf());
  if (self.size() > 2)
    return emitOpError("self must be at most 2-D, got ") << getSelf().getType();
  for (auto [i, size] : llvm::enumerate(llvm::reverse(self)))
    if (size != 1 && failed(verifySameSize(*this, size, shape[1 - i],
                                           "self and product dimensions")))
      return failure();
  return verifyResultShape(*this, shape);
}

LogicalResult BmmOp::verify() {
  if (failed(verifyRank(*this, getSelf(), "self", 3)) ||
      failed(verifyRank(*this, getMat2(), "mat2", 3)) ||
      failed(verifySameElementType(*this, getSelf(), getMat2(),
                                   "batched matrices")))
    return failure();
  ArrayRef<int64_t> lhs = shapeOf(getSelf()), rhs = shapeOf(getMat2());
  if (failed(verifySameSize(*this, lhs[0], rhs[0], "batch sizes")) ||
      failed(verifySameSize(*this, lhs[2], rhs[1], "inner dimensions")))
    return failure();
  int64_t batch = ShapedType::isDynamic(lhs[0]) ? rhs[0] : lhs[0];
  return verifyResultShape(*this, {batch, lhs[1], rhs[2]});
}

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput()), weight = shapeOf(getWeight());
  if (input.empty())
    return emitOpError("input must have at least one dimension");
  if (weight.size() != 1 && weight.size() != 2)
    return emitOpError("weight must be 1-D or 2-D, got ")
           << getWeight().getType();
  if (failed(verifySameElementType(*this, getInput(), getWeight(),
                                   "input and weight")) ||
      failed(verifySameSize(*this, input.back(), weight.back(),
                            "input features and weight columns")))
    return failure();
  SmallVector<int64_t> shape(input.drop_back());
  if (weight.size() == 2) {
    shape.push_back(weight[0]);
    if (auto bias = dyn_cast<RankedTensorType>(getBias().getType());
        bias && bias.getRank() == 1 &&
        failed(verifySameSize(*this, bias.getDimSize(0), weight[0],
                              "bias size and weight rows")))
      return failure();
  }
  return verifyResultShape(*this, shape);
}

//===----------------------------------------------------------------------===//
// Views
//===----------------------------------------------------------------------===//

/// view/_unsafe_view: `size` has at most one -1, and the element counts
/// agree where both are known. A symbolic size of the graph is a dynamic
/// entry (kDynamic): the result's size in that dim, whatever it is at run
/// time.
static LogicalResult verifyViewSize(Operation *op, Value self,
                                    ArrayRef<int64_t> size) {
  if (llvm::count(size, -1) > 1)
    return op->emitOpError("size may infer only one dimension (-1)");
  if (llvm::any_of(size, [](int64_t s) { return s < -1 && s != kDynamic; }))
    return op->emitOpError("size has a negative dimension");
  SmallVector<int64_t> shape;
  for (int64_t s : size)
    shape.push_back(s == -1 ? kDynamic : s);
  auto selfType = cast<RankedTensorType>(self.getType());
  if (selfType.hasStaticShape() && !llvm::is_contained(size, -1) &&
      !llvm::is_contained(size, kDynamic)) {
    int64_t numel = selfType.getNumElements(), product = 1;
    for (int64_t s : size)
      product *= s;
    if (numel != product)
      return op->emitOpError("cannot view ")
             << numel << " elements as " << product << " elements";
  }
  return verifyResultShape(op, shape);
}

LogicalResult ViewOp::verify() {
  return verifyViewSize(*this, getSelf(), getSize());
}

LogicalResult UnderscoreUnsafeViewOp::verify() {
  return verifyViewSize(*this, getSelf(), getSize());
}

LogicalResult TOp::verify() {
  ArrayRef<int64_t> self = shapeOf(getSelf());
  if (self.size() > 2)
    return emitOpError("self must be at most 2-D, got ") << getSelf().getType();
  return verifyResultShape(*this, llvm::to_vector(llvm::reverse(self)));
}

LogicalResult TransposeIntOp::verify() {
  SmallVector<int64_t> shape(shapeOf(getSelf()));
  int64_t rank = std::max<int64_t>(shape.size(), 1);
  std::optional<int64_t> dim0 = normalizeDim(getDim0(), rank);
  std::optional<int64_t> dim1 = normalizeDim(getDim1(), rank);
  if (!dim0 || !dim1)
    return emitOpError("dims ") << getDim0() << " and " << getDim1()
                                << " are out of range for rank " << rank;
  if (!shape.empty())
    std::swap(shape[*dim0], shape[*dim1]);
  return verifyResultShape(*this, shape);
}

LogicalResult PermuteOp::verify() {
  ArrayRef<int64_t> self = shapeOf(getSelf());
  int64_t rank = self.size();
  if (int64_t(getDims().size()) != rank)
    return emitOpError("dims has ")
           << getDims().size() << " entries for a rank " << rank << " tensor";
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t dim : getDims()) {
    std::optional<int64_t> d = normalizeDim(dim, rank);
    if (!d || seen[*d])
      return emitOpError("dims is not a permutation of the tensor's dims");
    seen[*d] = true;
    shape.push_back(self[*d]);
  }
  return verifyResultShape(*this, shape);
}

LogicalResult ExpandOp::verify() {
  ArrayRef<int64_t> self = shapeOf(getSelf()), size = getSize();
  if (size.size() < self.size())
    return emitOpError("cannot expand ")
           << getSelf().getType() << " to fewer dims (" << size.size() << ")";
  int64_t leading = size.size() - self.size();
  SmallVector<int64_t> shape;
  for (auto [i, s] : llvm::enumerate(size)) {
    int64_t old = int64_t(i) < leading ? 1 : self[i - leading];
    if (s == -1) {
      if (int64_t(i) < leading)
        return emitOpError("-1 is not allowed for a new leading dim");
      shape.push_back(old);
      continue;
    }
    if (old != 1 &&
        failed(verifySameSize(*this, old, s, "expanded non-singleton sizes")))
      return failure();
    shape.push_back(s);
  }
  return verifyResultShape(*this, shape);
}

LogicalResult UnsqueezeOp::verify() {
  SmallVector<int64_t> shape(shapeOf(getSelf()));
  std::optional<int64_t> dim =
      normalizeDim(getDim(), shape.size() + 1);
  if (!dim)
    return emitOpError("dim ")
           << getDim() << " is out of range for rank " << shape.size() + 1;
  shape.insert(shape.begin() + *dim, 1);
  return verifyResultShape(*this, shape);
}
