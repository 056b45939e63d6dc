//===- MlirJitCUDA.cu - mlir_jit's CUDA kernel ----------------------------===//
//
// Compiles a JIT function for the device's architecture on its first call
// there (its host side for the CPU, kernels as PTX) and launches it on
// torch's current stream: no synchronization, so CUDA graphs can capture it.
// The compiled host code reaches the driver through the table below: driver
// entry points resolved by the CUDA runtime torch loaded (this library links
// no libcuda), temporaries from torch's caching allocator.
//
//===----------------------------------------------------------------------===//

#include "Functions.h"
#include "MlirJit.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAMiscFunctions.h>
#include <torch/library.h>

#include <cuda.h>

namespace fxmlir::runtime {
namespace {

/// The driver function `name`, of the CUDA 12.0 ABI.
template <typename Function> Function driverEntry(const char *name) {
  void *entry = nullptr;
  cudaDriverEntryPointQueryResult status;
#if CUDART_VERSION >= 12050
  C10_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &entry, 12000,
                                                  cudaEnableDefault, &status));
#else
  C10_CUDA_CHECK(
      cudaGetDriverEntryPoint(name, &entry, cudaEnableDefault, &status));
#endif
  TORCH_CHECK(status == cudaDriverEntryPointSuccess && entry,
              "mlir_jit: the CUDA driver has no ", name);
  return reinterpret_cast<Function>(entry);
}

struct DriverFunctions {
  decltype(&cuModuleLoadData) moduleLoadData =
      driverEntry<decltype(&cuModuleLoadData)>("cuModuleLoadData");
  decltype(&cuModuleUnload) moduleUnload =
      driverEntry<decltype(&cuModuleUnload)>("cuModuleUnload");
  decltype(&cuModuleGetFunction) moduleGetFunction =
      driverEntry<decltype(&cuModuleGetFunction)>("cuModuleGetFunction");
  decltype(&cuLaunchKernel) launchKernel =
      driverEntry<decltype(&cuLaunchKernel)>("cuLaunchKernel");
  decltype(&cuMemcpyAsync) memcpyAsync =
      driverEntry<decltype(&cuMemcpyAsync)>("cuMemcpyAsync");
  decltype(&cuCtxGetCurrent) ctxGetCurrent =
      driverEntry<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
};

const DriverFunctions &driverFunctions() {
  static const DriverFunctions functions;
  return functions;
}

jit::CudaDriver makeDriver() {
  driverFunctions(); // Resolve now: the table's functions may not throw.
  jit::CudaDriver driver;
  driver.moduleLoadData = [](void **module, const void *image) {
    return static_cast<int>(driverFunctions().moduleLoadData(
        reinterpret_cast<CUmodule *>(module), image));
  };
  driver.moduleUnload = [](void *module) {
    return static_cast<int>(
        driverFunctions().moduleUnload(static_cast<CUmodule>(module)));
  };
  driver.moduleGetFunction = [](void **function, void *module,
                                const char *name) {
    return static_cast<int>(driverFunctions().moduleGetFunction(
        reinterpret_cast<CUfunction *>(function), static_cast<CUmodule>(module),
        name));
  };
  driver.launchKernel = [](void *function, unsigned gridX, unsigned gridY,
                           unsigned gridZ, unsigned blockX, unsigned blockY,
                           unsigned blockZ, unsigned sharedMemBytes,
                           void *stream, void **params, void **extra, size_t) {
    return static_cast<int>(driverFunctions().launchKernel(
        static_cast<CUfunction>(function), gridX, gridY, gridZ, blockX, blockY,
        blockZ, sharedMemBytes, static_cast<CUstream>(stream), params, extra));
  };
  driver.memcpyAsync = [](uint64_t dst, uint64_t src, size_t bytes,
                          void *stream) {
    return static_cast<int>(driverFunctions().memcpyAsync(
        dst, src, bytes, static_cast<CUstream>(stream)));
  };
  driver.allocate = [](size_t bytes, void *stream) -> void * {
    try {
      return c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(
          bytes, static_cast<cudaStream_t>(stream));
    } catch (const c10::Error &) {
      return nullptr; // Out of memory: reported as a failed call.
    }
  };
  // The block is reused by later work on its stream, after this call's.
  driver.deallocate = [](void *pointer, void *) {
    c10::cuda::CUDACachingAllocator::raw_delete(pointer);
  };
  return driver;
}

