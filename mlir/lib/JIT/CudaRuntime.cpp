//===- CudaRuntime.cpp - the mgpu* functions of JIT-compiled host code ----===//
//
// Signatures as MLIR's CudaRuntimeWrappers.cpp defines them and gpu-to-llvm
// calls them. Every stream is the current call's stream: creating,
// synchronizing or destroying one does nothing, so that a call enqueues its
// kernels on torch's stream and returns (CUDA graphs can capture it).
//
//===----------------------------------------------------------------------===//

#include "CudaRuntime.h"

#include <cstdint>
#include <string>

using namespace fxmlir;
using namespace fxmlir::jit;

static thread_local CudaCall *currentCall = nullptr;

CudaCall::CudaCall(const CudaDriver &driver, void *stream)
    : driver(driver), stream(stream), previous(currentCall) {
  currentCall = this;
}

CudaCall::~CudaCall() { currentCall = previous; }

CudaCall *CudaCall::current() { return currentCall; }

bool CudaCall::succeeded(int result, const char *what) {
  if (result != 0 && error.empty())
    error =
        std::string(what) + " failed with CUDA error " + std::to_string(result);
  return result == 0;
}

void CudaCall::check(const std::string &action) const {
  if (!error.empty())
    throw Error(action + ": " + error);
}

namespace {
/// The current call if no earlier driver call failed.
CudaCall *healthyCall() {
  CudaCall *call = currentCall;
  return call && call->ok() ? call : nullptr;
}

void *mgpuModuleLoad(void *data, size_t) {
  void *module = nullptr;
  if (CudaCall *call = healthyCall())
    call->succeeded(call->driver.moduleLoadData(&module, data),
                    "cuModuleLoadData");
  return module;
}

void *mgpuModuleLoadJIT(void *data, int) { return mgpuModuleLoad(data, 0); }

void mgpuModuleUnload(void *module) {
  if (CudaCall *call = currentCall; call && module)
    call->succeeded(call->driver.moduleUnload(module), "cuModuleUnload");
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  void *function = nullptr;
  if (CudaCall *call = healthyCall())
    call->succeeded(call->driver.moduleGetFunction(&function, module, name),
                    "cuModuleGetFunction");
  return function;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *stream,
                      void **params, void **extra, size_t paramCount) {
  // An empty tensor: nothing to compute, and a zero grid is an error.
  if (gridX * gridY * gridZ == 0)
    return;
  CudaCall *call = healthyCall();
  if (!call)
    return;
  int result = call->driver.launchKernel(function, gridX, gridY, gridZ, blockX,
                                         blockY, blockZ, sharedMemBytes,
                                         stream, params, extra, paramCount);
  if (result == 0)
    return;
  // The launch's shape says which device limit it broke (CUDA error 1).
  auto dims = [](intptr_t x, intptr_t y, intptr_t z) {
    return std::to_string(x) + "x" + std::to_string(y) + "x" +
           std::to_string(z);
  };
  std::string what = "cuLaunchKernel (grid " + dims(gridX, gridY, gridZ) +
                     ", block " + dims(blockX, blockY, blockZ) + ", " +
                     std::to_string(sharedMemBytes) + " bytes shared)";
  call->succeeded(result, what.c_str());
}

void *mgpuStreamCreate() {
  CudaCall *call = currentCall;
  return call ? call->stream : nullptr;
}

void mgpuStreamSynchronize(void *) {}

void mgpuStreamDestroy(void *) {}

void *mgpuMemAlloc(uint64_t bytes, void *stream, bool) {
  CudaCall *call = healthyCall();
  if (!call || bytes == 0)
    return nullptr;
  void *pointer = call->driver.allocate(bytes, stream);
  call->succeeded(pointer ? 0 : 2 /*CUDA_ERROR_OUT_OF_MEMORY*/,
                  "allocating device memory");
  return pointer;
}

void mgpuMemFree(void *pointer, void *stream) {
  if (CudaCall *call = currentCall; call && pointer)
    call->driver.deallocate(pointer, stream);
}

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  if (CudaCall *call = healthyCall(); call && bytes)
    call->succeeded(call->driver.memcpyAsync(reinterpret_cast<uintptr_t>(dst),
                                             reinterpret_cast<uintptr_t>(src),
                                             bytes, stream),
                    "cuMemcpyAsync");
}
} // namespace

std::vector<std::pair<const char *, void *>> jit::cudaRuntimeSymbols() {
  return {
      {"mgpuModuleLoad", reinterpret_cast<void *>(&mgpuModuleLoad)},
      {"mgpuModuleLoadJIT", reinterpret_cast<void *>(&mgpuModuleLoadJIT)},
      {"mgpuModuleUnload", reinterpret_cast<void *>(&mgpuModuleUnload)},
      {"mgpuModuleGetFunction",
       reinterpret_cast<void *>(&mgpuModuleGetFunction)},
      {"mgpuLaunchKernel", reinterpret_cast<void *>(&mgpuLaunchKernel)},
      {"mgpuStreamCreate", reinterpret_cast<void *>(&mgpuStreamCreate)},
      {"mgpuStreamSynchronize",
       reinterpret_cast<void *>(&mgpuStreamSynchronize)},
      {"mgpuStreamDestroy", reinterpret_cast<void *>(&mgpuStreamDestroy)},
      {"mgpuMemAlloc", reinterpret_cast<void *>(&mgpuMemAlloc)},
      {"mgpuMemFree", reinterpret_cast<void *>(&mgpuMemFree)},
      {"mgpuMemcpy", reinterpret_cast<void *>(&mgpuMemcpy)},
  };
}
