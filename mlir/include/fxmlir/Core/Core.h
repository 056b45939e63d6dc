//===- Core.h - the public C++ API of the fxmlir core -----------*- C++ -*-===//
//
// With the headers it includes (Support/Error.h, Registration/Pipelines.h)
// and fxmlir/JIT/Jit.h, the only symbols the self-contained core library
// exports. Nothing here names an MLIR or LLVM type, so the library can link MLIR statically with
// its symbols hidden, and clients (the pybind11 module, fxmlir-opt, the C++
// tests) build against this header alone, with any compiler and torch.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_CORE_CORE_H
#define FXMLIR_CORE_CORE_H

#include "fxmlir/Registration/Pipelines.h"
#include "fxmlir/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fxmlir {

/// Input nesting brackets, braces, parentheses and angle brackets deeper than
/// this (all kinds counted together) is refused before parsing: MLIR's parser,
/// verifier and printer recurse once per level, and this bound keeps them
/// within any thread's stack. Graphs from torch nest fewer than 20 levels.
constexpr unsigned kMaxNestingDepth = 256;

/// Owns the MLIR context with the fxmlir dialect and its dependencies loaded.
/// Modules share ownership of their context, so they may outlive this handle.
class FXMLIR_API Context {
public:
  Context();
  ~Context();
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// Whether an op of this name is registered, e.g. "fxmlir.aten.addmm".
  bool isRegisteredOp(const std::string &name) const;
  /// The names of all ops of the fxmlir dialect, sorted.
  std::vector<std::string> dialectOps() const;

  struct Impl;
  std::shared_ptr<Impl> impl;
};

/// A parsed, verified module.
class FXMLIR_API Module {
public:
  /// Parses and verifies `text`; `bufferName` names it in diagnostics.
  /// Throws Error with every diagnostic on failure, and for input nested
  /// deeper than kMaxNestingDepth.
  static Module parse(Context &context, const std::string &text,
                      const std::string &bufferName = "<string>");
  /// Builds and verifies the module of a JSON graph, in toJson's form (the
  /// Python importer's, which spells no MLIR); `graphName` names it in
  /// errors, which name the FX node of a bad op. Throws Error.
  static Module fromJson(Context &context, const std::string &json,
                         const std::string &graphName = "<graph>");
  Module(Module &&) noexcept;
  Module &operator=(Module &&) noexcept;
  ~Module();

  /// The module in MLIR's custom (or, with `generic`, generic) syntax; with
  /// `fxNames`, values are named after the FX nodes they come from (their
  /// name locations) as dumps show them, rather than %0, %1, ...
  std::string str(bool generic = false, bool fxNames = false) const;
  /// Throws Error if the module does not verify.
  void verify() const;
  /// One pass of a pipeline run, as MLIR's instrumentation saw it.
  struct PassRun {
    /// The pass's argument, e.g. "canonicalize".
    std::string pass;
    /// Wall time spent in it.
    double milliseconds;
    /// The module after it, when the run was asked for snapshots.
    std::string moduleAfter;
  };

  /// Runs a textual pass pipeline in fxmlir-opt syntax ("canonicalize,cse",
  /// "fxmlir-forward") on the module, in place, with one PassManager, and
  /// returns its passes in the order they ran. Throws Error naming the bad
  /// pass or the diagnostics of a failing one.
  std::vector<PassRun> runPipeline(const std::string &pipeline,
                                   bool snapshots = false);
  /// Runs the stage's pipeline (stagePipeline) as runPipeline does.
  std::vector<PassRun> runStage(const std::string &stage,
                                const StageChoice &choice,
                                bool snapshots = false);
  /// Outlines JIT regions of at least `minOps` ops, with or without the
  /// cost model the round trip uses (fxmlir-outline-jit-regions alone).
  void outlineJitRegions(int64_t minOps, bool costModel);
  /// An outlined JIT region: a private function of the module, the device
  /// type its tensors live on ("cpu", "cuda") and its text, all an
  /// mlir_jit call of it needs.
  struct JitRegion {
    std::string name;
    std::string deviceType;
    std::string text;
  };
  /// The module's JIT regions, in module order.
  std::vector<JitRegion> jitRegions() const;
  /// The functions of the module as a JSON graph: arguments, ops with their
  /// operands, results, types and attributes, and returned values. This is
  /// what the Python exporter rebuilds an FX graph from. Throws Error for an
  /// integer attribute that does not fit in 64 bits.
  std::string toJson() const;
  /// How many ops of each name the module holds (functions and module
  /// excluded).
  std::map<std::string, int64_t> opCounts() const;
  /// A deep copy in the same context.
  Module clone() const;
  /// Puts the ops of the JIT region @name back in the graph in place of
  /// its calls (a region that does not compile costs only itself). Throws
  /// Error when the module has no such region.
  void inlineJitRegion(const std::string &name);

  /// A site a fusion pass tried its patterns on and left unfused: the root
  /// op of the patterns, the pattern that came closest to matching and the
  /// check it failed.
  struct UnfusedSite {
    /// The fusion pass, e.g. "fxmlir-fuse-bias-add-activation".
    std::string pass;
    /// The root op's name and location (its FX node's name).
    std::string op;
    std::string location;
    /// The pattern that came closest: one whose ops all matched and a
    /// constraint failed over one whose ops did not match; then the larger
    /// pattern (DRR's benefit is its op count).
    std::string pattern;
    /// The check it failed, as the pattern reported it (a DRR constraint's
    /// description), and the location of the op it failed at.
    std::string reason;
    std::string reasonLocation;
    /// The name of the op at reasonLocation ("fxmlir.aten.mm"), when it is
    /// the root or one of its operands' producers; else "".
    std::string reasonOp;
    /// The other patterns tried at the site: "Pattern: reason".
    std::vector<std::string> others;
  };

  /// Runs a pipeline as runPipeline does, listening to its fusion passes
  /// (those applying patterns with fusionRewriteConfig), and returns the
  /// sites they left unfused, in the order the passes first tried them;
  /// then the ops fxmlir-outline-jit-regions marked as left out of its
  /// regions (its explain option), with pattern "JIT region". Ops a region
  /// took are not unfused.
  std::vector<UnfusedSite> explainFusions(const std::string &pipeline);
  /// explainFusions of the stage's pipeline (stagePipeline), JIT regions
  /// with their verdicts where the choice runs them.
  std::vector<UnfusedSite> explainStage(const std::string &stage,
                                        StageChoice choice);

  struct Impl;

private:
  explicit Module(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

/// fxmlir-opt: mlir-opt with the fxmlir dialect, passes and pipelines.

FXMLIR_API int optMain(int argc, char **argv);

} // namespace fxmlir

#endif // FXMLIR_CORE_CORE_H
