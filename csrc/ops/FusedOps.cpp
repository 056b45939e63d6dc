//===- FusedOps.cpp - argument checks, schemas and Meta kernels -----------===//

#include "FusedOps.h"

#include "fxmlir/Support/Dims.h"

#include <c10/core/SymBool.h>
#include <torch/library.h>

#include <string>
#include <utility>

namespace fxmlir::ops {

void checkFloating(const char *op, at::ScalarType dtype) {
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kHalf ||
                  dtype == at::kBFloat16 || dtype == at::kDouble,
              op, ": unsupported dtype ", dtype,
              " (float32, float16, bfloat16, float64 are supported)");
}

int64_t checkBias(const char *op, const at::Tensor &x, const at::Tensor &bias,
                  int64_t axis) {
  std::optional<int64_t> dim = normalizeDim(axis, x.dim());
  TORCH_CHECK(dim, op, ": axis ", axis, " is out of range for x with ", x.dim(),
              " dimensions");
  axis = *dim;
  TORCH_CHECK(bias.dim() == 1, op, ": bias must be 1-D, got ", bias.dim(),
              "-D bias");
  TORCH_SYM_CHECK(bias.sym_size(0).sym_eq(x.sym_size(axis)), op, ": bias has ",
                  bias.sym_size(0), " elements but x.size(", axis, ") is ",
                  x.sym_size(axis));
  at::ScalarType dtype = x.scalar_type();
  checkFloating(op, dtype);
  TORCH_CHECK(bias.scalar_type() == dtype, op, ": dtype mismatch: bias is ",
              bias.scalar_type(), " but x is ", dtype);
  TORCH_CHECK(bias.device() == x.device(), op, ": bias is on ", bias.device(),
              " but x is on ", x.device());
  return axis;
}

void checkLikeX(const char *op, const char *name, const at::Tensor &other,
                const at::Tensor &x, at::ScalarType dtype) {
  TORCH_CHECK(other.scalar_type() == dtype, op, ": ", name, " must be ", dtype,
              ", got ", other.scalar_type());
  TORCH_CHECK(other.dim() == x.dim(), op, ": ", name, " shape ",
              other.sym_sizes(), " does not match x shape ", x.sym_sizes());
  for (int64_t d = 0; d < x.dim(); ++d)
    TORCH_SYM_CHECK(other.sym_size(d).sym_eq(x.sym_size(d)), op, ": ", name,
                    " shape ", other.sym_sizes(), " does not match x shape ",
                    x.sym_sizes());
  TORCH_CHECK(other.device() == x.device(), op, ": ", name, " is on ",
              other.device(), " but x is on ", x.device());
}

bool parseApproximate(const char *op, c10::string_view approximate) {
  TORCH_CHECK(approximate == "none" || approximate == "tanh", op,
              ": approximate must be 'none' or 'tanh', got '", approximate,
              "'");
  return approximate == "tanh";
}

Activation parseActivation(const char *op, c10::string_view activation) {
  static constexpr std::pair<const char *, Activation> kNames[] = {
#define FXMLIR_ACTIVATION_NAME(enumerator, name, kernel)                        \
  {name, Activation::enumerator},
      FXMLIR_ACTIVATIONS(FXMLIR_ACTIVATION_NAME)
#undef FXMLIR_ACTIVATION_NAME
  };
  std::string accepted;
  for (auto [name, value] : kNames) {
    if (activation == name)
      return value;
    accepted += (accepted.empty() ? "'" : ", '") + std::string(name) + "'";
  }
  TORCH_CHECK(false, op, ": activation must be one of ", accepted, ", got '",
              activation, "'");
}

void checkDropProbability(const char *op, double p) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, op, ": p must be in [0, 1), got ", p);
}

void checkPackedMask(const char *op, const at::Tensor &mask,
                     const at::Tensor &like) {
  TORCH_CHECK(mask.scalar_type() == at::kByte, op,
              ": mask must be a packed uint8 mask, got ", mask.scalar_type());
  TORCH_CHECK(mask.dim() == 1, op, ": mask must be 1-D, got shape ",
              mask.sym_sizes());
  TORCH_SYM_CHECK(mask.sym_size(0).sym_eq((like.sym_numel() + 7) / 8), op,
                  ": mask has ", mask.sym_size(0), " bytes for ",
                  like.sym_numel(), " elements (needs one bit each)");
  TORCH_CHECK(mask.device() == like.device(), op, ": mask is on ",
              mask.device(), " but its tensor is on ", like.device());
}

void checkLinear(const char *op, const at::Tensor &x,
                 const at::Tensor &weight) {
  TORCH_CHECK(x.dim() >= 1, op, ": x must have at least 1 dimension");
  TORCH_CHECK(weight.dim() == 2, op, ": weight must be 2-D, got ", weight.dim(),
              "-D weight");
  TORCH_SYM_CHECK(weight.sym_size(1).sym_eq(x.sym_size(-1)), op,
                  ": weight has ", weight.sym_size(1),
                  " input features but x.size(-1) is ", x.sym_size(-1));
  at::ScalarType dtype = x.scalar_type();
  checkFloating(op, dtype);
  TORCH_CHECK(weight.scalar_type() == dtype, op, ": dtype mismatch: weight is ",
              weight.scalar_type(), " but x is ", dtype);
  TORCH_CHECK(weight.device() == x.device(), op, ": weight is on ",
              weight.device(), " but x is on ", x.device());
}

void checkLinearTensor(const char *op, const char *name,
                       const at::Tensor &tensor, const at::Tensor &x,
                       c10::SymIntArrayRef expected) {
  TORCH_CHECK(tensor.dim() == static_cast<int64_t>(expected.size()), op, ": ",
              name, " shape ", tensor.sym_sizes(), " is not ", expected);
  for (int64_t d = 0; d < tensor.dim(); ++d)
    TORCH_SYM_CHECK(tensor.sym_size(d).sym_eq(expected[d]), op, ": ", name,
                    " shape ", tensor.sym_sizes(), " is not ", expected);
  TORCH_CHECK(tensor.scalar_type() == x.scalar_type(), op, ": ", name,
              " must be ", x.scalar_type(), ", got ", tensor.scalar_type());
  TORCH_CHECK(tensor.device() == x.device(), op, ": ", name, " is on ",
              tensor.device(), " but x is on ", x.device());
}

kernels::BiasBroadcast biasBroadcast(const at::Tensor &x, int64_t axis) {
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.dim(); ++d)
    inner *= x.size(d);
  return {x.numel(), x.size(axis), inner};
}

} // namespace fxmlir::ops

// mlir_jit registers with its kernels, in libfxmlir_jit_ops (csrc/runtime).
#include "FusedOpsRegistration.inc"
