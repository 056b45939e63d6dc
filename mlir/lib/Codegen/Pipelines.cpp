//===- Pipelines.cpp - the JIT lowering pipelines -------------------------===//
//
// fxmlir -> linalg on tensors -> one-shot bufferization, then either CPU
// loops -> LLVM dialect, or GPU kernels -> NVVM -> PTX. Built here once and
// registered by name, so the JIT, fxmlir-opt and the lit tests run the same
// passes.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace fxmlir;

void fxmlir::buildJitToLinalgPipeline(OpPassManager &pm) {
  pm.addPass(createConvertFxmlirToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createOutputsToParams());
}

/// Tensors to buffers: contiguous row-major arguments (the runtime passes
/// contiguous tensors), results written into the output arguments.
static void addBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions options;
  options.bufferizeFunctionBoundaries = true;
  options.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A piece inserted into a slice of a result is computed in place there.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  // Folds expand_shape(collapse_shape(%out)) of keepdim results back to the
  // output argument, so that every result is seen to be one.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
}

/// Temporaries freed after their last use; copies of strided views as
/// linalg ops.
static void addDeallocation(OpPassManager &pm) {
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createStridedCopiesToLinalg());
}

/// Views to plain pointer arithmetic, then affine maps to arith: the
/// expansion computes a subview's strides and offset with affine.apply, which
/// only the lowering after it turns into code (with dynamic dims, e.g. a
/// slice of a [?, 16] tensor, a stride is `s0 * 16`).
static void addStridedMetadataExpansion(OpPassManager &pm) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
}

/// The last conversions of host code to the LLVM dialect, once memrefs,
/// math and GPU ops are lowered: arithmetic, control flow, functions.
static void addScalarCodeToLLVM(OpPassManager &pm) {
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void fxmlir::buildJitCpuPipeline(OpPassManager &pm) {
  buildJitToLinalgPipeline(pm);
  pm.addNestedPass<func::FuncOp>(createFuseSiblingReductions());
  addBufferization(pm);
  pm.addNestedPass<func::FuncOp>(createFuseRowLoops());
  addDeallocation(pm);
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createApproximateMath());
  addStridedMetadataExpansion(pm);
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createExpandBF16Conversions());
  // aligned_alloc, not malloc and pointer arithmetic to align: LLVM then
  // knows two temporaries apart, and keeps a loop's sums into each in
  // registers (two row sums into one loop, FuseSiblingReductions, ran
  // 5x slower when their stores might alias).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (f64 tanh, erf) calls libm.
  pm.addPass(createConvertMathToLibmPass());
  addScalarCodeToLLVM(pm);
  pm.addPass(createStoreHalfAsBits());
}

void fxmlir::buildJitCudaPipeline(OpPassManager &pm,
                                  const JitCudaOptions &options) {
  buildJitToLinalgPipeline(pm);
  pm.addNestedPass<func::FuncOp>(createPrivateFills());
  addBufferization(pm);
  addDeallocation(pm);
  pm.addNestedPass<func::FuncOp>(createGpuColumnReductions());
  pm.addNestedPass<func::FuncOp>(createGpuReductionsInnermost());
  pm.addNestedPass<func::FuncOp>(
      createGpuRowReductions({/*blockSize=*/options.blockSize}));
  pm.addNestedPass<func::FuncOp>(
      createGpuVectorizeElementwise({/*blockSize=*/options.blockSize}));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(
      createTileParallelLoops({/*blockSize=*/options.blockSize}));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  // Constants and dims into the kernels: a width, block size or static
  // size passed as an argument is a run-time value to the PTX (64-bit
  // divisions, no folded checks).
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addNestedPass<func::FuncOp>(createGpuDeviceBuffers());
  pm.addPass(createCanonicalizerPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // Inside the kernels, math must not reach convert-gpu-to-nvvm, which
  // would call libdevice: approximations, then LLVM intrinsics (sqrt, fma,
  // fabs are PTX instructions).
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createGpuLowerAllReduce());
  kernels.addPass(createApproximateMath());
  kernels.addPass(createMathToLLVMIntrinsics());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createCanonicalizerPass());
}

void fxmlir::buildJitCudaPtxPipeline(OpPassManager &pm,
                                     const JitCudaOptions &options) {
  buildJitCudaPipeline(pm, options);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void fxmlir::buildJitCudaHostPipeline(OpPassManager &pm,
                                      const JitCudaOptions &options) {
  buildJitCudaPtxPipeline(pm, options);
  addStridedMetadataExpansion(pm);
  pm.addPass(createSCFToControlFlowPass());
  // Launches, allocations and copies become calls of the mgpu* runtime; the
  // PTX becomes a global that a constructor loads (mgpuModuleLoadJIT).
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  addScalarCodeToLLVM(pm);
}

namespace {
struct CudaPipelineOptions : public PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU architecture"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx80")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block"),
                            llvm::cl::init(256)};

  JitCudaOptions get() const { return {chip, features, blockSize}; }
};
} // namespace

void fxmlir::registerJitPipelines() {
  PassPipelineRegistration<>(
      "fxmlir-jit-to-linalg",
      "JIT functions: fxmlir -> fused linalg on tensors, outputs as arguments",
      buildJitToLinalgPipeline);
  PassPipelineRegistration<>(
      "fxmlir-jit-cpu",
      "JIT functions: fxmlir -> linalg -> buffers -> loops -> LLVM dialect",
      buildJitCpuPipeline);
  PassPipelineRegistration<CudaPipelineOptions>(
      "fxmlir-jit-cuda",
      "JIT functions: fxmlir -> linalg -> buffers -> GPU kernels in NVVM",
      [](OpPassManager &pm, const CudaPipelineOptions &options) {
        buildJitCudaPipeline(pm, options.get());
      });
  PassPipelineRegistration<CudaPipelineOptions>(
      "fxmlir-jit-cuda-ptx",
      "JIT functions: fxmlir-jit-cuda, then the kernels as PTX",
      [](OpPassManager &pm, const CudaPipelineOptions &options) {
        buildJitCudaPtxPipeline(pm, options.get());
      });
  PassPipelineRegistration<CudaPipelineOptions>(
      "fxmlir-jit-cuda-host",
      "JIT functions: fxmlir-jit-cuda-ptx, then the host side in the LLVM "
      "dialect, calling the mgpu* runtime",
      [](OpPassManager &pm, const CudaPipelineOptions &options) {
        buildJitCudaHostPipeline(pm, options.get());
      });
}
