//===- RoundBFloat16.h - float blocks rounded to bfloat16 in hardware -----===//
//
// fromAcc<BFloat16> rounds in integer arithmetic, which GCC vectorizes into
// about 9 instructions per 16 elements: in a bfloat16 kernel bound by its
// arithmetic (bias + erf GELU, [2048, 1024], one AMD EPYC Zen 4 thread),
// a quarter of the loop. AVX-512 BF16's conversion rounds 32 floats in one
// instruction, to nearest even like fromAcc, NaNs kept quiet, except that
// it flushes subnormal floats to zero: a group holding one is rounded by
// fromAcc instead, so the result is fromAcc's bit for bit. storeRounded
// (RoundedStore.h) computes a kernel's values into a float block and calls
// this, on CPUs that have the instructions.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_ROUNDBFLOAT16_H
#define FXMLIR_KERNELS_CPU_ROUNDBFLOAT16_H

#include "../common/ElementTypes.h"

#include <cstdint>

namespace fxmlir::kernels::cpu {

/// Whether this CPU has AVX-512 BF16 (and F, BW, VL), which
/// roundToBFloat16Avx512 needs.
bool hasAvx512BFloat16();

/// to[k] = fromAcc<BFloat16>(from[k]) for k in [0, n); only on a CPU where
/// hasAvx512BFloat16().
void roundToBFloat16Avx512(const float *from, BFloat16 *to, int64_t n);

} // namespace fxmlir::kernels::cpu

#endif // FXMLIR_KERNELS_CPU_ROUNDBFLOAT16_H
