//===- MlirJit.cpp - torch.ops.fxmlir.mlir_jit: calling JIT regions -------===//
//
// `mlir_jit(str module, str function, Tensor[] inputs) -> Tensor[]` runs
// `function` of `module` (a region outlined by fxmlir-outline-jit-regions)
// on `inputs`. The first call for a function works out its signature and
// compiles it once for every batch size (dim 0 of the row inputs dynamic);
// the Meta kernel only needs the signature, to infer the result shapes.
// The CPU kernel splits rows across at::parallel_for threads, in slices
// small enough that row reductions re-read their rows from cache; a sum over
// the rows (a bias gradient) is summed per slice and the slices added up,
// and a value the rows do not reach is computed whole by every slice.
//
//===----------------------------------------------------------------------===//

#include "MlirJit.h"
#include "Functions.h"
#include "RowSlices.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <string_view>

namespace fxmlir::runtime {
namespace {

using jit::CompiledFunction;
using jit::Signature;

const CompiledFunction &compiledCpu(Function &function, std::string_view module,
                                    std::string_view name) {
  std::call_once(function.cpuCompiled, [&] {
    jit::Jit &jit = jit::Jit::shared();
    function.cpu = jit.compileCpu(std::string(module), std::string(name),
                                  function.signature.inputs);
    // What the JIT worked around in this compile (a cache entry rebuilt, a
    // cache directory it cannot write); the round trip's compiles warn in
    // Python (_C.jit_compile_cpu). Torch shows these in Python when its
    // caller handles warnings (autograd functions do), else on stderr.
    for (const std::string &warning : jit.takeWarnings())
      TORCH_WARN(warning);
  });
  return *function.cpu;
}

std::vector<at::Tensor> mlirJitMeta(c10::string_view module,
                                    c10::string_view name,
                                    at::TensorList inputs) {
  const Signature &signature = guarded(name, [&]() -> const Signature & {
    return function(module, name).signature;
  });
  checkInputs(name, signature, inputs);
  std::vector<at::Tensor> results;
  for (const jit::ResultSpec &result : signature.results) {
    std::vector<c10::SymInt> shape;
    for (const jit::DimSource &dim : result.dims)
      shape.push_back(dim.input >= 0 ? inputs[dim.input].sym_size(dim.dim)
                                     : c10::SymInt(dim.size));
    at::TensorOptions options =
        inputs.empty() ? at::TensorOptions(at::kMeta) : inputs[0].options();
    results.push_back(
        at::empty_symint(shape, options.dtype(scalarType(result.dtype))));
  }
  return results;
}

std::vector<at::Tensor> mlirJitCpu(c10::string_view module,
                                   c10::string_view name,
                                   at::TensorList inputs,
                                   const at::Tensor *out = nullptr) {
  Function &function = guarded(
      name, [&]() -> Function & { return runtime::function(module, name); });
  checkInputs(name, function.signature, inputs);
  const CompiledFunction &compiled =
      guarded(name, [&]() -> const CompiledFunction & {
        return compiledCpu(function, module, name);
      });

  for (const at::Tensor &input : inputs)
    TORCH_CHECK(input.device().is_cpu(), "mlir_jit @", name,
                ": CPU kernel got a tensor on ", input.device());
  // A row slice reads its rows of the inputs before writing those of the
  // results: `out` may be a pointwise function's input.
  Call call = prepareCall(name, compiled, inputs, at::kCPU, out);
  std::vector<at::Tensor> results = std::move(call.results);

  // All rows at once, where splitting them would not pay.
  auto runUnsplit = [&] {
    guarded(name, [&] { compiled.run(call.inputBuffers, call.outputBuffers); });
    return std::move(results);
  };
  const Signature &signature = compiled.signature();
  int64_t rows = signature.rowsSplittable
                     ? guarded(name, [&] {
                         return compiled.rowCount(call.inputBuffers);
                       })
                     : 0;
  if (rows < 2)
    return runUnsplit();
  int64_t rowElements = 1, rowBytes = 1;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!signature.rowInputs[i])
      continue;
    const at::Tensor &input = call.inputs[i];
    rowElements = std::max(rowElements, input.numel() / rows);
    rowBytes = std::max(rowBytes, input.numel() / rows *
                                      static_cast<int64_t>(input.itemsize()));
  }
  // Every slice computes the whole results (values the rows do not reach,
  // as an attention mask made from a boolean one): split only for threads
  // to share the rows, and where such results are no larger than a row, so
  // that no slice does much beyond its rows (one thread running GPT-2's
  // mask region in two slices took 0.093 ms, unsplit 0.065).
  int64_t wholeElements = 0;
  for (size_t i = 0; i < results.size(); ++i)
    if (signature.isWholeResult(i))
      wholeElements += results[i].numel();
  if (wholeElements > rowElements ||
      (wholeElements > 0 && at::get_num_threads() == 1))
    return runUnsplit();
  RowSlices split =
      rowSlices(rows, rowElements, rowBytes, at::get_num_threads());
  // One slice: no partial sums to allocate and add up, no task to hand out.
  if (split.count == 1)
    return runUnsplit();

