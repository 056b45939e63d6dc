//===- Pipelines.h - the stages' pipelines and their passes -----*- C++ -*-===//
//
// Part of the public API (fxmlir/Core/Core.h includes it), defined at the
// bottom of the core, with the registrations (lib/Registration), so that
// the JIT and the public front end both build on it.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_REGISTRATION_PIPELINES_H
#define FXMLIR_REGISTRATION_PIPELINES_H

#include "fxmlir/Support/Error.h"

#include <string>
#include <vector>

namespace fxmlir {

/// The stages of a training step where round trips run; each has a default
/// pipeline, registered as the pass pipeline "fxmlir-<stage>" (with `_` as
/// `-`: "fxmlir-before-autodiff").
FXMLIR_API std::vector<std::string> stages();

/// A pass of the fxmlir pipelines, by the name fxmlir-opt, Python and
/// FXMLIR_PASSES all use.
struct PassDescription {
  std::string name;
  std::string summary;
  /// The stages whose default pipeline runs it (none: opt-in).
  std::vector<std::string> stages;
};

/// Every pass a pipeline may hold, in the order pipelines run them.
FXMLIR_API std::vector<PassDescription> pipelinePasses();

/// The passes a stage's pipeline runs, in order: its default ones, with
/// `add` and without `remove`, or exactly `only` when it is not empty; a
/// pass never runs in a stage it does not allow (JIT regions before
/// autodiff). Its registered pipeline takes the same lists as options:
/// "fxmlir-forward{add=fxmlir-eager-random remove=cse}". Throws Error for
/// an unknown stage or pass.
FXMLIR_API std::vector<std::string>
stagePasses(const std::string &stage, const std::vector<std::string> &only,
            const std::vector<std::string> &add,
            const std::vector<std::string> &remove);

/// What a stage's pipeline runs besides, or instead of, its default passes:
/// stagePasses' lists, the device types JIT regions are outlined on (CPU
/// tensors' when empty), and the 16-bit types whose CPU products
/// fxmlir-widen-cpu-products widens (none when empty).
struct StageChoice {
  std::vector<std::string> only;
  std::vector<std::string> add;
  std::vector<std::string> remove;
  std::vector<std::string> regionDeviceTypes;
  std::vector<std::string> widenedProductTypes;
  /// fxmlir-outline-jit-regions marks each op it leaves out with why
  /// (fxmlir explain).
  bool regionVerdicts = false;
};

/// The stage's registered pipeline with `choice` as its options, in
/// fxmlir-opt syntax ("fxmlir-forward{add=fxmlir-eager-random}"): the one
/// spelling of a stage's pipeline, for Module::runStage and fxmlir-opt users.
/// Throws Error for an unknown stage or pass, or when it runs no pass.
FXMLIR_API std::string stagePipeline(const std::string &stage,
                                     const StageChoice &choice);

} // namespace fxmlir

#endif // FXMLIR_REGISTRATION_PIPELINES_H
