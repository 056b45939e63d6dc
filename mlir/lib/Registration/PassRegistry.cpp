//===- PassRegistry.cpp - the passes and pipelines of a round trip --------===//
//
// The one place that lists, in order, the passes a round trip may run and
// which stages run each by default, and that builds each stage's pipeline:
// registered by name with its options ("fxmlir-forward{add=... remove=...}"),
// it is what the round trip runs and what fxmlir-opt runs. Users select
// passes by the same names from Python and FXMLIR_PASSES; the summaries
// come from each pass's own registration.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Registration/Pipelines.h"
#include "fxmlir/Registration/InitAll.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"

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
  /// The stages whose default pipeline runs it.
  unsigned stages;
  /// The stages it may run in when chosen.
  unsigned allowedStages = AllStages;
};

constexpr PipelineEntry kPipeline[] = {
    {"canonicalize", AllStages},
    {"cse", AllStages},
    {"fxmlir-recognize-gelu", AllStages},
    // Opt-in: changes numerics (erf GELU computed as tanh GELU).
    {"fxmlir-approximate-gelu", 0},
    // Before autodiff only: its op carries the autograd formula that saves
    // less than the log-softmax. Before fxmlir-decompose splits off biases.
    {"fxmlir-fuse-linear-cross-entropy", BeforeAutodiff, BeforeAutodiff},
    {"fxmlir-decompose", AllStages},
    // Before the bias_add + GELU fusion, which would take its GELUs.
    {"fxmlir-fuse-gemm-epilogues", AllStages},
    {"fxmlir-fuse-bias-add-activation", AllStages},
    // The seed's two-kernel dropout, then its mask draw in the kernel.
    {"fxmlir-fuse-bias-add-dropout", AllStages},
    {"fxmlir-fuse-mask-draws", AllStages},
    {"fxmlir-recompose", AllStages},
    // After the fusions, whose patterns read the transposes of products.
    {"fxmlir-fold-transpose-pairs", AllStages},
    // Backward graphs are where embedding gradients are; after autodiff
    // only (its op has no autograd formula).
    {"fxmlir-reuse-embedding-grads", Backward, AfterAutodiff},
    // After autodiff only (autograd never sees its casts), after the
    // fusions that take products; it widens the types the stage option
    // names, none by default.
    {"fxmlir-widen-cpu-products", AfterAutodiff, AfterAutodiff},
    // Opt-in (the eager_random option): after the fusions that create the
    // random ops it marks.
    {"fxmlir-eager-random", 0},
    // Codegen: last, it takes what the fusions left. After autodiff only:
    // a region needs no autograd formula.
    {"fxmlir-outline-jit-regions", AfterAutodiff, AfterAutodiff},
    // After the outliner, which takes the casts a region can do inside its
    // loops; after autodiff only (its op has no autograd formula).
    {"fxmlir-group-casts", AfterAutodiff, AfterAutodiff},
};

constexpr llvm::StringLiteral kOutline = "fxmlir-outline-jit-regions";
constexpr llvm::StringLiteral kWiden = "fxmlir-widen-cpu-products";

/// What a stage pipeline runs besides its default passes.
struct StageOptions : mlir::PassPipelineOptions<StageOptions> {
  ListOption<std::string> only{
      *this, "only",
      llvm::cl::desc("Run exactly these passes (in pipeline order) instead "
                     "of the stage's default ones")};
  ListOption<std::string> add{
      *this, "add", llvm::cl::desc("Passes added to the stage's default ones")};
  ListOption<std::string> remove{
      *this, "remove",
      llvm::cl::desc("Passes removed from the stage's default ones")};
  ListOption<std::string> regionDeviceTypes{
      *this, "region-device-types",
      llvm::cl::desc("The device types fxmlir-outline-jit-regions outlines "
                     "on (cpu when none is given)")};
  ListOption<std::string> widenedProductTypes{
      *this, "widen-product-dtypes",
      llvm::cl::desc("The 16-bit types (bf16, f16) whose CPU products "
                     "fxmlir-widen-cpu-products computes in float32 (none "
                     "when none is given)")};
  Option<bool> regionVerdicts{
      *this, "region-verdicts",
      llvm::cl::desc("fxmlir-outline-jit-regions marks each op it leaves "
                     "out with why (its explain option)"),
      llvm::cl::init(false)};
};

/// "fxmlir-before-autodiff" for "before_autodiff".
std::string pipelineName(llvm::StringRef stage) {
  std::string name = ("fxmlir-" + stage).str();
  llvm::replace(name, '_', '-');
  return name;
}

