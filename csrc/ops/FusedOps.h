//===- FusedOps.h - torch.ops.fxmlir.*: one glue for every device -*- C++
//-*-===//
//
// Each fused op's kernel function, written once for all devices: check the
// arguments (with the same messages everywhere, symbolic shapes included),
// allocate the result, and, on a real device, hand raw pointers to that
// device's Launcher (LauncherCPU.h, cuda/FusedOpsCUDA.cu). The Meta kernel
// is the same function stopping before the launch. The functions are named
// after their op (tools/gen_ops.py registers `fusedBiasAct<Device::CPU>`
// for fused_bias_act on CPU).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_OPS_FUSEDOPS_H
#define FXMLIR_OPS_FUSEDOPS_H

#include "../kernels/common/BiasBroadcast.h"
#include "Activations.inc"
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
///   // out = op(x + bias, keep, residual...) with the keep flags drawn
///   // inside; mask: packed uint8_t[] or bool[].
///   template <bool Packed, typename T, typename Op, typename... Residual>
///   static void biasDropout(Op, const T *x, const T *bias, T *out,
///                           void *mask, kernels::BiasBroadcast, double p,
///                           const Residual *...);
///   template <typename T>
///   static void packedMaskScale(const T *grad, const uint8_t *mask, T *out,
///                               int64_t numel, double scale);
///   // On 2-D contiguous x [M, K] and preallocated pre, y [M, N]:
///   static void linearGelu(const at::Tensor &x, const at::Tensor &weight,
///                          const at::Tensor &bias, bool tanh,
///                          at::Tensor &pre, at::Tensor &y);
///   // grad_weight = grad^T @ x and grad_bias = sum of grad's rows, on
///   // 2-D contiguous grad [M, N] and x [M, K].
///   static void weightBiasGrad(const at::Tensor &grad, const at::Tensor &x,
///                              at::Tensor &gradWeight, at::Tensor &gradBias);
///   // grad = gelu_backward(a @ b, pre) and grad_bias = sum of its rows,
///   // on 2-D contiguous a [M, J], pre and grad [M, N], and b [J, N].
///   static void mmGeluGrad(const at::Tensor &a, const at::Tensor &b,
///                          const at::Tensor &pre, bool tanh, at::Tensor &grad,
///                          at::Tensor &gradBias);
///   // to[i] = from[i] in to[i]'s dtype (same sizes and strides).
///   static void castTensors(at::TensorList from, at::TensorList to);
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

/// What the bias ops apply to x + bias (fused_ops.py's ACTIVATIONS).
enum class Activation {
#define FXMLIR_ACTIVATION_ENUMERATOR(enumerator, name, kernel) enumerator,
  FXMLIR_ACTIVATIONS(FXMLIR_ACTIVATION_ENUMERATOR)
#undef FXMLIR_ACTIVATION_ENUMERATOR
};

/// Parses an `activation` argument; a torch error names the accepted values.
Activation parseActivation(const char *op, c10::string_view activation);

/// f(Act{}) for the element function Act of `activation`.
template <typename F> auto withActivation(Activation activation, F f) {
  switch (activation) {
#define FXMLIR_ACTIVATION_CASE(enumerator, name, kernel)                        \
  case Activation::enumerator:                                                 \
    return f(kernels::kernel{});
    FXMLIR_ACTIVATIONS(FXMLIR_ACTIVATION_CASE)
#undef FXMLIR_ACTIVATION_CASE
  }
  TORCH_CHECK(false, "unknown activation ", static_cast<int>(activation));
}

void checkDropProbability(const char *op, double p);

/// Checks a packed mask (uint8, 1-D, ceil(numel / 8) bytes) for `like`.
void checkPackedMask(const char *op, const at::Tensor &mask,
                     const at::Tensor &like);

/// Checks that the fused kernels take `dtype` (f32, f16, bf16, f64).
void checkFloating(const char *op, at::ScalarType dtype);

/// Checks x [..., K] and weight [N, K]: floating point, one dtype and
/// device.
void checkLinear(const char *op, const at::Tensor &x, const at::Tensor &weight);

