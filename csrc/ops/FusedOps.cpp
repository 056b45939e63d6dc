//===- FusedOps.cpp - argument checks, schemas and Meta kernels -----------===//

#include "FusedOps.h"

#include "fxmlir/Support/Dims.h"

#include <c10/core/SymBool.h>
#include <torch/library.h>

namespace fxmlir::ops {

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
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kHalf ||
                  dtype == at::kBFloat16 || dtype == at::kDouble,
              op, ": unsupported dtype ", dtype,
              " (float32, float16, bfloat16, float64 are supported)");
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

void checkDropProbability(double p) {
  TORCH_CHECK(p >= 0.0 && p < 1.0,
              "random_mask_like: p must be in [0, 1), got ", p);
}

kernels::BiasBroadcast biasBroadcast(const at::Tensor &x, int64_t axis) {
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.dim(); ++d)
    inner *= x.size(d);
  return {x.numel(), x.size(axis), inner};
}

} // namespace fxmlir::ops

#define FXMLIR_REGISTER_SCHEMAS
#define FXMLIR_REGISTER_Meta
#include "FusedOpsRegistration.inc"
