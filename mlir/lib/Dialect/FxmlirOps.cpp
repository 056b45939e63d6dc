//===- FxmlirOps.cpp - hand-written fxmlir ops ----------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace fxmlir;

#define GET_OP_CLASSES
#include "fxmlir/Dialect/FxmlirOps.cpp.inc"

//===----------------------------------------------------------------------===//
// NoneOp
//===----------------------------------------------------------------------===//

OpFoldResult NoneOp::fold(FoldAdaptor) { return NoneAttr::get(getContext()); }

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

/// Checks that every #fxmlir.operand<N> nested in `attr` names an operand.
static LogicalResult verifyOperandRefs(CallOp op, Attribute attr) {
  int64_t numOperands = op.getOperands().size();
  WalkResult result = attr.walk([&](OperandRefAttr ref) {
    if (ref.getIndex() < 0 || ref.getIndex() >= numOperands) {
      op.emitOpError() << "refers to operand " << ref.getIndex() << " but has "
                       << numOperands << " operands";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult CallOp::verify() {
  if (getTarget().empty())
    return emitOpError("needs a non-empty target name");
  if (failed(verifyOperandRefs(*this, getArgs())) ||
      failed(verifyOperandRefs(*this, getKwargs())))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// MlirJitOp
//===----------------------------------------------------------------------===//

LogicalResult MlirJitOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("callee ") << getCalleeAttr() << " is not a func.func";
  FunctionType type = callee.getFunctionType();
  if (TypeRange(type.getInputs()) != TypeRange(getOperands().getTypes()) ||
      TypeRange(type.getResults()) != TypeRange(getResults().getTypes()))
    return emitOpError("operand and result types do not match callee ")
           << getCalleeAttr() << " of type " << type;
  return success();
}
