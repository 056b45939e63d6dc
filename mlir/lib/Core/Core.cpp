//===- Core.cpp - Context and Module --------------------------------------===//

#include "CoreImpl.h"
#include "../Support/Diagnostics.h"

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Registration/InitAll.h"
#include "fxmlir/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace fxmlir;

Context::Impl::Impl() : context(makeContext()) {
  context->loadAllAvailableDialects();
  registerAllPasses();
}

Context::Context() : impl(std::make_shared<Impl>()) {}
Context::~Context() = default;

bool Context::isRegisteredOp(const std::string &name) const {
  return mlir::RegisteredOperationName::lookup(name, impl->context.get())
      .has_value();
}

std::vector<std::string> Context::dialectOps() const {
  std::vector<std::string> names;
  for (mlir::RegisteredOperationName op :
       impl->context->getRegisteredOperations())
    if (op.getDialectNamespace() == "fxmlir")
      names.push_back(op.getStringRef().str());
  llvm::sort(names);
  return names;
}


void fxmlir::addPipeline(mlir::PassManager &pm, const std::string &pipeline) {
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, errorStream)))
    throw Error("bad pass pipeline '" + pipeline + "': " + parseErrors);
}

void fxmlir::runPassManager(mlir::PassManager &pm, mlir::ModuleOp module,
                            const std::string &pipeline) {
  DiagnosticCollector diagnostics(module->getContext());
  if (mlir::failed(pm.run(module)))
    diagnostics.fail("pass pipeline '" + pipeline + "' failed");
}

Module::Module(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Module::Module(Module &&) noexcept = default;
Module &Module::operator=(Module &&) noexcept = default;
Module::~Module() = default;

Module Module::parse(Context &context, const std::string &text,
                     const std::string &bufferName) {
  if (std::optional<std::string> tooDeep =
          findExcessiveNesting(text, bufferName))
    throw Error("cannot parse " + bufferName + ":\n" + *tooDeep);
  mlir::MLIRContext *ctx = context.impl->context.get();
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  // Prints "name:line:col: error: ..." with the offending source line.
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, ctx, errorStream);
  // Registered last, called first: notes where the first error is, then
  // lets the handler above print it.
  std::optional<size_t> firstError;
  mlir::ScopedDiagnosticHandler locate(ctx, [&](mlir::Diagnostic &d) {
    auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation());
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error && loc &&
        !firstError) {
      llvm::SMLoc at = sourceMgr.FindLocForLineAndColumn(
          sourceMgr.getMainFileID(), loc.getLine(), loc.getColumn());
      if (at.isValid())
        firstError = at.getPointer() - sourceMgr.getMemoryBuffer(
                                           sourceMgr.getMainFileID())
                                           ->getBufferStart();
    }
    return mlir::failure();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, mlir::ParserConfig(ctx));
  if (!module) {
    std::optional<std::string> truncated =
        firstError ? describeTruncation(text, *firstError) : std::nullopt;
    throw Error("cannot parse " + bufferName + ":\n" +
                (truncated ? *truncated + "\n" : "") + errors);
  }
  auto impl = std::make_unique<Impl>();
  impl->context = context.impl;
  impl->module = std::move(module);
  return Module(std::move(impl));
}

/// How dumps print: each value named after its FX node where its op kept
/// the node's name location.
static mlir::OpPrintingFlags dumpFlags() {
  return mlir::OpPrintingFlags().printNameLocAsPrefix();
}

std::string Module::str(bool generic, bool fxNames) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags = fxNames ? dumpFlags() : mlir::OpPrintingFlags();
  if (generic)
    flags.printGenericOpForm();
  impl->module->print(os, flags);
  return text;
}

void Module::verify() const {
  DiagnosticCollector diagnostics(impl->module->getContext());
  if (mlir::failed(mlir::verify(*impl->module)))
    diagnostics.fail("module does not verify");
}

namespace {
/// MLIR's IR printing, used to learn which passes ran, in order, and (when
/// asked) the module each left.
class PassRecorder : public mlir::PassManager::IRPrinterConfig {
public:
  PassRecorder(std::vector<mlir::Pass *> &passes,
               std::vector<std::string> &snapshots, bool takeSnapshots)
      : IRPrinterConfig(/*printModuleScope=*/true,
                        /*printAfterOnlyOnChange=*/false,
                        /*printAfterOnlyOnFailure=*/false, dumpFlags()),
        passes(passes),
        snapshots(snapshots), takeSnapshots(takeSnapshots) {}

