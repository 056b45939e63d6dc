//===- CudaRuntime.h - mgpu* functions for JIT host code --------*- C++ -*-===//
//
// gpu-to-llvm lowers launches, device buffers and module loading to calls of
// MLIR's CUDA runtime wrappers (mgpuLaunchKernel, ...). Debian ships no
// libmlir_cuda_runtime, and the torch op library must launch on torch's
// stream through the driver torch loaded: so the core defines those
// functions itself, forwarding to the CudaDriver of the current call.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_JIT_CUDARUNTIME_H
#define FXMLIR_LIB_JIT_CUDARUNTIME_H

#include "fxmlir/JIT/Jit.h"

#include <string>
#include <utility>
#include <vector>

namespace fxmlir::jit {

/// One call into compiled CUDA host code on this thread: the driver and the
/// stream its mgpu* calls use, and their first failure (the generated code
/// checks no result; later calls are skipped).
class CudaCall {
public:
  CudaCall(const CudaDriver &driver, void *stream);
  ~CudaCall();
  CudaCall(const CudaCall &) = delete;
  CudaCall &operator=(const CudaCall &) = delete;

  /// The call in progress on this thread, or null.
  static CudaCall *current();
  /// Records a failure of `what` unless one is recorded; returns whether
  /// `result` is a success.
  bool succeeded(int result, const char *what);
  /// Whether no driver call failed.
  bool ok() const { return error.empty(); }
  /// Throws Error naming the first failure, if any, after `action`.
  void check(const std::string &action) const;

  const CudaDriver &driver;
  void *const stream;

private:
  std::string error;
  CudaCall *previous;
};

/// The mgpu* functions by name, for the JIT's symbol table.
std::vector<std::pair<const char *, void *>> cudaRuntimeSymbols();

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_CUDARUNTIME_H
