//===- MlirJit.h - torch.ops.fxmlir.mlir_jit's kernels ------------*- C++ -*-===//

#ifndef FXMLIR_RUNTIME_MLIRJIT_H
#define FXMLIR_RUNTIME_MLIRJIT_H

#include "../ops/Device.h"

#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>

#include <vector>

namespace fxmlir::ops {

/// Runs `function` of `module` (a region fxmlir-outline-jit-regions
/// outlined) on `inputs`; defined for Meta and CPU (runtime/MlirJit.cpp)
/// and, when torch has CUDA, CUDA (runtime/MlirJitCUDA.cu).
template <Device D>
std::vector<at::Tensor> mlirJit(c10::string_view module,
                                c10::string_view function,
                                at::TensorList inputs);

/// mlirJit of a function with one result, written into `out` (which may be
/// one of `inputs`: the function is pointwise) and returned.
template <Device D>
at::Tensor &mlirJitInto(c10::string_view module, c10::string_view function,
                        at::TensorList inputs, at::Tensor &out);

} // namespace fxmlir::ops

#endif // FXMLIR_RUNTIME_MLIRJIT_H
