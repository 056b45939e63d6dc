//===- WideProducts.h - 16-bit CPU products as float32 GEMMs ----*- C++ -*-===//
//
// The fused ops' own matrix products, for CPUs whose ATen has no fast GEMM
// for a 16-bit float type: where oneDNN lacks it (x86 without AVX-512),
// ATen's fallback is ~50x slower than its float32 GEMM, so such a product
// is a float32 GEMM of the operands' casts, rounded once to their type, as
// a 16-bit GEMM sums exact products in float32 and rounds once; an operand
// that several products read is cast once (productOperand). The graph's
// own products get the same treatment from fxmlir-widen-cpu-products, which
// python/fxmlir/cpu_products.py turns on by the same ATen query.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_WIDEPRODUCTS_H
#define FXMLIR_OPS_WIDEPRODUCTS_H

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>

namespace fxmlir::ops {

namespace wide_products {

/// ATen's answer to `op` (mkldnn::_is_mkldnn_bf16_supported and
/// _fp16_supported: whether oneDNN has the type's GEMM on this CPU); no
/// when torch was built without oneDNN.
inline bool askAten(const char *op) {
  auto handle = c10::Dispatcher::singleton().findSchema({op, ""});
  return handle && handle->typed<bool()>().call();
}

} // namespace wide_products

/// Whether products of `t`'s dtype on `t`'s device are float32 GEMMs here.
inline bool widensProducts(const at::Tensor &t) {
  namespace wp = wide_products;
  if (!t.is_cpu())
    return false;
  static const bool bf16 = wp::askAten("mkldnn::_is_mkldnn_bf16_supported");
  static const bool f16 = wp::askAten("mkldnn::_is_mkldnn_fp16_supported");
  bool oneDnn = at::globalContext().userEnabledMkldnn();
  switch (t.scalar_type()) {
  case at::kBFloat16:
    return !(oneDnn && bf16);
  case at::kHalf:
    return !(oneDnn && f16);
  default:
    return false;
  }
}

/// `t` as products read it: its float32 cast where products of its dtype
/// widen, else itself. Cast once, an operand serves every product that
/// reads it (the fused loss's x in each block, a block's weight in two).
inline at::Tensor productOperand(const at::Tensor &t) {
  return widensProducts(t) ? t.to(at::kFloat) : t;
}

/// out = bias + a @ b (a @ b without a bias) for operands from
/// productOperand, rounded once to `dtype` (the product's type) as its GEMM
/// rounds; `out` is of `dtype` or wider (a float32 weight's gradient takes
/// its 16-bit product).
inline void productInto(at::Tensor &out, const at::Tensor &a,
                        const at::Tensor &b, at::ScalarType dtype,
                        const std::optional<at::Tensor> &bias = std::nullopt) {
  if (a.scalar_type() != out.scalar_type()) {
    out.copy_(bias ? at::addmm(bias->to(a.scalar_type()), a, b)
                   : at::mm(a, b));
    return;
  }
  if (bias)
    at::addmm_out(out, bias->to(a.scalar_type()), a, b);
  else
    at::mm_out(out, a, b);
  if (dtype != out.scalar_type()) // widened: the 16-bit product's rounding
    out.copy_(out.to(dtype));
}

/// The same into a new tensor of `dtype`.
inline at::Tensor product(const at::Tensor &a, const at::Tensor &b,
                          at::ScalarType dtype,
                          const std::optional<at::Tensor> &bias = std::nullopt) {
  at::Tensor wide = bias ? at::addmm(bias->to(a.scalar_type()), a, b)
                         : at::mm(a, b);
  return wide.to(dtype);
}

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_WIDEPRODUCTS_H
