//===- FusedOps.h - torch.ops.fxmlir.*: one glue for every device -*- C++
//-*-===//
//
// Each fused op's kernel function, written once for all devices: check the
// arguments (with the same messages everywhere, symbolic shapes included),
// allocate the result, and, on a real device, hand raw pointers to that
// device's Launcher (FusedOpsCPU.cpp, cuda/FusedOpsCUDA.cu). The Meta kernel
// is the same function stopping before the launch. The functions are named
// after their op (tools/gen_ops.py registers `fusedBiasAddGelu<Device::CPU>`
// for fused_bias_add_gelu on CPU).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_FUSEDOPS_H
#define FXMLIR_OPS_FUSEDOPS_H

#include "../kernels/common/BiasBroadcast.h"
#include "../runtime/MlirJit.h"
#include "Device.h"
#include "../kernels/common/ElementTypes.h"
#include "../kernels/common/Elementwise.h"

#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/string_view.h>

#include <tuple>

namespace fxmlir::ops {

namespace kernels = fxmlir::kernels;

/// Runs kernels on one device; specialized by the device's translation unit:
///   template <typename T, typename Op, typename... Others>
///   static void bias(Op, const T *x, const T *bias, T *out,
///                    kernels::BiasBroadcast, const Others *...);
///   static void randomMask(bool *mask, int64_t numel, double p);
template <Device D> struct Launcher;

//===----------------------------------------------------------------------===//
// Argument checks (FusedOps.cpp)
//===----------------------------------------------------------------------===//

/// Checks x, bias and axis of a bias op; returns axis in [0, x.dim()).
int64_t checkBias(const char *op, const at::Tensor &x, const at::Tensor &bias,
                  int64_t axis);

/// Checks that `other` (named `name`) has x's shape and device, and `dtype`.
void checkLikeX(const char *op, const char *name, const at::Tensor &other,
                const at::Tensor &x, at::ScalarType dtype);

/// Parses gelu's approximate argument: true for "tanh", false for "none".
bool parseApproximate(const char *op, c10::string_view approximate);

void checkDropProbability(double p);

/// How a bias op's kernels index the bias (concrete shapes only).
kernels::BiasBroadcast biasBroadcast(const at::Tensor &x, int64_t axis);

//===----------------------------------------------------------------------===//
// The bias family
//===----------------------------------------------------------------------===//

/// The kernels' element type for a torch scalar type (same layout).
template <typename T> struct KernelTypeOf {
  using type = T;
};
template <> struct KernelTypeOf<at::Half> {
  using type = kernels::Half;
};
template <> struct KernelTypeOf<at::BFloat16> {
  using type = kernels::BFloat16;
};
template <typename T> using KernelType = typename KernelTypeOf<T>::type;

/// An input of a bias op shaped like x: with x's dtype (a gradient) or bool
/// (a mask).
template <typename Element> struct LikeX {
  const char *name;
  at::Tensor tensor;

  void check(const char *op, const at::Tensor &x) const {
    checkLikeX(op, name, tensor, x,
               std::is_same_v<Element, bool> ? at::kBool : x.scalar_type());
  }
  LikeX contiguous() const { return {name, tensor.contiguous()}; }
  template <typename T> const auto *data() const {
    using Type = std::conditional_t<std::is_same_v<Element, bool>, bool, T>;
    return static_cast<const Type *>(tensor.const_data_ptr());
  }
};
using Grad = LikeX<void>;
using Mask = LikeX<bool>;

/// out = element(x + bias, others...) into a new contiguous tensor shaped
/// like x.
template <Device D, typename ElementOp, typename... Others>
at::Tensor runBiasOp(const char *op, const at::Tensor &x,
                     const at::Tensor &bias, int64_t axis, ElementOp element,
                     const Others &...others) {
  axis = checkBias(op, x, bias, axis);
  (others.check(op, x), ...);
  if constexpr (D == Device::Meta) {
    return at::empty_like(x, at::MemoryFormat::Contiguous);
  } else {
    c10::OptionalDeviceGuard guard(x.device());
    at::Tensor xc = x.contiguous(), bc = bias.contiguous();
    std::tuple contiguous{others.contiguous()...};
    at::Tensor result = at::empty_like(xc, at::MemoryFormat::Contiguous);
    kernels::BiasBroadcast shape = biasBroadcast(xc, axis);
    // checkBias already refused other dtypes with the op's name.
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, xc.scalar_type(), "fxmlir bias op", [&] {
          using T = KernelType<scalar_t>;
          std::apply(
              [&](const auto &...inputs) {
                Launcher<D>::bias(element,
                                  static_cast<const T *>(xc.const_data_ptr()),
                                  static_cast<const T *>(bc.const_data_ptr()),
                                  static_cast<T *>(result.mutable_data_ptr()),
                                  shape, inputs.template data<T>()...);
              },
              contiguous);
        });
    return result;
  }
}

