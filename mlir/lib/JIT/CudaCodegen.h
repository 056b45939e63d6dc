//===- CudaCodegen.h - JIT functions to PTX and host code -------*- C++ -*-===//

#ifndef FXMLIR_LIB_JIT_CUDACODEGEN_H
#define FXMLIR_LIB_JIT_CUDACODEGEN_H

#include "fxmlir/JIT/Jit.h"

#include "mlir/IR/BuiltinOps.h"

namespace llvm {
class TargetMachine;
} // namespace llvm

namespace fxmlir::jit {

/// The entry points of a CUDA host object besides kEntrySymbol: load and
/// unload the kernels' modules (what gpu-to-llvm's constructors and
/// destructors did), so that loading happens when and where the caller
/// chooses.
constexpr const char *kCudaLoadSymbol = "fxmlir_cuda_load";
constexpr const char *kCudaUnloadSymbol = "fxmlir_cuda_unload";

/// Lowers the specialized module (consumed) through the CUDA pipeline and
/// collects the kernel launches with their PTX and the host function.
/// Throws Error with the diagnostics.
CudaProgram compileToPtx(mlir::ModuleOp module, llvm::StringRef function,
                         const std::string &chip, const std::string &features);

/// Lowers the specialized module (consumed) through the CUDA host pipeline
/// and returns the host side as an object file for `machine`: its entry
/// point launches the kernels through the mgpu* functions. Throws Error with
/// the diagnostics.
std::string compileCudaHost(mlir::ModuleOp module, llvm::StringRef function,
                            const std::string &chip,
                            const std::string &features,
                            llvm::TargetMachine &machine);

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_CUDACODEGEN_H
