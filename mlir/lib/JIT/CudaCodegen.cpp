//===- CudaCodegen.cpp - JIT functions to PTX -----------------------------===//

#include "CudaCodegen.h"

#include "../Core/Diagnostics.h"

#include "fxmlir/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"

using namespace fxmlir;
using namespace fxmlir::jit;

CudaProgram jit::compileToPtx(mlir::ModuleOp module, llvm::StringRef function,
                              const std::string &chip,
                              const std::string &features) {
  mlir::MLIRContext *ctx = module.getContext();
  mlir::fxmlir::initializeJitTargets();
  {
    DiagnosticCollector diagnostics(ctx);
    mlir::PassManager pm(ctx);
    mlir::fxmlir::buildJitCudaPtxPipeline(pm, {chip, features});
    if (mlir::failed(pm.run(module)))
      diagnostics.fail("cannot lower @" + function.str() + " for CUDA " +
                       chip);
  }
  CudaProgram program;
  auto host = module.lookupSymbol<mlir::func::FuncOp>(function);
  host.walk([&](mlir::gpu::LaunchFuncOp launch) {
    auto binary = module.lookupSymbol<mlir::gpu::BinaryOp>(
        launch.getKernelModuleName());
    std::string ptx;
    for (auto object : binary.getObjects().getAsRange<mlir::gpu::ObjectAttr>())
      ptx = object.getObject().getValue().str();
    program.launches.push_back({launch.getKernelName().str(), ptx});
  });
  llvm::raw_string_ostream os(program.host);
  host.print(os);
  return program;
}
