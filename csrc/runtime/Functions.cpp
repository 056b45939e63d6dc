//===- Functions.cpp - the JIT functions a process has seen ---------------===//

#include "Functions.h"

#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <unordered_map>

using namespace fxmlir;
using namespace fxmlir::runtime;

namespace {
constexpr std::pair<at::ScalarType, jit::DType> kDTypes[] = {
    {at::kBool, jit::DType::Bool},     {at::kByte, jit::DType::UInt8},
    {at::kChar, jit::DType::Int8},     {at::kShort, jit::DType::Int16},
    {at::kInt, jit::DType::Int32},     {at::kLong, jit::DType::Int64},
    {at::kHalf, jit::DType::Float16},  {at::kBFloat16, jit::DType::BFloat16},
    {at::kFloat, jit::DType::Float32}, {at::kDouble, jit::DType::Float64}};
} // namespace

at::ScalarType runtime::scalarType(jit::DType dtype) {
  for (auto [scalar, own] : kDTypes)
    if (own == dtype)
      return scalar;
  TORCH_CHECK(false, "mlir_jit: unknown dtype");
}

namespace {
/// Hashes a function's name where it is held (a lookup copies nothing).
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view name) const {
    return std::hash<std::string_view>{}(name);
  }
};

/// A function of a module (a region's module holds one function).
struct Entry {
  std::string module;
  std::unique_ptr<Function> function;
};
} // namespace

Function &runtime::function(std::string_view module, std::string_view name) {
  // Found by name, then told apart by module text: a call hashes the short
  // name and compares the text once, where a key holding both copied and
  // hashed the text (2 to 5 KB a region) on every call.
  static std::mutex mutex;
  static std::unordered_map<std::string, std::vector<Entry>, NameHash,
                            std::equal_to<>>
      functions;
  std::lock_guard<std::mutex> lock(mutex);
  auto named = functions.find(name);
  if (named == functions.end())
    named = functions.emplace(std::string(name), std::vector<Entry>()).first;
  for (Entry &entry : named->second)
    if (entry.module == module)
      return *entry.function;
  Entry entry{std::string(module), std::make_unique<Function>()};
  entry.function->signature =
      jit::Jit::shared().analyze(entry.module, std::string(name));
  return *named->second.emplace_back(std::move(entry)).function;
}

void runtime::checkInputs(std::string_view name,
                          const jit::Signature &signature,
                          at::TensorList inputs) {
  TORCH_CHECK(inputs.size() == signature.inputs.size(), "mlir_jit @", name,
              " takes ", signature.inputs.size(), " inputs, got ",
              inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    at::ScalarType expected = scalarType(signature.inputs[i].dtype);
    TORCH_CHECK(inputs[i].scalar_type() == expected, "mlir_jit @", name,
                ": input ", i, " must be ", expected, ", got ",
                inputs[i].scalar_type());
  }
}

Call runtime::prepareCall(std::string_view name,
                          const jit::CompiledFunction &compiled,
                          at::TensorList inputs, at::Device device,
                          const at::Tensor *out) {
  // Sized up front and moved, not copied: a region of small tensors costs
  // its call's allocations more than its loops.
  Call call;
  call.inputs.reserve(inputs.size());
  call.inputBuffers.reserve(inputs.size());
  std::vector<std::vector<int64_t>> shapes;
  shapes.reserve(inputs.size());
  for (const at::Tensor &input : inputs) {
    call.inputs.push_back(input.contiguous());
    shapes.push_back(input.sizes().vec());
  }
  std::vector<std::vector<int64_t>> resultShapes =
      guarded(name, [&] { return compiled.resultShapes(shapes); });
  for (size_t i = 0; i < inputs.size(); ++i)
    call.inputBuffers.push_back(
        {call.inputs[i].data_ptr(), std::move(shapes[i])});
  if (out) {
    TORCH_CHECK(resultShapes.size() == 1, "mlir_jit_into @", name,
                ": the function has ", resultShapes.size(),
                " results, not one to write into out");
    at::ScalarType dtype = scalarType(compiled.signature().results[0].dtype);
    TORCH_CHECK(out->sizes() == at::IntArrayRef(resultShapes[0]) &&
                    out->scalar_type() == dtype && out->device() == device &&
                    out->is_contiguous(),
                "mlir_jit_into @", name, ": out must be a contiguous ", dtype,
                " tensor of shape ", at::IntArrayRef(resultShapes[0]), " on ",
                device, ", got ", out->scalar_type(), " ", out->sizes(),
                out->is_contiguous() ? "" : " (not contiguous)", " on ",
                out->device());
    call.results.push_back(*out);
    call.outputBuffers.push_back({out->data_ptr(), std::move(resultShapes[0])});
    return call;
  }
  call.results.reserve(resultShapes.size());
  call.outputBuffers.reserve(resultShapes.size());
  for (size_t i = 0; i < resultShapes.size(); ++i) {
    call.results.push_back(at::empty(
        resultShapes[i], at::TensorOptions().device(device).dtype(scalarType(
                             compiled.signature().results[i].dtype))));
    call.outputBuffers.push_back(
        {call.results.back().data_ptr(), std::move(resultShapes[i])});
  }
  return call;
}