/// Makes the current device's primary context current on this thread as
/// torch's NVRTC kernels do: driver calls need one, and a thread that made
/// no runtime call yet (autograd's) may have none.
void ensureContext(std::string_view name) {
  CUcontext context = nullptr;
  CUresult result = driverFunctions().ctxGetCurrent(&context);
  TORCH_CHECK(result == CUDA_SUCCESS, "mlir_jit @", name,
              ": cuCtxGetCurrent failed with CUDA error ",
              static_cast<int>(result));
  if (!context) {
    std::lock_guard<std::mutex> lock(*c10::cuda::getFreeMutex());
    C10_CUDA_CHECK(cudaFree(nullptr));
  }
}

/// The architecture of `device` for nvvm-attach-target, and the lowest PTX
/// version that LLVM accepts for it.
jit::CudaTarget targetOf(int device) {
  const cudaDeviceProp *properties = at::cuda::getDeviceProperties(device);
  jit::CudaTarget target;
  target.chip =
      "sm_" + std::to_string(properties->major * 10 + properties->minor);
  target.features = properties->major >= 12   ? "+ptx87"
                    : properties->major >= 10 ? "+ptx86"
                                              : "+ptx80";
  target.device = device;
  static const jit::CudaDriver driver = makeDriver();
  target.driver = driver;
  return target;
}

const jit::CudaFunction &compiledCuda(Function &function,
                                      std::string_view module,
                                      std::string_view name, int device) {
  std::lock_guard<std::mutex> lock(function.cudaMutex);
  std::shared_ptr<const jit::CudaFunction> &compiled = function.cuda[device];
  if (!compiled) {
    jit::Jit &jit = jit::Jit::shared();
    compiled = jit.compileCudaFunction(std::string(module), std::string(name),
                                       function.signature.inputs,
                                       targetOf(device));
    // As compiledCpu: a disk cache entry rebuilt, a cache directory that
    // cannot be written.
    for (const std::string &warning : jit.takeWarnings())
      TORCH_WARN(warning);
  }
  return *compiled;
}

std::vector<at::Tensor> mlirJitCuda(c10::string_view module,
                                    c10::string_view name,
                                    at::TensorList inputs,
                                    const at::Tensor *out = nullptr) {
  Function &function = guarded(
      name, [&]() -> Function & { return runtime::function(module, name); });
  checkInputs(name, function.signature, inputs);
  at::Device device = inputs.empty()
                          ? at::Device(at::kCUDA, c10::cuda::current_device())
                          : inputs[0].device();
  for (const at::Tensor &input : inputs)
    TORCH_CHECK(input.device() == device, "mlir_jit @", name,
                ": expected all inputs on ", device, ", got one on ",
                input.device());
  c10::cuda::CUDAGuard guard(device);
  ensureContext(name);
  const jit::CudaFunction &compiled =
      guarded(name, [&]() -> const jit::CudaFunction & {
        return compiledCuda(function, module, name, device.index());
      });

  // Each element of the inputs is read before that element of a result is
  // written: `out` may be a pointwise function's input.
  Call call = prepareCall(name, compiled, inputs, device, out);
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(device.index());
  guarded(name, [&] {
    compiled.launch(call.inputBuffers, call.outputBuffers, stream);
  });
  return call.results;
}

} // namespace
} // namespace fxmlir::runtime

template <>
std::vector<at::Tensor> fxmlir::ops::mlirJit<fxmlir::ops::Device::CUDA>(
    c10::string_view module, c10::string_view function, at::TensorList inputs) {
  return runtime::mlirJitCuda(module, function, inputs);
}

template <>
at::Tensor &fxmlir::ops::mlirJitInto<fxmlir::ops::Device::CUDA>(
    c10::string_view module, c10::string_view function, at::TensorList inputs,
    at::Tensor &out) {
  runtime::mlirJitCuda(module, function, inputs, &out);
  return out;
}

#include "MlirJitCUDARegistration.inc"
