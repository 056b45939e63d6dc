//===- OutputsToParams.cpp - results written into destination arguments ---===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace fxmlir {
#define GEN_PASS_DEF_OUTPUTSTOPARAMS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

/// Makes the op computing `value` write it into `dest` when `value` is a
/// destination-style result whose destination is an empty tensor, or an
/// empty tensor filled with a constant (a reduction's accumulator), or a
/// chain of insert_slices into one, possibly behind expand_shapes. Returns
/// false when it is not.
static bool writeInto(Value value, Value dest, OpBuilder &b) {
  if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>()) {
    b.setInsertionPointAfterValue(dest);
    auto collapsed = tensor::CollapseShapeOp::create(
        b, expand.getLoc(), expand.getSrcType(), dest,
        expand.getReassociationIndices());
    if (writeInto(expand.getSrc(), collapsed, b))
      return true;
    collapsed.erase();
    return false;
  }
  auto result = dyn_cast<OpResult>(value);
  auto op = result ? dyn_cast<DestinationStyleOpInterface>(result.getOwner())
                   : DestinationStyleOpInterface();
  if (!op)
    return false;
  OpOperand *init = op.getTiedOpOperand(result);
  Value initValue = init->get();
  if (initValue.getDefiningOp<tensor::EmptyOp>()) {
    init->set(dest);
    return true;
  }
  // A concatenation: slices inserted one after the other into an empty
  // tensor.
  if (isa<tensor::InsertSliceOp>(result.getOwner()) &&
      initValue.getDefiningOp<tensor::InsertSliceOp>() &&
      initValue.hasOneUse())
    return writeInto(initValue, dest, b);
  // Other ops may share the fill: fill `dest` with the same value.
  if (auto fill = initValue.getDefiningOp<linalg::FillOp>()) {
    if (!fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return false;
    b.setInsertionPoint(op);
    auto filled = linalg::FillOp::create(b, fill.getLoc(), fill.getInputs(),
                                         ValueRange{dest});
    init->set(filled.getResult(0));
    // Bufferized, a fill no op reads still allocates and writes its buffer
    // (a kernel launch on a GPU).
    if (fill->use_empty())
      fill.erase();
    return true;
  }
  return false;
}

namespace {
struct OutputsToParamsPass
    : public fxmlir::impl::OutputsToParamsBase<OutputsToParamsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    for (OpOperand &returned : ret->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(returned.get().getType());
      if (!type) {
        ret.emitOpError("returns a non-tensor value");
        return signalPassFailure();
      }
      Value dest = body.addArgument(type, returned.get().getLoc());
      // A value returned twice has one use per return operand.
      if (writeInto(returned.get(), dest, b))
        continue;
      b.setInsertionPoint(ret);
      auto copy = linalg::CopyOp::create(b, returned.get().getLoc(),
                                         returned.get(), dest);
      returned.set(copy.getResult(0));
    }
    func.setType(FunctionType::get(&getContext(), body.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }
};
} // namespace
