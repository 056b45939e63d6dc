//===- AtenOps.cpp - ops generated from ATen schemas ----------------------===//
//
// Kept in its own translation unit: the generated definitions are large and
// compile in parallel with the rest of the dialect.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::fxmlir;

#define GET_OP_CLASSES
#include "fxmlir/Dialect/AtenOps.cpp.inc"

void FxmlirDialect::registerAtenOps() {
  addOperations<
#define GET_OP_LIST
#include "fxmlir/Dialect/AtenOps.cpp.inc"
      >();
}
