//===- Combiner.cpp - how a reduction body folds an element ---------------===//

#include "Combiner.h"
#include "LoopIndices.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace fxmlir;

Value Combiner::combine(OpBuilder &builder, Value accumulated,
                        Value element) const {
  IRMapping mapping;
  mapping.map(op->getOperand(1 - accumulatorOperand), element);
  mapping.map(op->getOperand(accumulatorOperand), accumulated);
  return builder.clone(*op, mapping)->getResult(0);
}

std::optional<Combiner> fxmlir::findCombiner(linalg::GenericOp generic) {
  Block *body = generic.getBody();
  BlockArgument acc = body->getArguments().back();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *op = yield.getOperand(0).getDefiningOp();
  if (!op || op->getNumOperands() != 2 || !acc.hasOneUse() ||
      !llvm::is_contained(op->getOperands(), Value(acc)))
    return std::nullopt;
  unsigned accOperand = op->getOperand(0) == acc ? 0 : 1;
  Type type = acc.getType();
  Builder b(op->getContext());
  auto floatType = dyn_cast<FloatType>(type);
  auto infinity = [&](bool negative) -> TypedAttr {
    return b.getFloatAttr(
        type, APFloat::getInf(floatType.getFloatSemantics(), negative));
  };
  auto intLimit = [&](bool minimum) -> TypedAttr {
    unsigned width = type.getIntOrFloatBitWidth();
    return b.getIntegerAttr(type, minimum ? APInt::getSignedMinValue(width)
                                          : APInt::getSignedMaxValue(width));
  };
  using Kind = gpu::AllReduceOperation;
  if (isa<arith::AddFOp, arith::AddIOp>(op))
    return Combiner{op, Kind::ADD, cast<TypedAttr>(b.getZeroAttr(type)), accOperand};
  if (isa<arith::MulFOp>(op))
    return Combiner{op, Kind::MUL, b.getFloatAttr(type, 1.0), accOperand};
  if (isa<arith::MaxNumFOp>(op))
    return Combiner{op, Kind::MAXNUMF, infinity(true), accOperand};
  if (isa<arith::MaximumFOp>(op))
    return Combiner{op, Kind::MAXIMUMF, infinity(true), accOperand};
  if (isa<arith::MinNumFOp>(op))
    return Combiner{op, Kind::MINNUMF, infinity(false), accOperand};
  if (isa<arith::MinimumFOp>(op))
    return Combiner{op, Kind::MINIMUMF, infinity(false), accOperand};
  if (isa<arith::MaxSIOp>(op))
    return Combiner{op, Kind::MAXSI, intLimit(true), accOperand};
  if (isa<arith::MinSIOp>(op))
    return Combiner{op, Kind::MINSI, intLimit(false), accOperand};
  return std::nullopt;
}

Value fxmlir::foldElement(OpBuilder &builder, Location loc,
                          linalg::GenericOp generic, ArrayRef<Value> point,
                          Value accumulated) {
  Block *body = generic.getBody();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  IRMapping mapping;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    unsigned index = input->getOperandNumber();
    mapping.map(body->getArgument(index),
                memref::LoadOp::create(builder, loc, input->get(),
                                       indicesOf(builder, loc, maps[index],
                                                 point)));
  }
  mapping.map(body->getArguments().back(), accumulated);
  for (Operation &op : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op))
      mapping.map(index.getResult(), point[index.getDim()]);
    else
      builder.clone(op, mapping);
  }
  return mapping.lookup(body->getTerminator()->getOperand(0));
}

/// The buffer `value` views (followed through view-like ops).
static Value viewedBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Whether `op` or an op nested in it has an operand viewing `buffer`.
static bool touches(Operation *op, Value buffer) {
  WalkResult result = op->walk([&](Operation *nested) {
    // Sizes and views of the buffer are not its contents.
    if (isMemoryEffectFree(nested))
      return WalkResult::advance();
    for (Value operand : nested->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          viewedBuffer(operand) == buffer)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

linalg::FillOp fxmlir::initialFill(linalg::GenericOp generic) {
  Value output = generic.getDpsInitOperand(0)->get();
  Value buffer = viewedBuffer(output);
  for (Operation *op = generic->getPrevNode(); op; op = op->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(op);
    if (fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInitOperand(0)->get() == output)
      return fill;
    if (touches(op, buffer))
      return nullptr;
  }
  return nullptr;
}

Value fxmlir::foldIntoOutput(OpBuilder &builder, Location loc,
                             const Combiner &combiner, linalg::FillOp fill,
                             Value output, ValueRange indices, Value total) {
  if (!fill) {
    Value initial = memref::LoadOp::create(builder, loc, output, indices);
    return combiner.combine(builder, initial, total);
  }
  Value value = fill.getDpsInputOperand(0)->get();
  Attribute constant;
  if (matchPattern(value, m_Constant(&constant)) &&
      constant == combiner.identity)
    return total;
  return combiner.combine(builder, value, total);
}
