//===- InitAll.h - register everything fxmlir uses --------------*- C++ -*-===//

#ifndef FXMLIR_INITALL_H
#define FXMLIR_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace fxmlir {
/// Adds the fxmlir dialect and every dialect its pipelines produce.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Registers our passes and the upstream passes our pipelines name, so that
/// textual pipelines can refer to them. Safe to call more than once.
void registerAllPasses();
} // namespace fxmlir

#endif // FXMLIR_INITALL_H
