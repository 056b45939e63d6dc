//===- InitAll.h - register everything fxmlir uses --------------*- C++ -*-===//

#ifndef FXMLIR_REGISTRATION_INITALL_H
#define FXMLIR_REGISTRATION_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fxmlir {
/// Adds the fxmlir dialect and every dialect its pipelines produce.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Registers our passes, the upstream passes our pipelines name and the
/// per-stage pipelines, so that textual pipelines can refer to them. Safe to
/// call more than once.
void registerAllPasses();
/// Registers the per-stage pipelines (lib/Registration/PassRegistry.cpp);
/// called by registerAllPasses.
void registerPipelines();
} // namespace fxmlir

#endif // FXMLIR_REGISTRATION_INITALL_H
