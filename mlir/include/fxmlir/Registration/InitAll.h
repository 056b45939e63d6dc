//===- InitAll.h - register everything fxmlir uses --------------*- C++ -*-===//

#ifndef FXMLIR_REGISTRATION_INITALL_H
#define FXMLIR_REGISTRATION_INITALL_H

#include <memory>

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace fxmlir {
/// Adds the fxmlir dialect and every dialect its pipelines produce.
void registerAllDialects(mlir::DialectRegistry &registry);
/// A context that knows every dialect fxmlir uses, without MLIR's own
/// thread pool: graphs are small and we are called from torch's threads,
/// where it would only add start-up cost and contention.
std::unique_ptr<mlir::MLIRContext> makeContext();
/// Registers our passes, the upstream passes our pipelines name and the
/// per-stage pipelines, so that textual pipelines can refer to them. Safe to
/// call more than once.
void registerAllPasses();
/// Registers the per-stage pipelines (lib/Registration/PassRegistry.cpp);
/// called by registerAllPasses.
void registerPipelines();
} // namespace fxmlir

#endif // FXMLIR_REGISTRATION_INITALL_H
