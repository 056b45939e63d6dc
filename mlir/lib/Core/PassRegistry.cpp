//===- PassRegistry.cpp - the passes and pipelines of a round trip --------===//
//
// The one place that lists, in order, the passes a round trip may run and
// which stages run each by default. The per-stage pipelines are registered
// from it by name ("fxmlir-forward", ...) for fxmlir-opt; users select
// passes by the same names from Python and FXMLIR_PASSES; the summaries
// come from each pass's own registration.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Core/Core.h"
#include "fxmlir/InitAll.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"

namespace {
enum Stage : unsigned {
  BeforeAutodiff = 1,
  Forward = 2,
  Backward = 4,
  Inference = 8,
  AllStages = 15,
  AfterAutodiff = Forward | Backward | Inference,
};

constexpr const char *kStageNames[] = {"before_autodiff", "forward", "backward",
                                       "inference"};

struct PipelineEntry {
  const char *name;
  unsigned stages;
};

constexpr PipelineEntry kPipeline[] = {
    {"canonicalize", AllStages},
    {"cse", AllStages},
    {"fxmlir-recognize-gelu", AllStages},
    // Opt-in: changes numerics (erf GELU computed as tanh GELU).
    {"fxmlir-approximate-gelu", 0},
    {"fxmlir-decompose", AllStages},
    // Before the bias_add + GELU fusion, which would take its GELUs.
    {"fxmlir-fuse-gemm-epilogues", AllStages},
    {"fxmlir-fuse-bias-add-activation", AllStages},
    {"fxmlir-fuse-bias-add-dropout", AllStages},
    {"fxmlir-recompose", AllStages},
    // Opt-in (the eager_random option): after the fusions that create the
    // random ops it marks.
    {"fxmlir-eager-random", 0},
};

/// "fxmlir-before-autodiff" for "before_autodiff".
std::string pipelineName(llvm::StringRef stage) {
  std::string name = ("fxmlir-" + stage).str();
  llvm::replace(name, '_', '-');
  return name;
}
} // namespace

std::vector<std::string> fxmlir::stages() {
  return {std::begin(kStageNames), std::end(kStageNames)};
}

std::vector<fxmlir::PassDescription> fxmlir::pipelinePasses() {
  registerAllPasses();
  std::vector<PassDescription> passes;
  for (const PipelineEntry &entry : kPipeline) {
    const mlir::PassInfo *info = mlir::PassInfo::lookup(entry.name);
    if (!info)
      throw Error(std::string("pipeline pass '") + entry.name +
                  "' is not registered");
    PassDescription pass{entry.name, info->getPassDescription().str(), {}};
    for (auto [index, stage] : llvm::enumerate(kStageNames))
      if (entry.stages & (1u << index))
        pass.stages.push_back(stage);
    passes.push_back(std::move(pass));
  }
  return passes;
}

void fxmlir::registerPipelines() {
  for (auto [index, stage] : llvm::enumerate(kStageNames)) {
    std::string passes;
    for (const PipelineEntry &entry : kPipeline)
      if (entry.stages & (1u << index))
        passes += (passes.empty() ? "" : ",") + std::string(entry.name);
    std::string summary =
        std::string("fxmlir's default pipeline for the ") + stage + " stage";
    mlir::registerPassPipeline(
        pipelineName(stage), summary,
        [passes](mlir::OpPassManager &pm, llvm::StringRef options,
                 llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
                     errorHandler) {
          if (!options.empty())
            return errorHandler("fxmlir's pipelines take no options");
          return mlir::parsePassPipeline(passes, pm);
        },
        [](llvm::function_ref<void(const mlir::detail::PassOptions &)>) {});
  }
}