/// Checks that `tensor` (named `name`) has the sizes `expected`, x's dtype
/// and device.
void checkLinearTensor(const char *op, const char *name,
                       const at::Tensor &tensor, const at::Tensor &x,
                       c10::SymIntArrayRef expected);

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

template <Device D>
at::Tensor biasAdd(const at::Tensor &x, const at::Tensor &bias, int64_t axis) {
  return runBiasOp<D>("bias_add", x, bias, axis, kernels::Identity{});
}

template <Device D>
at::Tensor fusedBiasAct(const at::Tensor &x, const at::Tensor &bias,
                        int64_t axis, c10::string_view activation) {
  constexpr const char *op = "fused_bias_act";
  return withActivation(parseActivation(op, activation), [&](auto act) {
    return runBiasOp<D>(op, x, bias, axis, kernels::Activate<decltype(act)>{});
  });
}

template <Device D>
at::Tensor fusedBiasActGrad(const at::Tensor &grad, const at::Tensor &x,
                            const at::Tensor &bias, int64_t axis,
                            c10::string_view activation) {
  constexpr const char *op = "fused_bias_act_grad";
  return withActivation(parseActivation(op, activation), [&](auto act) {
    return runBiasOp<D>(op, x, bias, axis,
                        kernels::ActivateGrad<decltype(act)>{},
                        Grad{"grad", grad});
  });
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

/// The keep mask eager's dropout of a tensor like `like` (its shape, dtype
/// and layout) draws, as a contiguous bool tensor, drawn by eager's own ATen
/// calls so that torch's generator gives the same bits and is left where
/// eager leaves it: at::dropout on CPU is `empty_like(input).bernoulli_(1 -
/// p)`, on CUDA at::native_dropout (one fused Philox kernel whose draw
/// depends on the input's size and alignment, which a fresh tensor like
/// `like` shares with eager's input). p = 0 and empty tensors draw nothing,
/// as in eager.
template <Device D>
at::Tensor eagerKeepMask(const at::Tensor &like, double p) {
  if (p == 0.0 || like.numel() == 0)
    return at::ones_like(like, like.options().dtype(at::kBool),
                         at::MemoryFormat::Contiguous);
  c10::OptionalDeviceGuard guard(like.device());
  at::Tensor keep;
  if constexpr (D == Device::CUDA)
    keep = std::get<1>(at::native_dropout(at::empty_like(like), p, true));
  else
    keep = at::empty_like(like).bernoulli_(1.0 - p).to(at::kBool);
  return keep.contiguous();
}

template <Device D>
at::Tensor randomMaskLike(const at::Tensor &like, double p,
                          std::optional<bool> eagerRandom) {
  checkDropProbability("random_mask_like", p);
  if constexpr (D != Device::Meta) {
    if (eagerRandom.value_or(false))
      return eagerKeepMask<D>(like, p);
  }
  at::Tensor mask = at::empty_like(like, like.options().dtype(at::kBool),
                                   at::MemoryFormat::Contiguous);
  if constexpr (D != Device::Meta) {
    c10::OptionalDeviceGuard guard(like.device());
    Launcher<D>::randomMask(mask.mutable_data_ptr<bool>(), mask.numel(), p);
  }
  return mask;
}

//===----------------------------------------------------------------------===//
// The dropout and packed-mask families
//===----------------------------------------------------------------------===//

/// Bytes of a packed mask for `like`: one bit per element.
inline c10::SymInt packedMaskBytes(const at::Tensor &like) {
  return (like.sym_numel() + 7) / 8;
}

/// The element op that applies Act, then `then` (a dropout after GELU).
template <typename Act, typename Then>
kernels::ActivateThen<Act, Then> activateThen(Act, Then then) {
  return {then};
}

/// A bool mask packed at 1 bit per element (element i in bit i % 8 of byte
/// i / 8), by ATen ops on its device.
inline at::Tensor packMask(const at::Tensor &keep) {
  int64_t numel = keep.numel();
  at::Tensor flat = keep.reshape({-1}).to(at::kByte);
  flat = at::constant_pad_nd(flat, {0, (8 - numel % 8) % 8});
  at::Tensor weights = at::tensor({1, 2, 4, 8, 16, 32, 64, 128},
                                  keep.options().dtype(at::kByte));
  // The weighted sum of a byte's 8 flags fits in uint8 (at most 255).
  return flat.view({-1, 8}).mul(weights).sum(1, false, at::kByte);
}

/// fused_bias_dropout_add with eager's mask (eager_random): the mask is
/// drawn as eager draws it, then one bias-op pass computes
/// residual + act(x + bias) * keep * scale from it.
template <Device D, typename Act>
std::tuple<at::Tensor, at::Tensor>
biasDropoutEagerMask(const char *op, const at::Tensor &x,
                     const at::Tensor &bias, const at::Tensor &residual,
                     int64_t axis, double p, bool packed, Act act) {
  at::Tensor keep = eagerKeepMask<D>(x, p);
  double scale = 1.0 / (1.0 - p);
  at::Tensor y =
      residual.defined()
          ? runBiasOp<D>(op, x, bias, axis,
                         activateThen(act, kernels::MaskScaleAdd{scale}),
                         Mask{"mask", keep}, Grad{"residual", residual})
          : runBiasOp<D>(op, x, bias, axis,
                         activateThen(act, kernels::MaskScale{scale}),
                         Mask{"mask", keep});
  return {y, packed ? packMask(keep) : keep};
}

template <Device D>
std::tuple<at::Tensor, at::Tensor>
fusedBiasDropoutAdd(const at::Tensor &x, const at::Tensor &bias,
                    const std::optional<at::Tensor> &residual, int64_t axis,
                    double p, bool packed, c10::string_view activationName,
                    std::optional<bool> eagerRandom) {
  constexpr const char *op = "fused_bias_dropout_add";
  axis = checkBias(op, x, bias, axis);
  checkDropProbability(op, p);
  Activation activation = parseActivation(op, activationName);
  if (residual)
    Grad{"residual", *residual}.check(op, x);
  if constexpr (D != Device::Meta) {
    if (eagerRandom.value_or(false)) {
      std::tuple<at::Tensor, at::Tensor> result;
      withActivation(activation, [&](auto act) {
        result = biasDropoutEagerMask<D>(
            op, x, bias, residual.value_or(at::Tensor()), axis, p, packed,
            act);
      });
      return result;
    }
  }
  at::Tensor mask = packed ? at::empty_symint({packedMaskBytes(x)},
                                              x.options().dtype(at::kByte))
                           : at::empty_like(x, x.options().dtype(at::kBool),
                                            at::MemoryFormat::Contiguous);
  at::Tensor result = at::empty_like(x, at::MemoryFormat::Contiguous);
  if constexpr (D != Device::Meta) {
    c10::OptionalDeviceGuard guard(x.device());
    at::Tensor xc = x.contiguous(), bc = bias.contiguous();
    at::Tensor rc = residual ? residual->contiguous() : at::Tensor();
    kernels::BiasBroadcast shape = biasBroadcast(xc, axis);
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kHalf, at::kBFloat16, xc.scalar_type(), op, [&] {
          using T = KernelType<scalar_t>;
          auto launch = [&](auto packedTag, auto elementOp,
                            const auto *...residualData) {
            Launcher<D>::template biasDropout<decltype(packedTag)::value>(
                elementOp, static_cast<const T *>(xc.const_data_ptr()),
                static_cast<const T *>(bc.const_data_ptr()),
                static_cast<T *>(result.mutable_data_ptr()),
                mask.mutable_data_ptr(), shape, p, residualData...);
          };
          double scale = 1.0 / (1.0 - p);
          withActivation(activation, [&](auto act) {
            auto withResidual = [&](auto packedTag) {
              if (rc.defined())
                launch(packedTag, activateThen(act, kernels::MaskScaleAdd{scale}),
                       static_cast<const T *>(rc.const_data_ptr()));
              else
                launch(packedTag, activateThen(act, kernels::MaskScale{scale}));
            };
            if (packed)
              withResidual(std::true_type{});
            else
              withResidual(std::false_type{});
          });
        });
  }
  return {result, mask};
}

