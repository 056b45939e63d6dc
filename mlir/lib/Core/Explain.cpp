//===- Explain.cpp - why fusion sites did not fuse ------------------------===//
//
// Runs a pipeline with a rewrite listener on its fusion passes. The greedy
// driver tells the listener which pattern it tries on which root op, why
// the pattern failed (DRR reports the check that failed through
// notifyMatchFailure) and which ops a rewrite erased; a root op that no
// pattern rewrote is an unfused site.
//
//===----------------------------------------------------------------------===//

#include "CoreImpl.h"

#include "fxmlir/Transforms/FusionConfig.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"

#include <cctype>
#include <set>

using namespace mlir;
using UnfusedSite = fxmlir::Module::UnfusedSite;

/// The pass whose explain option marks ops with kLeftOutAttr.
static constexpr llvm::StringLiteral kOutlinePass =
    "fxmlir-outline-jit-regions";

namespace {
/// The name of a NameLoc (an FX node's name), or the location printed.
std::string locationName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << loc;
  return text;
}

/// The pattern's name without namespaces, template arguments kept:
/// "FuseActivationDropout<DropoutOp>" for "fxmlir::{anonymous}::
/// FuseActivationDropout<fxmlir::DropoutOp>".
std::string patternName(const Pattern &pattern) {
  std::string name = pattern.getDebugName().str();
  // Anonymous namespaces as clang and GCC spell them.
  for (StringRef scope : {"(anonymous namespace)::", "{anonymous}::"})
    for (size_t at; (at = name.find(scope.str())) != std::string::npos;)
      name.erase(at, scope.size());
  // Each qualifier: the identifier before a "::", with the "::".
  std::string result;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, 2, "::") == 0) {
      while (!result.empty() &&
             (std::isalnum(static_cast<unsigned char>(result.back())) ||
              result.back() == '_'))
        result.pop_back();
      ++i;
      continue;
    }
    result += name[i];
  }
  return result;
}

struct Attempt {
  std::string pattern;
  std::string reason;
  std::string reasonLocation;
  std::string reasonOp;
  unsigned benefit;
  /// DRR checks constraints after every op of the pattern matched.
  bool failedConstraint;
};

struct Site {
  std::string op;
  std::string location;
  std::vector<Attempt> attempts;
};

