//===- CpuCodegen.h - JIT functions to host object files --------*- C++ -*-===//

#ifndef FXMLIR_LIB_JIT_CPUCODEGEN_H
#define FXMLIR_LIB_JIT_CPUCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace fxmlir::jit {

/// The symbol of the entry point every compiled object defines:
/// `void fxmlir_entry(void **descriptors)`, one memref descriptor pointer
/// per input then per output.
constexpr const char *kEntrySymbol = "fxmlir_entry";

/// Compiled objects define these symbols only (the entry points).
constexpr const char *kExportPrefix = "fxmlir_";

/// Translates `module`, lowered to the LLVM dialect, to LLVM IR, adds the
/// entry point of `function`, lets `prepare` add any other entry point,
/// optimizes at O3 for `machine` and returns the object file. Throws Error.
std::string emitObject(mlir::ModuleOp module, llvm::StringRef function,
                       llvm::TargetMachine &machine,
                       llvm::function_ref<void(llvm::Module &)> prepare = {});

/// Lowers the specialized module (consumed) through the CPU pipeline,
/// optimizes it at O3 for `machine` and returns the object file. Throws
/// Error with the diagnostics.
std::string compileToObject(mlir::ModuleOp module, llvm::StringRef function,
                            llvm::TargetMachine &machine);

} // namespace fxmlir::jit

#endif // FXMLIR_LIB_JIT_CPUCODEGEN_H