template <Device D>
at::Tensor packedMaskScale(const at::Tensor &grad, const at::Tensor &mask,
                           double scale) {
  constexpr const char *op = "packed_mask_scale";
  at::ScalarType dtype = grad.scalar_type();
  checkFloating(op, dtype);
  checkPackedMask(op, mask, grad);
  at::Tensor result = at::empty_like(grad, at::MemoryFormat::Contiguous);
  if constexpr (D != Device::Meta) {
    c10::OptionalDeviceGuard guard(grad.device());
    at::Tensor gc = grad.contiguous(), mc = mask.contiguous();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, op, [&] {
      using T = KernelType<scalar_t>;
      Launcher<D>::packedMaskScale(static_cast<const T *>(gc.const_data_ptr()),
                                   mc.const_data_ptr<uint8_t>(),
                                   static_cast<T *>(result.mutable_data_ptr()),
                                   gc.numel(), scale);
    });
  }
  return result;
}

//===----------------------------------------------------------------------===//
// The linear family
//===----------------------------------------------------------------------===//

/// x's sizes with the last replaced by `last`.
inline std::vector<c10::SymInt> withLastSize(const at::Tensor &x,
                                             const c10::SymInt &last) {
  std::vector<c10::SymInt> sizes = x.sym_sizes().vec();
  sizes.back() = last;
  return sizes;
}