class FusionExplainer : public RewriterBase::Listener,
                        public PassInstrumentation {
public:
  std::vector<UnfusedSite> sites;

  void runBeforePass(Pass *pass, Operation *) override {
    currentPass = pass->getArgument().str();
  }

  /// Ops of one pass are keyed by address: close the pass before another
  /// may reuse the address of an op erased without notice.
  void runAfterPass(Pass *, Operation *) override {
    for (auto &[op, site] : open)
      if (!site.attempts.empty())
        sites.push_back(describe(site));
    open.clear();
  }

  void runAfterPassFailed(Pass *pass, Operation *op) override {
    runAfterPass(pass, op);
  }

  void notifyPatternBegin(const Pattern &pattern, Operation *op) override {
    root = op;
    current = Attempt{patternName(pattern), "", "", "",
                      pattern.getBenefit().getBenefit(), false};
    Site &site = open[op];
    if (site.op.empty()) {
      site.op = op->getName().getStringRef().str();
      site.location = locationName(op->getLoc());
    }
  }

  void
  notifyMatchFailure(Location loc,
                     function_ref<void(Diagnostic &)> reasonCallback) override {
    if (!root || !current.reason.empty())
      return;
    Diagnostic diagnostic(loc, DiagnosticSeverity::Remark);
    reasonCallback(diagnostic);
    current.reason = diagnostic.str();
    current.reasonLocation = locationName(loc);
    current.reasonOp = opAt(loc);
    current.failedConstraint =
        StringRef(current.reason).contains("failed to satisfy constraint");
  }

  void notifyPatternEnd(const Pattern &, LogicalResult status) override {
    Operation *op = std::exchange(root, nullptr);
    auto it = open.find(op);
    if (it == open.end())
      return;
    if (succeeded(status)) {
      open.erase(it); // fused (its root is usually erased too)
      return;
    }
    // A pattern for another device missed nothing here.
    if (current.reason == fxmlir::kOtherDeviceReason)
      return;
    std::vector<Attempt> &attempts = it->second.attempts;
    // The driver retries an op each time its neighbourhood changes.
    bool seen = llvm::any_of(attempts, [&](const Attempt &a) {
      return a.pattern == current.pattern && a.reason == current.reason;
    });
    if (!seen)
      attempts.push_back(current);
  }

  void notifyOperationErased(Operation *op) override { open.erase(op); }

private:
  /// The name of the op at `loc` among the root and its operands' producers
  /// (where patterns check), or "" when none is there.
  std::string opAt(Location loc) const {
    if (root->getLoc() == loc)
      return root->getName().getStringRef().str();
    for (Value operand : root->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        if (producer->getLoc() == loc)
          return producer->getName().getStringRef().str();
    return "";
  }

  UnfusedSite describe(const Site &site) const {
    std::vector<Attempt> ranked = site.attempts;
    llvm::stable_sort(ranked, [](const Attempt &a, const Attempt &b) {
      return std::make_pair(a.failedConstraint, a.benefit) >
             std::make_pair(b.failedConstraint, b.benefit);
    });
    const Attempt &best = ranked.front();
    UnfusedSite result{currentPass,         site.op,       site.location,
                       best.pattern,        best.reason,   best.reasonLocation,
                       best.reasonOp,       {}};
    for (const Attempt &other : llvm::drop_begin(ranked))
      result.others.push_back(other.pattern + ": " + other.reason);
    return result;
  }

  std::string currentPass;
  Operation *root = nullptr;
  Attempt current;
  llvm::MapVector<Operation *, Site> open;
};
} // namespace

namespace fxmlir {
std::vector<UnfusedSite> Module::explainFusions(const std::string &pipeline) {
  mlir::PassManager pm(impl->module->getContext());
  addPipeline(pm, pipeline);
  auto explainer = std::make_unique<FusionExplainer>();
  FusionExplainer *listener = explainer.get();
  pm.addInstrumentation(std::move(explainer));
  fxmlir::ScopedFusionListener scope(listener);
  runPassManager(pm, *impl->module, pipeline);
  // A site a later pass fused (a GELU the GEMM epilogue left to the bias
  // fusion) is gone by the end: only ops still there are unfused.
  // Ops a JIT region took (cloned into its private function) are not
  // unfused either: only the graphs' own ops count.
  std::set<std::pair<std::string, std::string>> remaining;
  for (auto graph : impl->module->getOps<func::FuncOp>())
    if (!graph.isPrivate())
      graph.walk([&](Operation *op) {
        remaining.emplace(op->getName().getStringRef().str(),
                          locationName(op->getLoc()));
      });
  std::vector<UnfusedSite> sites;
  for (UnfusedSite &site : listener->sites)
    if (remaining.count({site.op, site.location}))
      sites.push_back(std::move(site));
  // The ops fxmlir-outline-jit-regions left out, with why (its explain
  // option), in the graphs' order.
  impl->module->walk([&](Operation *op) {
    if (auto why = op->getAttrOfType<StringAttr>(fxmlir::kLeftOutAttr))
      sites.push_back({kOutlinePass.str(), op->getName().getStringRef().str(),
                       locationName(op->getLoc()), "JIT region", why.str(),
                       "", "", {}});
  });
  return sites;
}

std::vector<UnfusedSite> Module::explainStage(const std::string &stage,
                                              StageChoice choice) {
  choice.regionVerdicts = true;
  return explainFusions(stagePipeline(stage, choice));
}
} // namespace fxmlir
