//===- PassRegistry.cpp - the passes of the fxmlir pipeline ---------------===//
//
// The one place that lists, in order, the passes a round trip may run. Users
// select them by these names from fxmlir-opt, Python and FXMLIR_PASSES; the
// summaries come from each pass's own registration.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Core/Core.h"
#include "fxmlir/InitAll.h"

#include "mlir/Pass/PassRegistry.h"

namespace {
struct PipelineEntry {
  const char *name;
  bool inDefaultPipeline;
};
} // namespace

static constexpr PipelineEntry kPipeline[] = {
    {"canonicalize", true},
    {"cse", true},
    {"fxmlir-recognize-gelu", true},
    {"fxmlir-decompose", true},
    {"fxmlir-fuse-bias-add-gelu", true},
    {"fxmlir-fuse-bias-add-dropout", true},
    {"fxmlir-recompose", true},
};

std::vector<fxmlir::PassDescription> fxmlir::pipelinePasses() {
  registerAllPasses();
  std::vector<PassDescription> passes;
  for (const PipelineEntry &entry : kPipeline) {
    const mlir::PassInfo *info = mlir::PassInfo::lookup(entry.name);
    if (!info)
      throw Error(std::string("pipeline pass '") + entry.name +
                  "' is not registered");
    passes.push_back({entry.name, info->getPassDescription().str(),
                      entry.inDefaultPipeline});
  }
  return passes;
}
