//===- Elementwise.h - the fused ops' element functions -------------------===//
//
// What each fused op computes per element, once for the CPU and CUDA
// kernels. An activation (a row of ACTIVATIONS in python/fxmlir/fused_ops.py
// names its struct) gives its value and its gradient (matching aten's
// forward and backward formulas); an element op of the bias family maps
// v = x + bias, and the op's other inputs at the same element, to the
// output. A new fusion adds its element function here.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_COMMON_ELEMENTWISE_H
#define FXMLIR_KERNELS_COMMON_ELEMENTWISE_H

#include "Math.h"

namespace fxmlir::kernels {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kTanhCubic = 0.044715;

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

/// No activation: v itself.
struct NoActivation {
  template <typename A> FXMLIR_HOST_DEVICE static A value(A v) { return v; }
  template <typename A> FXMLIR_HOST_DEVICE static A grad(A, A g) { return g; }
};

/// torch's gelu: the erf form, or with Tanh its tanh approximation.
template <bool Tanh> struct Gelu {
  template <typename A> FXMLIR_HOST_DEVICE static A value(A v) {
    if constexpr (Tanh) {
      A inner = A(kSqrt2OverPi) * (v + A(kTanhCubic) * v * v * v);
      return A(0.5) * v * (A(1) + tanhAcc(inner));
    } else {
      return A(0.5) * v * (A(1) + erfAcc(v * A(kSqrt1_2)));
    }
  }
  template <typename A> FXMLIR_HOST_DEVICE static A grad(A v, A g) {
    if constexpr (Tanh) {
      A inner = A(kSqrt2OverPi) * (v + A(kTanhCubic) * v * v * v);
      A t = tanhAcc(inner);
      A dInner = A(kSqrt2OverPi) * (A(1) + A(3 * kTanhCubic) * v * v);
      return g * (A(0.5) * (A(1) + t) + A(0.5) * v * (A(1) - t * t) * dInner);
    } else {
      A gaussian = expAcc(A(-0.5) * v * v); // e^(-(v / sqrt 2)^2)
      A cdf = A(0.5) * (A(1) + erfGivenExp(v * A(kSqrt1_2), gaussian));
      A pdf = A(kInvSqrt2Pi) * gaussian;
      return g * (cdf + v * pdf);
    }
  }
};

struct Relu {
  // Written so that NaN propagates, as in torch.
  template <typename A> FXMLIR_HOST_DEVICE static A value(A v) {
    return v < A(0) ? A(0) : v;
  }
  // A select, like aten's threshold_backward: an infinite gradient where
  // the input is negative gives 0, not NaN.
  template <typename A> FXMLIR_HOST_DEVICE static A grad(A v, A g) {
    return v > A(0) ? g : A(0);
  }
};

/// silu(v) = v * sigmoid(v).
struct Silu {
  template <typename A> FXMLIR_HOST_DEVICE static A sigmoid(A v) {
    return A(1) / (A(1) + expAcc(-v));
  }
  template <typename A> FXMLIR_HOST_DEVICE static A value(A v) {
    return v * sigmoid(v);
  }
  template <typename A> FXMLIR_HOST_DEVICE static A grad(A v, A g) {
    A s = sigmoid(v);
    return g * s * (A(1) + v * (A(1) - s));
  }
};

struct Tanh {
  template <typename A> FXMLIR_HOST_DEVICE static A value(A v) {
    return tanhAcc(v);
  }
  template <typename A> FXMLIR_HOST_DEVICE static A grad(A v, A g) {
    A t = tanhAcc(v);
    return g * (A(1) - t * t);
  }
};

/// hardswish(v) = v * relu6(v + 3) / 6, written as aten's (NaN propagates;
/// its gradient's branches are aten's hardswish_backward's).
struct Hardswish {
  template <typename A> FXMLIR_HOST_DEVICE static A value(A v) {
    A r = v + A(3);
    r = r < A(0) ? A(0) : r;
    r = r > A(6) ? A(6) : r;
    return v * r / A(6);
  }
  template <typename A> FXMLIR_HOST_DEVICE static A grad(A v, A g) {
    return v <= A(-3) ? A(0) : (v < A(3) ? g * (v / A(3) + A(0.5)) : g);
  }
};

//===----------------------------------------------------------------------===//
// Element ops of the bias family: f(v = x + bias, the other inputs' values)
//===----------------------------------------------------------------------===//

struct Identity {
  template <typename A> FXMLIR_HOST_DEVICE A operator()(A v) const { return v; }
};

template <typename Act> struct Activate {
  template <typename A> FXMLIR_HOST_DEVICE A operator()(A v) const {
    return Act::value(v);
  }
};

/// The gradient with respect to v of Act, given the output gradient.
template <typename Act> struct ActivateGrad {
  template <typename A> FXMLIR_HOST_DEVICE A operator()(A v, A grad) const {
    return Act::grad(v, grad);
  }
};

/// Dropout: keep and scale, or zero.
struct MaskScale {
  double scale;
  // Multiplying by 0 (not selecting 0) keeps eager's inf * 0 = NaN. The
  // select between constants vectorizes; GCC does not convert bool to float
  // in vector code.
  template <typename A> FXMLIR_HOST_DEVICE A operator()(A v, bool keep) const {
    return v * (keep ? A(scale) : A(0));
  }
};

/// Dropout, then a residual add (Megatron's bias_dropout_add).
struct MaskScaleAdd {
  double scale;
  template <typename A>
  FXMLIR_HOST_DEVICE A operator()(A v, bool keep, A residual) const {
    return residual + MaskScale{scale}(v, keep);
  }
};

/// An activation, then another element op on its value (a dropout after
/// GELU): Then's other inputs pass through.
template <typename Act, typename Then> struct ActivateThen {
  Then then;
  template <typename A, typename... Rest>
  FXMLIR_HOST_DEVICE A operator()(A v, Rest... rest) const {
    return then(Act::value(v), rest...);
  }
};

/// Bit `i % 8` of a packed mask's byte: element i's keep flag.
FXMLIR_HOST_DEVICE bool packedKeep(uint32_t byte, int64_t i) {
  return (byte >> (i & 7)) & 1u;
}

} // namespace fxmlir::kernels

#endif // FXMLIR_KERNELS_COMMON_ELEMENTWISE_H
