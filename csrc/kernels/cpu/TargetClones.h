//===- TargetClones.h - Per-CPU variants of the CPU kernels ---------------===//
//
// The library must run on any x86-64 CPU, yet the kernels are 2-3x faster
// with AVX2/FMA/F16C, and AVX-512 gains another 1.4-1.7x (bias + GELU on
// 2048 x 1024 floats, one Xeon thread: 2.24 ms with x86-64-v3, 1.28 with
// v4; eager 1.60). FXMLIR_CPU_KERNEL compiles a function three times
// (baseline, x86-64-v3, x86-64-v4) and lets the dynamic loader pick one per
// machine (ifunc).
// Everything the kernel inlines is compiled for the chosen variant, so its
// helpers must be inlined: functions (FXMLIR_INLINE) and the element lambdas
// (FXMLIR_INLINE_LAMBDA, after the parameter list). Left to itself GCC kept
// the exact GELU gradient's lambda out of line in the baseline and v4
// clones: a call per element, 50 ms instead of 5.3 on [4096, 1024] floats
// (one thread, a Xeon with AVX-512).
// Clang does not multiversion templates: there, and off x86-64, kernels
// build for the baseline only.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_KERNELS_CPU_TARGETCLONES_H
#define FXMLIR_KERNELS_CPU_TARGETCLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FXMLIR_CPU_KERNEL                                                      \
  __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define FXMLIR_CPU_KERNEL
#endif

#define FXMLIR_INLINE inline __attribute__((always_inline))
#define FXMLIR_INLINE_LAMBDA __attribute__((always_inline))

#endif // FXMLIR_KERNELS_CPU_TARGETCLONES_H
