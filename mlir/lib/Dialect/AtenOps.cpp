//===- AtenOps.cpp - ops generated from ATen schemas ----------------------===//
//
// One shard of the generated definitions: mlir/lib/CMakeLists.txt compiles
// this file once per shard, with GET_OP_DEFS_<shard> defined, so that the
// shards compile in parallel.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace fxmlir;

#include "fxmlir/Dialect/AtenOps.cpp.inc"
