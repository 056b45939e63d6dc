//===- CudaCodegen.cpp - JIT functions to PTX and host code ---------------===//

#include "CudaCodegen.h"
#include "CpuCodegen.h"

#include "../Support/Diagnostics.h"

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace fxmlir;
using namespace fxmlir::jit;

CudaProgram jit::compileToPtx(mlir::ModuleOp module, llvm::StringRef function,
                              const std::string &chip,
                              const std::string &features) {
  mlir::MLIRContext *ctx = module.getContext();
  initializeJitTargets();
  {
    DiagnosticCollector diagnostics(ctx);
    mlir::PassManager pm(ctx);
    buildJitCudaPtxPipeline(pm, {chip, features});
    if (mlir::failed(pm.run(module)))
      diagnostics.fail("cannot lower @" + function.str() + " for CUDA " + chip);
  }
  CudaProgram program;
  auto host = module.lookupSymbol<mlir::func::FuncOp>(function);
  host.walk([&](mlir::gpu::LaunchFuncOp launch) {
    auto binary =
        module.lookupSymbol<mlir::gpu::BinaryOp>(launch.getKernelModuleName());
    std::string ptx;
    for (auto object : binary.getObjects().getAsRange<mlir::gpu::ObjectAttr>())
      ptx = object.getObject().getValue().str();
    program.launches.push_back({launch.getKernelName().str(), ptx});
  });
  llvm::raw_string_ostream os(program.host);
  host.print(os);
  return program;
}

/// Replaces the array `global` (llvm.global_ctors or _dtors) by a function
/// `name` that calls its functions in `order`.
static void
outlineStructors(llvm::Module &module, llvm::StringRef global,
                 llvm::StringRef name,
                 llvm::iterator_range<llvm::orc::CtorDtorIterator> structors,
                 bool reversed) {
  std::vector<llvm::Function *> functions;
  for (const llvm::orc::CtorDtorIterator::Element &element : structors)
    functions.push_back(element.Func);
  if (reversed)
    std::reverse(functions.begin(), functions.end());
  llvm::LLVMContext &ctx = module.getContext();
  auto *outlined = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", outlined));
  for (llvm::Function *function : functions)
    b.CreateCall(function);
  b.CreateRetVoid();
  if (llvm::GlobalVariable *array = module.getGlobalVariable(global))
    array->eraseFromParent();
}

std::string jit::compileCudaHost(mlir::ModuleOp module,
                                 llvm::StringRef function,
                                 const std::string &chip,
                                 const std::string &features,
                                 llvm::TargetMachine &machine) {
  mlir::MLIRContext *ctx = module.getContext();
  initializeJitTargets();
  auto func = module.lookupSymbol<mlir::func::FuncOp>(function);
  func->setAttr("llvm.emit_c_interface", mlir::UnitAttr::get(ctx));
  {
    DiagnosticCollector diagnostics(ctx);
    mlir::PassManager pm(ctx);
    buildJitCudaHostPipeline(pm, {chip, features});
    if (mlir::failed(pm.run(module)))
      diagnostics.fail("cannot lower @" + function.str() + " for CUDA " + chip);
  }
  return emitObject(module, function, machine, [](llvm::Module &host) {
    outlineStructors(host, "llvm.global_ctors", kCudaLoadSymbol,
                     llvm::orc::getConstructors(host), /*reversed=*/false);
    outlineStructors(host, "llvm.global_dtors", kCudaUnloadSymbol,
                     llvm::orc::getDestructors(host), /*reversed=*/true);
  });
}
