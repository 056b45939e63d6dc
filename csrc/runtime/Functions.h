//===- Functions.h - the JIT functions a process has seen -----*- C++ -*-===//
//
// What mlir_jit's kernels share: each function's signature (worked out on
// its first call), its compiled code, and the checks and error messages.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_RUNTIME_FUNCTIONS_H
#define FXMLIR_RUNTIME_FUNCTIONS_H

#include "fxmlir/JIT/Jit.h"

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

namespace fxmlir::runtime {

at::ScalarType scalarType(jit::DType dtype);

/// What the process knows of a JIT function: its signature, and its code
/// once compiled (CPU once, CUDA per device).
struct Function {
  jit::Signature signature;
  std::once_flag cpuCompiled;
  std::shared_ptr<const jit::CompiledFunction> cpu;
  std::mutex cudaMutex;
  std::map<int, std::shared_ptr<const jit::CudaFunction>> cuda;
};

/// The function `name` of `module`, analyzed on first use by the shared Jit.
/// Thread-safe; throws fxmlir::Error.
Function &function(std::string_view module, std::string_view name);

/// Runs `body`, turning fxmlir errors into torch errors naming the function.
template <typename Body>
auto guarded(std::string_view name, Body &&body) -> decltype(body()) {
  try {
    return body();
  } catch (const fxmlir::Error &error) {
    TORCH_CHECK(false, "mlir_jit @", name, ": ", error.what());
  }
}

/// Checks the number and dtypes of `inputs` against the signature.
void checkInputs(std::string_view name, const jit::Signature &signature,
                 at::TensorList inputs);

/// One call's tensors and the compiled code's view of them.
struct Call {
  std::vector<at::Tensor> inputs; // contiguous
  std::vector<at::Tensor> results;
  std::vector<jit::Buffer> inputBuffers, outputBuffers;
};

/// Contiguous copies of `inputs` (where they are not) and results on
/// `device`, shaped and typed as `compiled` infers them; `out`, if given,
/// is the one result (an error unless it has the result's shape and dtype,
/// contiguous, on `device`).
Call prepareCall(std::string_view name, const jit::CompiledFunction &compiled,
                 at::TensorList inputs, at::Device device,
                 const at::Tensor *out = nullptr);

} // namespace fxmlir::runtime

#endif // FXMLIR_RUNTIME_FUNCTIONS_H
