//===- CoreImpl.h - what the public handles hold ----------------*- C++ -*-===//

#ifndef FXMLIR_LIB_CORE_COREIMPL_H
#define FXMLIR_LIB_CORE_COREIMPL_H

#include "fxmlir/Core/Core.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

struct fxmlir::Context::Impl {
  mlir::MLIRContext context;
  Impl();
};

struct fxmlir::Module::Impl {
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

namespace fxmlir {
/// Implements Module::toJson.
std::string moduleToJson(mlir::ModuleOp module);
} // namespace fxmlir

#endif // FXMLIR_LIB_CORE_COREIMPL_H
