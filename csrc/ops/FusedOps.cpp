//===- FusedOps.cpp - Schemas, checks and Meta kernels of torch.ops.fxmlir ===//

#include "FusedOps.h"

#include <ATen/ATen.h>
#include <c10/core/SymBool.h>
#include <torch/library.h>

namespace fxmlir::ops {

int64_t checkBias(const char *op, const at::Tensor &x, const at::Tensor &bias,
                  int64_t axis) {
  int64_t dim = x.dim();
  TORCH_CHECK(axis >= -dim && axis < dim, op, ": axis ", axis,
              " is out of range for x with ", dim, " dimensions");
  if (axis < 0)
    axis += dim;
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

BiasExtent biasExtent(const at::Tensor &x, int64_t axis) {
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.dim(); ++d)
    inner *= x.size(d);
  return {x.size(axis), inner};
}

namespace {

// Outputs are contiguous whatever the input strides: the real kernels compute
// on contiguous copies.
at::Tensor contiguousLike(const at::Tensor &x) {
  return at::empty_like(x, at::MemoryFormat::Contiguous);
}

at::Tensor biasAddMeta(const at::Tensor &x, const at::Tensor &bias,
                       int64_t axis) {
  checkBias("bias_add", x, bias, axis);
  return contiguousLike(x);
}

at::Tensor biasAddGeluMeta(const at::Tensor &x, const at::Tensor &bias,
                           int64_t axis, c10::string_view approximate) {
  checkBias("fused_bias_add_gelu", x, bias, axis);
  parseApproximate("fused_bias_add_gelu", approximate);
  return contiguousLike(x);
}

at::Tensor biasAddGeluGradMeta(const at::Tensor &grad, const at::Tensor &x,
                               const at::Tensor &bias, int64_t axis,
                               c10::string_view approximate) {
  constexpr const char *op = "fused_bias_add_gelu_grad";
  checkBias(op, x, bias, axis);
  checkLikeX(op, "grad", grad, x, x.scalar_type());
  parseApproximate(op, approximate);
  return contiguousLike(x);
}

at::Tensor randomMaskLikeMeta(const at::Tensor &like, double p) {
  checkDropProbability(p);
  return at::empty_like(like, like.options().dtype(at::kBool),
                        at::MemoryFormat::Contiguous);
}

at::Tensor biasAddMaskScaleMeta(const at::Tensor &x, const at::Tensor &bias,
                                const at::Tensor &mask, int64_t axis,
                                double /*scale*/) {
  checkBias("fused_bias_add_mask_scale", x, bias, axis);
  checkLikeX("fused_bias_add_mask_scale", "mask", mask, x, at::kBool);
  return contiguousLike(x);
}

} // namespace
} // namespace fxmlir::ops

TORCH_LIBRARY(fxmlir, m) {
  m.def("bias_add(Tensor x, Tensor bias, int axis) -> Tensor");
  m.def("fused_bias_add_gelu(Tensor x, Tensor bias, int axis, "
        "str approximate=\"none\") -> Tensor");
  m.def("fused_bias_add_gelu_grad(Tensor grad, Tensor x, Tensor bias, "
        "int axis, str approximate=\"none\") -> Tensor");
  m.def("random_mask_like(Tensor like, float p) -> Tensor",
        {at::Tag::nondeterministic_seeded});
  m.def("fused_bias_add_mask_scale(Tensor x, Tensor bias, Tensor mask, "
        "int axis, float scale) -> Tensor");
}

TORCH_LIBRARY_IMPL(fxmlir, Meta, m) {
  using namespace fxmlir::ops;
  m.impl("bias_add", biasAddMeta);
  m.impl("fused_bias_add_gelu", biasAddGeluMeta);
  m.impl("fused_bias_add_gelu_grad", biasAddGeluGradMeta);
  m.impl("random_mask_like", randomMaskLikeMeta);
  m.impl("fused_bias_add_mask_scale", biasAddMaskScaleMeta);
}
