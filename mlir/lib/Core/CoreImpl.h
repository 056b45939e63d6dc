//===- CoreImpl.h - what the public handles hold ----------------*- C++ -*-===//

#ifndef FXMLIR_LIB_CORE_COREIMPL_H
#define FXMLIR_LIB_CORE_COREIMPL_H

#include "fxmlir/Core/Core.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

struct fxmlir::Context::Impl {
  std::unique_ptr<mlir::MLIRContext> context;
  Impl();
};

struct fxmlir::Module::Impl {
  // Declared first so that it is destroyed last: the module's ops live in
  // this context.
  std::shared_ptr<Context::Impl> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

namespace fxmlir {
/// Adds a textual pipeline (fxmlir-opt syntax) to `pm`; throws Error naming
/// a bad pass.
void addPipeline(mlir::PassManager &pm, const std::string &pipeline);

/// Runs `pm` on `module`; throws Error with the diagnostics of a failure.
void runPassManager(mlir::PassManager &pm, mlir::ModuleOp module,
                    const std::string &pipeline);

/// Implements Module::toJson.
std::string moduleToJson(mlir::ModuleOp module);

/// A "name:line:col: error: ..." diagnostic at the first point where `text`
/// nests deeper than kMaxNestingDepth, or nothing when it does not.
std::optional<std::string> findExcessiveNesting(llvm::StringRef text,
                                                llvm::StringRef bufferName);

/// "truncated: the text ends in JIT region @name" (or "function @name") when
/// the parser's first error, at `errorOffset`, is at the text's last token,
/// inside a function; nothing otherwise.
std::optional<std::string> describeTruncation(llvm::StringRef text,
                                              size_t errorOffset);
} // namespace fxmlir

#endif // FXMLIR_LIB_CORE_COREIMPL_H