  void printAfterIfEnabled(mlir::Pass *pass, mlir::Operation *,
                           PrintCallbackFn print) override {
    passes.push_back(pass);
    std::string text;
    if (takeSnapshots) {
      llvm::raw_string_ostream os(text);
      print(os);
    }
    snapshots.push_back(std::move(text));
  }

private:
  std::vector<mlir::Pass *> &passes;
  std::vector<std::string> &snapshots;
  bool takeSnapshots;
};

/// MLIR's pass timing, kept per pass (the timers' ids are the passes) at
/// the clock's resolution.
class PassClock : public mlir::TimingManager {
public:
  double milliseconds(const void *pass) const {
    auto it = timers.find(pass);
    return it == timers.end()
               ? 0.0
               : std::chrono::duration<double, std::milli>(it->second.total)
                     .count();
  }

protected:
  std::optional<void *> rootTimer() override { return &root; }
  void startTimer(void *handle) override {
    static_cast<Timer *>(handle)->start = Clock::now();
  }
  void stopTimer(void *handle) override {
    auto *timer = static_cast<Timer *>(handle);
    timer->total += Clock::now() - timer->start;
  }
  void *nestTimer(void *, const void *id,
                  llvm::function_ref<std::string()>) override {
    return &timers[id]; // std::map keeps the address stable.
  }
  void hideTimer(void *) override {}

private:
  using Clock = std::chrono::steady_clock;
  struct Timer {
    Clock::time_point start;
    Clock::duration total{};
  };
  Timer root;
  std::map<const void *, Timer> timers;
};
} // namespace

std::vector<Module::PassRun> Module::runPipeline(const std::string &pipeline,
                                                 bool snapshots) {
  mlir::MLIRContext *ctx = impl->module->getContext();
  mlir::PassManager pm(ctx);
  addPipeline(pm, pipeline);
  std::vector<mlir::Pass *> passes;
  std::vector<std::string> texts;
  pm.enableIRPrinting(std::make_unique<PassRecorder>(passes, texts, snapshots));
  PassClock clock;
  mlir::TimingScope timing = clock.getRootScope();
  pm.enableTiming(timing);
  runPassManager(pm, *impl->module, pipeline);
  timing.stop();
  std::vector<PassRun> runs;
  for (auto [pass, text] : llvm::zip_equal(passes, texts))
    runs.push_back(
        {pass->getArgument().str(), clock.milliseconds(pass), std::move(text)});
  return runs;
}

std::vector<Module::PassRun> Module::runStage(const std::string &stage,
                                              const StageChoice &choice,
                                              bool snapshots) {
  return runPipeline(stagePipeline(stage, choice), snapshots);
}

void Module::outlineJitRegions(int64_t minOps, bool costModel) {
  runPipeline("fxmlir-outline-jit-regions{min-ops=" + std::to_string(minOps) +
              " cost-model=" + (costModel ? "true" : "false") + "}");
}

/// The device type of a function's tensors: its first tensor argument's
/// or result's (a region never mixes devices), CPU's without one.
static std::string deviceTypeOf(mlir::func::FuncOp function) {
  mlir::FunctionType type = function.getFunctionType();
  for (mlir::Type value :
       llvm::concat<const mlir::Type>(type.getInputs(), type.getResults()))
    if (DeviceAttr device = getDevice(value))
      return device.getType().str();
  return "cpu";
}

std::vector<Module::JitRegion> Module::jitRegions() const {
  std::vector<JitRegion> regions;
  for (auto function : impl->module->getOps<mlir::func::FuncOp>()) {
    if (!function.isPrivate() || function.isExternal())
      continue;
    std::string text;
    llvm::raw_string_ostream os(text);
    function->print(os, mlir::OpPrintingFlags().useLocalScope());
    os << "\n";
    regions.push_back(
        {function.getSymName().str(), deviceTypeOf(function), std::move(text)});
  }
  return regions;
}

std::string Module::toJson() const { return moduleToJson(*impl->module); }

std::map<std::string, int64_t> Module::opCounts() const {
  std::map<std::string, int64_t> counts;
  impl->module->walk([&](mlir::Operation *op) {
    if (!llvm::isa<mlir::ModuleOp, mlir::func::FuncOp>(op))
      ++counts[op->getName().getStringRef().str()];
  });
  return counts;
}

void Module::inlineJitRegion(const std::string &name) {
  if (failed(fxmlir::inlineJitRegion(*impl->module, name)))
    throw Error("the module has no JIT region @" + name);
}

Module Module::clone() const {
  auto copy = std::make_unique<Impl>();
  copy->context = impl->context;
  copy->module = impl->module->clone();
  return Module(std::move(copy));
}
