//===- InitAll.cpp - register everything fxmlir uses ----------------------===//

#include "fxmlir/Registration/InitAll.h"

#include "fxmlir/Codegen/Passes.h"
#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

void fxmlir::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<fxmlir::FxmlirDialect, mlir::func::FuncDialect>();
  registerJitDialects(registry);
}

std::unique_ptr<mlir::MLIRContext> fxmlir::makeContext() {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  return std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
}

void fxmlir::registerAllPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    mlir::registerTransformsPasses();
    registerFxmlirPasses();
    registerFxmlirCodegenPasses();
    registerJitPipelines();
    registerPipelines();
  });
}