/// x as a contiguous [M, K] matrix.
inline at::Tensor rowsOf(const at::Tensor &x) {
  return x.reshape({-1, x.size(-1)}).contiguous();
}

template <Device D>
std::tuple<at::Tensor, at::Tensor>
fusedLinearGelu(const at::Tensor &x, const at::Tensor &weight,
                const at::Tensor &bias, c10::string_view approximate) {
  constexpr const char *op = "fused_linear_gelu";
  bool tanh = parseApproximate(op, approximate);
  checkLinear(op, x, weight);
  checkLinearTensor(op, "bias", bias, x, {weight.sym_size(0)});
  std::vector<c10::SymInt> sizes = withLastSize(x, weight.sym_size(0));
  at::Tensor y = at::empty_symint(sizes, x.options());
  at::Tensor pre = at::empty_symint(sizes, x.options());
  if constexpr (D != Device::Meta) {
    c10::OptionalDeviceGuard guard(x.device());
    at::Tensor preRows = pre.view({-1, weight.size(0)});
    at::Tensor yRows = y.view({-1, weight.size(0)});
    if (y.numel() > 0)
      Launcher<D>::linearGelu(rowsOf(x), weight, bias.contiguous(), tanh,
                              preRows, yRows);
  }
  return {y, pre};
}

/// Empty input, weight and bias gradients of a linear layer (weight
/// [N, K]).
inline std::tuple<at::Tensor, at::Tensor, at::Tensor>
emptyLinearGrads(const at::Tensor &x, const at::Tensor &weight) {
  return {at::empty_like(x, at::MemoryFormat::Contiguous),
          at::empty_like(weight, at::MemoryFormat::Contiguous),
          at::empty_symint({weight.sym_size(0)}, x.options())};
}

/// A linear layer's input, weight and bias gradients from
/// `gradRows(gradWeight, gradBias)`, which fills the last two and returns
/// the gradient of the layer's output as [M, N] rows.
template <typename GradRows>
std::tuple<at::Tensor, at::Tensor, at::Tensor>
linearGrads(const at::Tensor &x, const at::Tensor &weight, GradRows gradRows) {
  c10::OptionalDeviceGuard guard(x.device());
  auto [gradX, gradWeight, gradBias] = emptyLinearGrads(x, weight);
  at::Tensor g = gradRows(gradWeight, gradBias);
  at::Tensor gradXRows = gradX.view({g.size(0), weight.size(1)});
  at::mm_out(gradXRows, g, weight);
  return {gradX, gradWeight, gradBias};
}

template <Device D>
std::tuple<at::Tensor, at::Tensor, at::Tensor>
fusedLinearGeluGrad(const at::Tensor &grad, const at::Tensor &x,
                    const at::Tensor &weight, const at::Tensor &pre,
                    c10::string_view approximate) {
  constexpr const char *op = "fused_linear_gelu_grad";
  parseApproximate(op, approximate);
  checkLinear(op, x, weight);
  std::vector<c10::SymInt> rowsN = withLastSize(x, weight.sym_size(0));
  checkLinearTensor(op, "grad", grad, x, rowsN);
  checkLinearTensor(op, "pre", pre, x, rowsN);
  if constexpr (D == Device::Meta)
    return emptyLinearGrads(x, weight);
  else
    return linearGrads(
        x, weight, [&](at::Tensor &gradWeight, at::Tensor &gradBias) {
          at::Tensor g = rowsOf(at::gelu_backward(grad, pre, approximate));
          Launcher<D>::weightBiasGrad(g, rowsOf(x), gradWeight, gradBias);
          return g;
        });
}

