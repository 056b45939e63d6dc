//===- Passes.h - JIT region passes and pipelines ---------------*- C++ -*-===//

#ifndef FXMLIR_CODEGEN_PASSES_H
#define FXMLIR_CODEGEN_PASSES_H

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Support/MLIR.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace fxmlir {

#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "fxmlir/Codegen/Passes.h.inc"

/// Where a JIT function runs and what the CUDA pipeline produces.
struct JitCudaOptions {
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  /// Threads per block of elementwise kernels.
  int64_t blockSize = 256;
};

/// fxmlir ops -> linalg on tensors, fused elementwise, outputs as
/// destination arguments (`fxmlir-jit-to-linalg`).
void buildJitToLinalgPipeline(OpPassManager &pm);
/// ... -> one-shot bufferization -> vectorizable loops -> LLVM dialect, with
/// C interfaces (`fxmlir-jit-cpu`).
void buildJitCpuPipeline(OpPassManager &pm);
/// ... -> bufferization -> GPU kernels -> NVVM, kernels still in gpu.module
/// (`fxmlir-jit-cuda`).
void buildJitCudaPipeline(OpPassManager &pm, const JitCudaOptions &options);
/// ... -> PTX in a gpu.binary (`fxmlir-jit-cuda-ptx`).
void buildJitCudaPtxPipeline(OpPassManager &pm, const JitCudaOptions &options);
/// ... -> the host side in the LLVM dialect: gpu.launch_func, device buffers
/// and the PTX's loading as calls of the mgpu* runtime functions
/// (`fxmlir-jit-cuda-host`).
void buildJitCudaHostPipeline(OpPassManager &pm, const JitCudaOptions &options);

/// Registers the pipelines above by name for fxmlir-opt and textual pipelines.
void registerJitPipelines();

/// Adds the dialects, interfaces and LLVM IR translations the pipelines use.
void registerJitDialects(DialectRegistry &registry);
/// Initializes the host and NVPTX LLVM backends. Safe to call more than once.
void initializeJitTargets();

} // namespace fxmlir

#endif // FXMLIR_CODEGEN_PASSES_H
