//===- RoundX86.h - float blocks rounded to 16 bits by x86 instructions ---===//
//
// fromAcc<BFloat16> and fromAcc<Half> round in integer arithmetic, which GCC
// vectorizes into 9 and 15 instructions per 16 elements: in a 16-bit kernel
// bound by its arithmetic (bias + erf GELU, [2048, 1024] bfloat16, one AMD
// EPYC Zen 4 thread), a quarter of the loop. x86's conversions round 8 to 32
// floats in one instruction, to nearest even like fromAcc: AVX-512 BF16's to
// bfloat16, F16C's (x86-64-v3 and up) to half. AVX-512 BF16 flushes subnormal
// floats to zero: a group holding one is rounded by fromAcc instead, so the
// result is fromAcc's bit for bit. F16C rounds subnormals too; a NaN keeps
// its sign and the top of its payload where fromAcc<Half> makes every NaN
// 0x7e00 (both quiet NaNs, as torch's own vectorized and scalar casts
// differ). Without AVX-512 BF16, AVX2 rounds to bfloat16 in fromAcc's own
// integer arithmetic, 16 floats a step: GCC, vectorizing fromAcc inside a
// kernel's loop for x86-64-v3, packed each select's both sides and blended
// them as 16-bit lanes (bias + ReLU, [2048, 1024] bfloat16: 66 instructions
// per 16 elements, 1.18 ms where float32 took 0.75; an AMD EPYC with AVX2,
// one thread). storeRounded (RoundedStore.h) computes a kernel's values
// into a float block and calls these, on CPUs that have the instructions.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_ROUNDX86_H
#define FXMLIR_KERNELS_CPU_ROUNDX86_H

#include "../common/ElementTypes.h"

#include <cstdint>

namespace fxmlir::kernels::cpu {

/// Whether this CPU has AVX-512 BF16 (and F, BW, VL), which
/// roundToBFloat16Avx512 needs.
bool hasAvx512BFloat16();

/// to[k] = fromAcc<BFloat16>(from[k]) for k in [0, n); only on a CPU where
/// hasAvx512BFloat16().
void roundToBFloat16Avx512(const float *from, BFloat16 *to, int64_t n);

/// Whether this CPU has AVX2, which roundToBFloat16Avx2 needs.
bool hasAvx2();

/// to[k] = fromAcc<BFloat16>(from[k]) for k in [0, n), bit for bit (NaNs
/// included); only on a CPU where hasAvx2().
void roundToBFloat16Avx2(const float *from, BFloat16 *to, int64_t n);

/// Whether this CPU has F16C (and AVX), which roundToHalfF16c needs.
bool hasF16c();

/// to[k] = fromAcc<Half>(from[k]) for k in [0, n), NaNs aside (above); only
/// on a CPU where hasF16c().
void roundToHalfF16c(const float *from, Half *to, int64_t n);

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_ROUNDX86_H
