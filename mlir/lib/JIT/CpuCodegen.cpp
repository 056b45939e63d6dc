//===- CpuCodegen.cpp - JIT functions to host object files ----------------===//

#include "CpuCodegen.h"

#include "../Support/Diagnostics.h"

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

using namespace fxmlir;
using namespace fxmlir::jit;

/// Adds `void fxmlir_entry(ptr descriptors)` calling the C interface
/// `_mlir_ciface_<function>(ptr, ptr, ...)` with each descriptor. The
/// function's buffers are marked noalias: outputs are fresh buffers and
/// inputs are only read, so loads may be hoisted and loops vectorized
/// without runtime overlap checks.
static void addEntry(llvm::Module &module, llvm::StringRef function) {
  if (llvm::Function *body = module.getFunction(function))
    for (llvm::Argument &arg : body->args())
      if (arg.getType()->isPointerTy())
        arg.addAttr(llvm::Attribute::NoAlias);
  llvm::Function *cInterface =
      module.getFunction(("_mlir_ciface_" + function).str());
  if (!cInterface || !cInterface->getReturnType()->isVoidTy())
    throw Error("@" + function.str() +
                " did not lower to a function writing its results into "
                "arguments");
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  auto *entry = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
      llvm::GlobalValue::ExternalLinkage, kEntrySymbol, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  llvm::SmallVector<llvm::Value *> args;
  for (unsigned i = 0, e = cInterface->arg_size(); i < e; ++i) {
    llvm::Value *slot = b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
    args.push_back(b.CreateLoad(ptr, slot));
  }
  b.CreateCall(cInterface, args);
  b.CreateRetVoid();
}

/// LLVM's O3 without its loop unroller. The vectorizer still interleaves
/// (several vectors per iteration); unrolling on top of it made regions'
/// code 4x larger and their compiles 3x longer (rotary embeddings' loops
/// over static dims were unrolled whole) for loops bound by memory.
static void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, modules);
}

std::string jit::emitObject(mlir::ModuleOp module, llvm::StringRef function,
                            llvm::TargetMachine &machine,
                            llvm::function_ref<void(llvm::Module &)> prepare) {
  llvm::LLVMContext llvmContext;
  // The translation's diagnostics travel in the Error, not to stderr.
  DiagnosticCollector diagnostics(module.getContext());
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext, function);
  if (!llvmModule)
    diagnostics.fail("cannot translate @" + function.str() + " to LLVM IR");
  llvmModule->setDataLayout(machine.createDataLayout());
  llvmModule->setTargetTriple(machine.getTargetTriple());
  addEntry(*llvmModule, function);
  if (prepare)
    prepare(*llvmModule);
  // Everything but the entry points internal, so that O3 inlines it.
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration() && !f.getName().starts_with(kExportPrefix))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  // LLVM prefers 256-bit vectors on AVX-512 CPUs (clock throttling); the
  // polynomial exp/tanh of a region are compute-bound enough to gain from
  // the full width, as torch's own AVX-512 kernels do.
  if (machine.getTargetFeatureString().contains("+avx512f"))
    for (llvm::Function &f : *llvmModule)
      if (!f.isDeclaration())
        f.addFnAttr("prefer-vector-width", "512");
  optimize(*llvmModule, machine);

  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    throw Error("the host target cannot emit object files");
  codegen.run(*llvmModule);
  return std::string(object.begin(), object.end());
}

std::string jit::compileToObject(mlir::ModuleOp module,
                                 llvm::StringRef function,
                                 llvm::TargetMachine &machine) {
  mlir::MLIRContext *ctx = module.getContext();
  auto func = module.lookupSymbol<mlir::func::FuncOp>(function);
  func->setAttr("llvm.emit_c_interface", mlir::UnitAttr::get(ctx));
  {
    DiagnosticCollector diagnostics(ctx);
    mlir::PassManager pm(ctx);
    buildJitCpuPipeline(pm);
    if (mlir::failed(pm.run(module)))
      diagnostics.fail("cannot lower @" + function.str() + " for the CPU");
  }
  return emitObject(module, function, machine);
}