  // A sum over the rows gets one partial sum per slice, added up at the
  // end; of a whole result's, slice 0's is the result, the others' go to
  // scratch.
  std::vector<at::Tensor> partials(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    bool summed = signature.summedResults[i];
    if (!summed && !signature.isWholeResult(i))
      continue;
    std::vector<int64_t> shape = {summed ? split.count : split.count - 1};
    shape.insert(shape.end(), results[i].sizes().begin(),
                 results[i].sizes().end());
    partials[i] = at::empty(shape, results[i].options());
  }
  guarded(name, [&] {
    at::parallel_for(0, split.count, split.grainSlices,
                     [&](int64_t begin, int64_t end) {
      std::vector<jit::Buffer> outputs = call.outputBuffers;
      for (int64_t index = begin; index < end; ++index) {
        for (size_t i = 0; i < outputs.size(); ++i) {
          if (!partials[i].defined())
            continue;
          int64_t slot = signature.summedResults[i] ? index : index - 1;
          outputs[i].data =
              slot < 0 ? results[i].data_ptr()
                       : static_cast<char *>(partials[i].data_ptr()) +
                             slot * results[i].nbytes();
        }
        compiled.runRows(call.inputBuffers, outputs, split.begin(index),
                         split.begin(index + 1));
      }
    });
  });
  for (size_t i = 0; i < results.size(); ++i)
    if (signature.summedResults[i])
      at::sum_out(results[i], partials[i], 0);
  return results;
}

} // namespace
} // namespace fxmlir::runtime

// The kernels the generated MlirJitRegistration.inc names.
template <>
std::vector<at::Tensor> fxmlir::ops::mlirJit<fxmlir::ops::Device::Meta>(
    c10::string_view module, c10::string_view function, at::TensorList inputs) {
  return runtime::mlirJitMeta(module, function, inputs);
}

template <>
std::vector<at::Tensor> fxmlir::ops::mlirJit<fxmlir::ops::Device::CPU>(
    c10::string_view module, c10::string_view function, at::TensorList inputs) {
  return runtime::mlirJitCpu(module, function, inputs);
}

template <>
at::Tensor &fxmlir::ops::mlirJitInto<fxmlir::ops::Device::Meta>(
    c10::string_view module, c10::string_view function, at::TensorList inputs,
    at::Tensor &out) {
  std::vector<at::Tensor> results =
      runtime::mlirJitMeta(module, function, inputs);
  TORCH_CHECK(results.size() == 1 && results[0].dim() == out.dim() &&
                  results[0].scalar_type() == out.scalar_type(),
              "mlir_jit_into @", function, ": out must have the one result's "
              "rank and dtype");
  return out;
}

template <>
at::Tensor &fxmlir::ops::mlirJitInto<fxmlir::ops::Device::CPU>(
    c10::string_view module, c10::string_view function, at::TensorList inputs,
    at::Tensor &out) {
  runtime::mlirJitCpu(module, function, inputs, &out);
  return out;
}

// mlir_jit's schema and Meta and CPU kernels (CUDA: MlirJitCUDA.cu): this
// library, which needs the compiler, registers the Jit family alone.
#include "MlirJitRegistration.inc"
