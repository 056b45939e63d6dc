//===- CpuRuntime.h - helper functions for JIT CPU code ---------*- C++ -*-===//
//
// Functions LLVM's code generation may call that the process need not have:
// compiler-rt's, which the JIT does not link.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_JIT_CPURUNTIME_H
#define FXMLIR_LIB_JIT_CPURUNTIME_H

#include <utility>
#include <vector>

namespace fxmlir::jit {

/// The helpers by symbol name, defined in every library of CPU code.
std::vector<std::pair<const char *, void *>> cpuRuntimeSymbols();

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_CPURUNTIME_H
