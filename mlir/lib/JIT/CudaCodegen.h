//===- CudaCodegen.h - JIT functions to PTX ---------------------*- C++ -*-===//

#ifndef FXMLIR_LIB_JIT_CUDACODEGEN_H
#define FXMLIR_LIB_JIT_CUDACODEGEN_H

#include "fxmlir/Core/Jit.h"

#include "mlir/IR/BuiltinOps.h"

namespace fxmlir::jit {

/// Lowers the specialized module (consumed) through the CUDA pipeline and
/// collects the kernel launches with their PTX and the host function.
/// Throws Error with the diagnostics.
CudaProgram compileToPtx(mlir::ModuleOp module, llvm::StringRef function,
                         const std::string &chip, const std::string &features);

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_CUDACODEGEN_H