template <Device D>
std::tuple<at::Tensor, at::Tensor, at::Tensor>
fusedLinearGeluGradMm(const at::Tensor &gradA, const at::Tensor &gradB,
                      const at::Tensor &x, const at::Tensor &weight,
                      const at::Tensor &pre, c10::string_view approximate) {
  constexpr const char *op = "fused_linear_gelu_grad_mm";
  bool tanh = parseApproximate(op, approximate);
  checkLinear(op, x, weight);
  checkLinearTensor(op, "pre", pre, x, withLastSize(x, weight.sym_size(0)));
  TORCH_CHECK(gradA.dim() == x.dim(), op, ": grad_a shape ", gradA.sym_sizes(),
              " does not have x's leading dims ", x.sym_sizes());
  c10::SymInt j = gradA.sym_size(-1);
  checkLinearTensor(op, "grad_a", gradA, x, withLastSize(x, j));
  checkLinearTensor(op, "grad_b", gradB, x, {j, weight.sym_size(0)});
  if constexpr (D == Device::Meta)
    return emptyLinearGrads(x, weight);
  else
    return linearGrads(x, weight,
                       [&](at::Tensor &gradWeight, at::Tensor &gradBias) {
                         at::Tensor preRows = rowsOf(pre);
                         at::Tensor g = at::empty_like(preRows);
                         Launcher<D>::mmGeluGrad(rowsOf(gradA), gradB, preRows,
                                                 tanh, g, gradBias);
                         at::mm_out(gradWeight, g.t(), rowsOf(x));
                         return g;
                       });
}

template <Device D>
std::tuple<at::Tensor, at::Tensor> linearWeightBiasGrad(const at::Tensor &grad,
                                                        const at::Tensor &x) {
  constexpr const char *op = "linear_weight_bias_grad";
  TORCH_CHECK(x.dim() >= 1 && grad.dim() == x.dim(), op, ": grad shape ",
              grad.sym_sizes(), " does not have x's leading dims ",
              x.sym_sizes());
  checkFloating(op, x.scalar_type());
  checkLinearTensor(op, "grad", grad, x, withLastSize(x, grad.sym_size(-1)));
  at::Tensor gradWeight =
      at::empty_symint({grad.sym_size(-1), x.sym_size(-1)}, x.options());
  at::Tensor gradBias = at::empty_symint({grad.sym_size(-1)}, x.options());
  if constexpr (D != Device::Meta) {
    c10::OptionalDeviceGuard guard(x.device());
    Launcher<D>::weightBiasGrad(rowsOf(grad), rowsOf(x), gradWeight, gradBias);
  }
  return {gradWeight, gradBias};
}

template <Device D>
std::vector<at::Tensor> castTensors(at::TensorList tensors,
                                    at::ScalarType dtype) {
  std::vector<at::Tensor> results;
  results.reserve(tensors.size());
  for (const at::Tensor &tensor : tensors) {
    TORCH_CHECK(tensor.device() == tensors[0].device(),
                "cast_tensors: expected every tensor on ", tensors[0].device(),
                ", got one on ", tensor.device());
    // _to_copy's result: the input's strides where it is dense.
    results.push_back(at::empty_like(tensor, tensor.options().dtype(dtype),
                                     at::MemoryFormat::Preserve));
  }
  if constexpr (D != Device::Meta) {
    if (!tensors.empty()) {
      c10::OptionalDeviceGuard guard(tensors[0].device());
      Launcher<D>::castTensors(tensors, results);
    }
  }
  return results;
}

} // namespace fxmlir::ops

#include "EmbeddingGrad.h"      // the embedding-gradient family
#include "LinearCrossEntropy.h" // the linear-loss family

#endif // FXMLIR_OPS_FUSEDOPS_H
