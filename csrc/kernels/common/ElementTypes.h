//===- ElementTypes.h - 16-bit float storage and the compute type ---------===//
//
// Torch-free half and bfloat16 storage types shared by the CPU and CUDA
// kernels. They have the layout of at::Half / at::BFloat16 (one uint16_t), so
// the glue reinterprets tensor data as them. 16-bit values compute in float:
// on the GPU through its conversion instructions, on the host through
// branch-free bit manipulation, so that loops converting them vectorize (the
// CPU kernels' bfloat16 stores use the CPU's conversion instructions where
// it has them: cpu/RoundedStore.h).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_COMMON_ELEMENTTYPES_H
#define FXMLIR_KERNELS_COMMON_ELEMENTTYPES_H

#include "HostDevice.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace fxmlir::kernels {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

/// The type kernels compute in: float, except for double.
template <typename T>
using AccType = std::conditional_t<std::is_same_v<T, double>, double, float>;

FXMLIR_HOST_DEVICE uint32_t floatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

FXMLIR_HOST_DEVICE float bitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

FXMLIR_HOST_DEVICE float toAcc(float v) { return v; }
FXMLIR_HOST_DEVICE double toAcc(double v) { return v; }
FXMLIR_HOST_DEVICE bool toAcc(bool v) { return v; }

FXMLIR_HOST_DEVICE float toAcc(Half h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h.bits));
#else
  uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  uint32_t magnitude = static_cast<uint32_t>(h.bits & 0x7fffu) << 13;
  // Placing the half exponent/mantissa in a float and scaling by 2^(127-15)
  // rebiases the exponent; half subnormals land on float subnormals, which
  // the scaling turns into the right normal value.
  float scaled = bitsFloat(magnitude) * 0x1.0p112f;
  uint32_t finite = floatBits(scaled);
  uint32_t infOrNan = magnitude | 0x7f800000u;
  return bitsFloat(sign | (magnitude >= (0x7c00u << 13) ? infOrNan : finite));
#endif
}

FXMLIR_HOST_DEVICE float toAcc(BFloat16 b) {
  return bitsFloat(static_cast<uint32_t>(b.bits) << 16);
}

template <typename T> FXMLIR_HOST_DEVICE T fromAcc(AccType<T> v);

template <> FXMLIR_HOST_DEVICE float fromAcc<float>(float v) { return v; }
template <> FXMLIR_HOST_DEVICE double fromAcc<double>(double v) { return v; }

/// Round to nearest even, like at::Half.
template <> FXMLIR_HOST_DEVICE Half fromAcc<Half>(float v) {
#if defined(__CUDA_ARCH__)
  return Half{__half_as_ushort(__float2half_rn(v))};
#else
  uint32_t bits = floatBits(v);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7fffffffu;
  // Below 2^-14 the result is subnormal: adding 0.5f aligns the float ulp
  // with the half subnormal spacing (2^-24), so the FPU does the rounding.
  uint32_t subnormal = floatBits(bitsFloat(magnitude) + 0.5f) - 0x3f000000u;
  // Normal: rebias the exponent and round the 13 dropped mantissa bits; a
  // carry into the exponent is the correct rounding, overflow clamps to inf.
  uint32_t odd = (magnitude >> 13) & 1u;
  uint32_t normal = (magnitude - 0x38000000u + 0xfffu + odd) >> 13;
  normal = normal > 0x7c00u ? 0x7c00u : normal;
  uint32_t nonFinite = magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u;
  uint32_t result = magnitude >= 0x7f800000u  ? nonFinite
                    : magnitude < 0x38800000u ? subnormal
                                              : normal;
  return Half{static_cast<uint16_t>(sign | result)};
#endif
}

/// Round to nearest even, like at::BFloat16; NaN stays a quiet NaN.
template <> FXMLIR_HOST_DEVICE BFloat16 fromAcc<BFloat16>(float v) {
#if defined(__CUDA_ARCH__)
  return BFloat16{__bfloat16_as_ushort(__float2bfloat16_rn(v))};
#else
  uint32_t bits = floatBits(v);
  uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  // A NaN's rounding could carry into the exponent (an infinity): set its
  // quiet bit instead, which keeps it a NaN of its sign after truncation.
  uint32_t result = v != v ? bits | 0x400000u : rounded;
  return BFloat16{static_cast<uint16_t>(result >> 16)};
#endif
}

} // namespace fxmlir::kernels

#endif // FXMLIR_KERNELS_COMMON_ELEMENTTYPES_H