/// f(Gelu<tanh>) for gelu's approximate argument.
template <typename F>
auto withGelu(const char *op, c10::string_view approximate, F f) {
  return parseApproximate(op, approximate) ? f(kernels::Gelu<true>{})
                                           : f(kernels::Gelu<false>{});
}

template <Device D>
at::Tensor biasAdd(const at::Tensor &x, const at::Tensor &bias, int64_t axis) {
  return runBiasOp<D>("bias_add", x, bias, axis, kernels::Identity{});
}

template <Device D>
at::Tensor fusedBiasAddGelu(const at::Tensor &x, const at::Tensor &bias,
                            int64_t axis, c10::string_view approximate) {
  constexpr const char *op = "fused_bias_add_gelu";
  return withGelu(op, approximate, [&](auto gelu) {
    return runBiasOp<D>(op, x, bias, axis, kernels::Activate<decltype(gelu)>{});
  });
}

template <Device D>
at::Tensor fusedBiasAddGeluGrad(const at::Tensor &grad, const at::Tensor &x,
                                const at::Tensor &bias, int64_t axis,
                                c10::string_view approximate) {
  constexpr const char *op = "fused_bias_add_gelu_grad";
  return withGelu(op, approximate, [&](auto gelu) {
    return runBiasOp<D>(op, x, bias, axis,
                        kernels::ActivateGrad<decltype(gelu)>{},
                        Grad{"grad", grad});
  });
}

template <Device D>
at::Tensor fusedBiasAddRelu(const at::Tensor &x, const at::Tensor &bias,
                            int64_t axis) {
  return runBiasOp<D>("fused_bias_add_relu", x, bias, axis,
                      kernels::Activate<kernels::Relu>{});
}

template <Device D>
at::Tensor fusedBiasAddReluGrad(const at::Tensor &grad, const at::Tensor &x,
                                const at::Tensor &bias, int64_t axis) {
  return runBiasOp<D>("fused_bias_add_relu_grad", x, bias, axis,
                      kernels::ActivateGrad<kernels::Relu>{},
                      Grad{"grad", grad});
}

template <Device D>
at::Tensor fusedBiasAddSilu(const at::Tensor &x, const at::Tensor &bias,
                            int64_t axis) {
  return runBiasOp<D>("fused_bias_add_silu", x, bias, axis,
                      kernels::Activate<kernels::Silu>{});
}

template <Device D>
at::Tensor fusedBiasAddSiluGrad(const at::Tensor &grad, const at::Tensor &x,
                                const at::Tensor &bias, int64_t axis) {
  return runBiasOp<D>("fused_bias_add_silu_grad", x, bias, axis,
                      kernels::ActivateGrad<kernels::Silu>{},
                      Grad{"grad", grad});
}

template <Device D>
at::Tensor fusedBiasAddMaskScale(const at::Tensor &x, const at::Tensor &bias,
                                 const at::Tensor &mask, int64_t axis,
                                 double scale) {
  return runBiasOp<D>("fused_bias_add_mask_scale", x, bias, axis,
                      kernels::MaskScale{scale}, Mask{"mask", mask});
}

//===----------------------------------------------------------------------===//
// The mask family
//===----------------------------------------------------------------------===//

template <Device D>
at::Tensor randomMaskLike(const at::Tensor &like, double p) {
  checkDropProbability(p);
  at::Tensor mask = at::empty_like(like, like.options().dtype(at::kBool),
                                   at::MemoryFormat::Contiguous);
  if constexpr (D != Device::Meta) {
    c10::OptionalDeviceGuard guard(like.device());
    Launcher<D>::randomMask(mask.mutable_data_ptr<bool>(), mask.numel(), p);
  }
  return mask;
}

} // namespace fxmlir::ops

#endif // FXMLIR_OPS_FUSEDOPS_H
