//===- CpuRuntime.cpp - helper functions for JIT CPU code -----------------===//

#include "CpuRuntime.h"

#include <cstdint>
#include <cstring>

using namespace fxmlir;

namespace {
/// compiler-rt's f32 -> bf16 conversion. fxmlir-expand-bf16-conversions
/// expands every conversion the lowering emits, but on x86 without
/// AVX512-BF16 LLVM promotes some bf16 operations it forms itself (a
/// vectorized select of bf16 values) through f32 and calls this to come
/// back; libgcc has it only from GCC 13. Rounds to nearest even; a NaN
/// becomes 0x7FC0, as c10::BFloat16 and the expansion make it. LLVM takes a
/// bf16 result from the low 16 bits of XMM0, where a float result lies.
extern "C" float fxmlirTruncSFBF2(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint32_t rounded = (bits & 0x7fffffffu) > 0x7f800000u
                         ? 0x7fc0u
                         : (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  float result;
  std::memcpy(&result, &rounded, sizeof(result));
  return result;
}
} // namespace

std::vector<std::pair<const char *, void *>> jit::cpuRuntimeSymbols() {
  return {{"__truncsfbf2", reinterpret_cast<void *>(&fxmlirTruncSFBF2)}};
}
