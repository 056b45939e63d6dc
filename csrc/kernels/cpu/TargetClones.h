//===- TargetClones.h - Per-CPU variants of the CPU kernels ---------------===//
//
// The library must run on any x86-64 CPU, yet the kernels are 2-3x faster
// with AVX2/FMA/F16C. FXMLIR_CPU_KERNEL compiles a function twice (baseline
// and x86-64-v3) and lets the dynamic loader pick one per machine (ifunc).
// Everything the kernel inlines is compiled for the chosen variant, so its
// helpers must be inlined (FXMLIR_INLINE). Clang does not multiversion
// templates: there, and off x86-64, kernels build for the baseline only.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_TARGETCLONES_H
#define FXMLIR_KERNELS_CPU_TARGETCLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FXMLIR_CPU_KERNEL                                                      \
  __attribute__((target_clones("default", "arch=x86-64-v3")))
#else
#define FXMLIR_CPU_KERNEL
#endif

#define FXMLIR_INLINE inline __attribute__((always_inline))

#endif // FXMLIR_KERNELS_CPU_TARGETCLONES_H
