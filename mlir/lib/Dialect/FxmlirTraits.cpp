//===- FxmlirTraits.cpp - verification rules of generated ops -------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace fxmlir;

LogicalResult fxmlir::verifyBroadcastShapes(Operation *op) {
  SmallVector<RankedTensorType> operands;
  for (Type type : op->getOperandTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      operands.push_back(tensor);
  int64_t rank = 0;
  for (RankedTensorType operand : operands)
    rank = std::max(rank, operand.getRank());
  // The broadcast shape: 1 until an operand has another size there; a
  // dynamic size is 1 or the other operands' size, so a static one wins.
  SmallVector<int64_t> shape(rank, 1);
  for (RankedTensorType operand : operands) {
    int64_t offset = rank - operand.getRank();
    for (auto [i, size] : llvm::enumerate(operand.getShape())) {
      int64_t &dim = shape[offset + i];
      if (size == 1 || size == dim || (ShapedType::isDynamic(size) && dim != 1))
        continue;
      if (dim != 1 && !ShapedType::isDynamic(dim))
        return op->emitOpError("operand shapes do not broadcast: size ")
               << size << " meets size " << dim << " in dim " << offset + i
               << " of the broadcast shape";
      dim = size;
    }
  }
  for (Type type : op->getResultTypes()) {
    auto result = dyn_cast<RankedTensorType>(type);
    if (!result)
      continue;
    if (result.getRank() != rank ||
        failed(verifyCompatibleShape(result.getShape(), shape)))
      return op->emitOpError("result type ")
             << result << " does not have the broadcast shape "
             << RankedTensorType::get(shape, result.getElementType())
             << " of the operands";
  }
  return success();
}

LogicalResult fxmlir::verifyFloatingPointOperands(Operation *op) {
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && !isa<FloatType>(tensor.getElementType()))
      return op->emitOpError("operand #")
             << i << " must be a floating-point tensor, got " << tensor;
  return success();
}
