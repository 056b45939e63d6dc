//===- WideProducts.h - 16-bit CPU products as float32 GEMMs ----*- C++ -*-===//
//
// The fused ops' own matrix products, for CPUs whose ATen has no fast GEMM
// for a 16-bit float type: where oneDNN lacks it (x86 without AVX-512),
// ATen's fallback is ~50x slower than its float32 GEMM, so such a product
// is a float32 GEMM of the operands' casts, rounded once to their type, as
// a 16-bit GEMM sums exact products in float32 and rounds once. The graph's
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

/// bias + a @ b (a @ b without a bias), in a's dtype.
inline at::Tensor product(const at::Tensor &a, const at::Tensor &b,
                          const std::optional<at::Tensor> &bias = std::nullopt) {
  if (!widensProducts(a))
    return bias ? at::addmm(*bias, a, b) : at::mm(a, b);
  at::Tensor wa = a.to(at::kFloat), wb = b.to(at::kFloat);
  at::Tensor wide =
      bias ? at::addmm(bias->to(at::kFloat), wa, wb) : at::mm(wa, wb);
  return wide.to(a.scalar_type());
}

/// out = bias + a @ b (a @ b without a bias); `out` has a's dtype.
inline void productInto(at::Tensor &out, const at::Tensor &a,
                        const at::Tensor &b,
                        const std::optional<at::Tensor> &bias = std::nullopt) {
  if (widensProducts(a))
    out.copy_(product(a, b, bias));
  else if (bias)
    at::addmm_out(out, *bias, a, b);
  else
    at::mm_out(out, a, b);
}

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_WIDEPRODUCTS_H