std::string passNames() {
  std::string names;
  for (const PipelineEntry &entry : kPipeline)
    names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

/// What a stage runs besides (or instead of) its default passes.
struct Choice {
  llvm::ArrayRef<std::string> only, add, remove;
};

/// The passes `choice` makes for the stage with bit `stage`, in pipeline
/// order, or an error naming an unknown pass. A pass never runs in a stage
/// it is not allowed in (a region needs no autograd formula only after
/// autodiff).
llvm::Expected<std::vector<const PipelineEntry *>> choosePasses(unsigned stage,
                                                                Choice choice) {
  for (auto [option, list] : {std::pair{"only", choice.only},
                              std::pair{"add", choice.add},
                              std::pair{"remove", choice.remove}})
    for (const std::string &name : list)
      if (llvm::none_of(kPipeline, [&](const PipelineEntry &entry) {
            return name == entry.name;
          }))
        return llvm::createStringError("unknown pass '" + name +
                                       "' in option '" + option +
                                       "'; pipeline passes: " + passNames());
  std::vector<const PipelineEntry *> chosen;
  for (const PipelineEntry &entry : kPipeline) {
    auto named = [&](llvm::ArrayRef<std::string> list) {
      return llvm::is_contained(list, entry.name);
    };
    bool runs = choice.only.empty()
                    ? ((entry.stages & stage) || named(choice.add)) &&
                          !named(choice.remove)
                    : named(choice.only);
    if (runs && (entry.allowedStages & stage))
      chosen.push_back(&entry);
  }
  return chosen;
}

/// Adds the stage's passes to `pm`: the round trip's pipeline, and
/// fxmlir-opt's "fxmlir-<stage>{options}".
mlir::LogicalResult
buildStagePipeline(mlir::OpPassManager &pm, unsigned stage,
                   const StageOptions &options,
                   llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
                       errorHandler) {
  llvm::Expected<std::vector<const PipelineEntry *>> chosen = choosePasses(
      stage, {options.only, options.add, options.remove});
  if (!chosen)
    return errorHandler(llvm::toString(chosen.takeError()));
  for (const PipelineEntry *entry : *chosen) {
    std::string pass = entry->name;
    if (pass == kOutline) {
      // The round trip keeps only regions that beat eager's kernels.
      std::string devices = llvm::join(options.regionDeviceTypes, ",");
      pass += "{cost-model=true device-types=" +
              (devices.empty() ? std::string("cpu") : devices) +
              (options.regionVerdicts ? " explain=true" : "") + "}";
    }
    if (pass == kWiden && !options.widenedProductTypes.empty())
      pass += "{dtypes=" + llvm::join(options.widenedProductTypes, ",") + "}";
    if (mlir::failed(mlir::parsePassPipeline(pass, pm)))
      return errorHandler("cannot add pass '" + pass + "'");
  }
  return mlir::success();
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

std::vector<std::string>
fxmlir::stagePasses(const std::string &stage,
                    const std::vector<std::string> &only,
                    const std::vector<std::string> &add,
                    const std::vector<std::string> &remove) {
  const char *const *found = llvm::find(kStageNames, stage);
  if (found == std::end(kStageNames))
    throw Error("unknown stage '" + stage + "'; stages: before_autodiff, "
                "forward, backward, inference");
  unsigned bit = 1u << (found - std::begin(kStageNames));
  llvm::Expected<std::vector<const PipelineEntry *>> chosen =
      choosePasses(bit, {only, add, remove});
  if (!chosen)
    throw Error(llvm::toString(chosen.takeError()));
  std::vector<std::string> names;
  for (const PipelineEntry *entry : *chosen)
    names.push_back(entry->name);
  return names;
}

void fxmlir::registerPipelines() {
  for (auto [index, stage] : llvm::enumerate(kStageNames)) {
    std::string summary =
        std::string("fxmlir's pipeline for the ") + stage +
        " stage: its default passes, or those the options choose";
    unsigned bit = 1u << index;
    mlir::registerPassPipeline(
        pipelineName(stage), summary,
        [bit](mlir::OpPassManager &pm, llvm::StringRef text,
              llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
                  errorHandler) {
          StageOptions options;
          std::string error;
          llvm::raw_string_ostream errorStream(error);
          if (mlir::failed(options.parseFromString(text, errorStream)))
            return errorHandler("bad options '" + text + "': " + error);
          return buildStagePipeline(pm, bit, options, errorHandler);
        },
        [](llvm::function_ref<void(const mlir::detail::PassOptions &)>
               optionHandler) { optionHandler(StageOptions()); });
  }
}

std::string fxmlir::stagePipeline(const std::string &stage,
                                  const StageChoice &choice) {
  if (stagePasses(stage, choice.only, choice.add, choice.remove).empty())
    throw Error("the pass selection runs no pass in the " + stage + " stage");
  std::vector<std::string> options;
  for (auto [key, names] :
       {std::pair{"only", &choice.only}, std::pair{"add", &choice.add},
        std::pair{"remove", &choice.remove},
        std::pair{"region-device-types", &choice.regionDeviceTypes},
        std::pair{"widen-product-dtypes", &choice.widenedProductTypes}})
    if (!names->empty())
      options.push_back(std::string(key) + "=" + llvm::join(*names, ","));
  if (choice.regionVerdicts)
    options.push_back("region-verdicts=true");
  std::string name = pipelineName(stage);
  return options.empty() ? name : name + "{" + llvm::join(options, " ") + "}";
}
