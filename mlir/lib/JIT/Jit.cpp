//===- Jit.cpp - compiling, caching and running JIT functions -------------===//
//
// A compile request is answered from the in-memory cache, else from the
// disk cache (when the entry verifies and its signature is the function's),
// else by lowering (under one lock: the MLIR context is not thread-safe) and
// generating an object file. Either way the object file is linked into its
// own JITDylib of one LLJIT. Concurrent requests for one key wait for a
// single compile.
//
//===----------------------------------------------------------------------===//

#include "CpuCodegen.h"
#include "CpuRuntime.h"
#include "CudaCodegen.h"
#include "CudaRuntime.h"
#include "DiskCache.h"
#include "Specialize.h"

#include "../Support/Diagnostics.h"

#include "fxmlir/Codegen/Passes.h"
#include "fxmlir/Registration/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <future>
#include <map>
#include <mutex>
#include <utility>

using namespace fxmlir;
using namespace fxmlir::jit;

size_t jit::elementSize(DType dtype) {
  switch (dtype) {
  case DType::Bool:
  case DType::UInt8:
  case DType::Int8:
    return 1;
  case DType::Int16:
  case DType::Float16:
  case DType::BFloat16:
    return 2;
  case DType::Int32:
  case DType::Float32:
    return 4;
  case DType::Int64:
  case DType::Float64:
    return 8;
  }
  throw Error("unknown dtype");
}

std::string jit::dtypeName(DType dtype) {
  static constexpr const char *kNames[] = {
      "i1", "ui8", "si8", "si16", "si32", "si64", "f16", "bf16", "f32", "f64"};
  return kNames[static_cast<int>(dtype)];
}

//===----------------------------------------------------------------------===//
// CompiledFunction
//===----------------------------------------------------------------------===//

CompiledFunction::~CompiledFunction() = default;

static std::string shapeString(const std::vector<int64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") +
            (dims[i] == kDynamic ? std::string("?") : std::to_string(dims[i]));
  return text + "]";
}

/// Throws Error unless the shapes (shapeOf(i) for input i) fit the
/// signature's inputs.
template <typename ShapeOf>
static void checkInputShapes(const Signature &signature, size_t count,
                             ShapeOf shapeOf) {
  if (count != signature.inputs.size())
    throw Error("the function takes " +
                std::to_string(signature.inputs.size()) + " inputs, got " +
                std::to_string(count));
  for (size_t i = 0; i < count; ++i) {
    const std::vector<int64_t> &shape = shapeOf(i);
    const std::vector<int64_t> &expected = signature.inputs[i].dims;
    bool matches = shape.size() == expected.size();
    for (size_t d = 0; matches && d < expected.size(); ++d)
      matches = shape[d] >= 0 &&
                (expected[d] == kDynamic || expected[d] == shape[d]);
    if (!matches)
      throw Error("input " + std::to_string(i) + " has shape " +
                  shapeString(shape) + ", the function was compiled for " +
                  shapeString(expected));
  }
}

/// The size of a result dim: an input's dim (shapeOf(i) for input i) or a
/// static size.
template <typename ShapeOf>
static int64_t resultDim(const DimSource &dim, ShapeOf shapeOf) {
  return dim.input >= 0 ? shapeOf(dim.input)[dim.dim] : dim.size;
}

std::vector<std::vector<int64_t>> CompiledFunction::resultShapes(
    const std::vector<std::vector<int64_t>> &inputShapes) const {
  const Signature &sig = signature();
  auto shapeOf = [&](size_t i) -> const std::vector<int64_t> & {
    return inputShapes[i];
  };
  checkInputShapes(sig, inputShapes.size(), shapeOf);
  std::vector<std::vector<int64_t>> shapes;
  for (const ResultSpec &result : sig.results) {
    std::vector<int64_t> &shape = shapes.emplace_back();
    for (const DimSource &dim : result.dims)
      shape.push_back(resultDim(dim, shapeOf));
  }
  return shapes;
}

static int64_t numElements(const std::vector<int64_t> &sizes) {
  int64_t count = 1;
  for (int64_t size : sizes)
    count *= size;
  return count;
}

// Runs on every call: it compares in place, allocating nothing (a region
// call on a small tensor costs a few microseconds in all).
void CompiledFunction::check(const std::vector<Buffer> &inputs,
                             const std::vector<Buffer> &outputs) const {
  const Signature &sig = signature();
  auto shapeOf = [&](size_t i) -> const std::vector<int64_t> & {
    return inputs[i].sizes;
  };
  checkInputShapes(sig, inputs.size(), shapeOf);
  if (outputs.size() != sig.results.size())
    throw Error("the function has " + std::to_string(sig.results.size()) +
                " results, got " + std::to_string(outputs.size()) +
                " output buffers");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::vector<DimSource> &dims = sig.results[i].dims;
    const std::vector<int64_t> &sizes = outputs[i].sizes;
    bool matches = sizes.size() == dims.size();
    for (size_t d = 0; matches && d < dims.size(); ++d)
      matches = sizes[d] == resultDim(dims[d], shapeOf);
    if (!matches) {
      std::vector<int64_t> expected;
      for (const DimSource &dim : dims)
        expected.push_back(resultDim(dim, shapeOf));
      throw Error("output " + std::to_string(i) + " has shape " +
                  shapeString(sizes) + ", the result has shape " +
                  shapeString(expected));
    }
  }
  auto checkData = [](const std::vector<Buffer> &buffers, const char *what) {
    for (size_t i = 0; i < buffers.size(); ++i)
      if (!buffers[i].data && numElements(buffers[i].sizes) != 0)
        throw Error(std::string(what) + " " + std::to_string(i) +
                    " has no data");
  };
  checkData(inputs, "input");
  checkData(outputs, "output");
}

void CompiledFunction::run(const std::vector<Buffer> &inputs,
                           const std::vector<Buffer> &outputs) const {
  check(inputs, outputs);
  call(inputs, outputs, 0, -1);
}

void CompiledFunction::runRows(const std::vector<Buffer> &inputs,
                               const std::vector<Buffer> &outputs,
                               int64_t begin, int64_t end) const {
  if (!signature().rowsSplittable)
    throw Error("the function cannot be run in slices of rows");
  check(inputs, outputs);
  int64_t rows = rowCount(inputs);
  if (begin < 0 || begin > end || end > rows)
    throw Error("rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                ") are not within the " + std::to_string(rows) + " rows");
  if (begin < end)
    call(inputs, outputs, begin, end);
}

int64_t CompiledFunction::rowCount(const std::vector<Buffer> &inputs) const {
  const Signature &sig = signature();
  if (!sig.rowsSplittable)
    throw Error("the function cannot be run in slices of rows");
  int64_t rows = -1;
  for (size_t i = 0; i < inputs.size() && i < sig.rowInputs.size(); ++i) {
    int64_t rowDim = sig.rowDimIn(inputs[i].sizes.size());
    if (!sig.rowInputs[i] || rowDim < 0)
      continue;
    int64_t own = inputs[i].sizes[rowDim];
    if (rows >= 0 && own != rows)
      throw Error("the row inputs disagree on their number of rows: " +
                  std::to_string(rows) + " and " + std::to_string(own) +
                  " (input " + std::to_string(i) + ")");
    rows = own;
  }
  return std::max<int64_t>(rows, 0);
}

/// Appends the memref descriptor {allocated, aligned, offset, sizes,
/// strides} of a contiguous buffer to `descriptors`, restricted to rows
/// [begin, end) of dim `rowDim` when end >= 0 (the dims before it are 1 or
/// it is dim 0: the rows are a contiguous block).
static void describe(llvm::SmallVectorImpl<int64_t> &descriptors,
                     const Buffer &buffer, size_t elementBytes, int64_t rowDim,
                     int64_t begin, int64_t end) {
  size_t rank = buffer.sizes.size();
  size_t first = descriptors.size();
  descriptors.resize(first + 3 + 2 * rank, 0);
  int64_t *descriptor = descriptors.data() + first;
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    descriptor[3 + d] = buffer.sizes[d];
    descriptor[3 + rank + d] = stride;
    stride *= buffer.sizes[d];
  }
  auto *data = static_cast<char *>(buffer.data);
  if (end >= 0 && rowDim >= 0 && static_cast<size_t>(rowDim) < rank) {
    data += begin * descriptor[3 + rank + rowDim] *
            static_cast<int64_t>(elementBytes);
    descriptor[3 + rowDim] = end - begin;
  }
  descriptor[0] = descriptor[1] = reinterpret_cast<intptr_t>(data);
}

void CompiledFunction::call(const std::vector<Buffer> &inputs,
                            const std::vector<Buffer> &outputs, int64_t begin,
                            int64_t end) const {
  const Signature &sig = signature();
  // One array for every descriptor, on the stack for the usual ranks.
  llvm::SmallVector<int64_t, 128> descriptors;
  llvm::SmallVector<size_t, 16> starts;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool sliced = end >= 0 && sig.rowInputs[i];
    starts.push_back(descriptors.size());
    describe(descriptors, inputs[i], elementSize(sig.inputs[i].dtype),
             sig.rowDimIn(inputs[i].sizes.size()), sliced ? begin : 0,
             sliced ? end : -1);
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    bool sliced = end >= 0 && !sig.summedResults[i] && !sig.isWholeResult(i);
    starts.push_back(descriptors.size());
    describe(descriptors, outputs[i], elementSize(sig.results[i].dtype),
             sig.rowDimIn(outputs[i].sizes.size()), sliced ? begin : 0,
             sliced ? end : -1);
  }
  llvm::SmallVector<void *, 16> pointers;
  for (size_t start : starts)
    pointers.push_back(descriptors.data() + start);
  invoke(pointers.data());
}

/// The stream CudaFunction::launch passes to invoke on this thread.
static thread_local void *launchStream = nullptr;

void CudaFunction::launch(const std::vector<Buffer> &inputs,
                          const std::vector<Buffer> &outputs,
                          void *stream) const {
  void *previous = launchStream;
  launchStream = stream;
  try {
    run(inputs, outputs);
  } catch (...) {
    launchStream = previous;
    throw;
  }
  launchStream = previous;
}

//===----------------------------------------------------------------------===//
// Jit
//===----------------------------------------------------------------------===//

namespace {
/// Code linked into the JIT; keeps the JIT alive while it is referenced.
class LoadedFunction : public CompiledFunction {
public:
  LoadedFunction(std::shared_ptr<llvm::orc::LLJIT> owner, Signature signature,
                 void (*entry)(void **))
      : owner(std::move(owner)), sig(std::move(signature)), entry(entry) {}

  const Signature &signature() const override { return sig; }

protected:
  void invoke(void **descriptors) const override { entry(descriptors); }

private:
  std::shared_ptr<llvm::orc::LLJIT> owner;
  Signature sig;
  void (*entry)(void **);
};

/// CUDA host code linked into the JIT: its kernels are loaded while it
/// lives.
class LoadedCudaFunction : public CudaFunction {
public:
  LoadedCudaFunction(std::shared_ptr<llvm::orc::LLJIT> owner,
                     Signature signature, const CudaDriver &driver,
                     void (*entry)(void **), void (*load)(), void (*unload)())
      : owner(std::move(owner)), sig(std::move(signature)), driver(driver),
        entry(entry), unload(unload) {
    CudaCall call(driver, nullptr);
    load();
    if (!call.ok()) {
      unload();
      call.check("cannot load the kernels");
    }
  }
  ~LoadedCudaFunction() override {
    // Failures are ignored: at exit the context may be gone already.
    CudaCall call(driver, nullptr);
    unload();
  }

  const Signature &signature() const override { return sig; }

protected:
  void invoke(void **descriptors) const override {
    CudaCall call(driver, launchStream);
    entry(descriptors);
    call.check("cannot launch the kernels");
  }

private:
  std::shared_ptr<llvm::orc::LLJIT> owner;
  Signature sig;
  CudaDriver driver;
  void (*entry)(void **);
  void (*unload)();
};

using Seconds = std::chrono::duration<double>;
using Clock = std::chrono::steady_clock;

template <typename T> T unwrap(llvm::Expected<T> value, const char *what) {
  if (!value)
    throw Error(std::string(what) + ": " + llvm::toString(value.takeError()));
  return std::move(*value);
}

void checkError(llvm::Error error, const char *what) {
  if (error)
    throw Error(std::string(what) + ": " + llvm::toString(std::move(error)));
}

/// Collects the errors ORC reports on this thread while it lives. A link
/// failure's cause (the symbols not found) is reported to the session, not
/// returned: the lookup only says that materialization failed.
class OrcErrors {
public:
  OrcErrors() : previous(current) { current = this; }
  ~OrcErrors() { current = previous; }
  OrcErrors(const OrcErrors &) = delete;
  OrcErrors &operator=(const OrcErrors &) = delete;

  /// The session's error reporter: to the collector of this thread, else
  /// to stderr as ORC does by default.
  static void report(llvm::Error error) {
    if (current)
      current->messages.push_back(llvm::toString(std::move(error)));
    else
      llvm::logAllUnhandledErrors(std::move(error), llvm::errs(),
                                  "JIT session error: ");
  }

  /// The value, or an Error saying `what` with ORC's reports and `value`'s
  /// error.
  template <typename T> T unwrap(llvm::Expected<T> value, const char *what) {
    if (!value)
      throw Error(std::string(what) + ": " + reasons(value.takeError()));
    return std::move(*value);
  }
  void check(llvm::Error error, const char *what) {
    if (error)
      throw Error(std::string(what) + ": " + reasons(std::move(error)));
  }

private:
  std::string reasons(llvm::Error error) {
    std::string text;
    for (const std::string &message : messages)
      text += message + "; ";
    return text + llvm::toString(std::move(error));
  }

  static thread_local OrcErrors *current;
  OrcErrors *previous;
  std::vector<std::string> messages;
};

thread_local OrcErrors *OrcErrors::current = nullptr;

/// Identifies this build of the core (its file's size and time): compiled
/// code from another build may differ.
std::string buildIdentity() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&buildIdentity), &info) ||
      !info.dli_fname)
    return "unknown";
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(info.dli_fname, status))
    return info.dli_fname;
  return std::to_string(status.getSize()) + "-" +
         std::to_string(
             status.getLastModificationTime().time_since_epoch().count());
}

/// Compiled functions by key, each made once.
template <typename T>
using Cache =
    std::map<std::string, std::shared_future<std::shared_ptr<const T>>>;
} // namespace

struct Jit::Impl {
  Impl(const JitOptions &options);

  /// The disk cache's name of the code of `function` for `inputs` and
  /// `target` ("cpu", or the CUDA chip and features).
  std::string key(const std::string &text, const std::string &function,
                  const std::vector<TensorSpec> &inputs,
                  const std::string &target) const;
  std::shared_ptr<const CompiledFunction> load(const std::string &key,
                                               const CachedObject &entry);
  std::shared_ptr<const CudaFunction> loadCuda(const std::string &key,
                                               const CachedObject &entry,
                                               const CudaTarget &target);
  template <typename T, typename Link>
  std::shared_ptr<const T> loadFromDisk(const std::string &key,
                                        const Signature &expected, Link &&link);
  void storeOnDisk(const std::string &key, const CachedObject &entry);
  void warnOnce(bool &warned, const std::string &message);
  llvm::orc::JITDylib &createDylib();
  /// Defines functions of this process by name in `dylib`.
  void defineSymbols(
      llvm::orc::JITDylib &dylib,
      const std::vector<std::pair<const char *, void *>> &symbols,
      const char *what);
  /// The code of `function` for `inputs`: from the disk cache when its
  /// entry holds the function's signature, else lowered by `lower`
  /// (module, target machine -> object) and stored. `link` loads an
  /// object.
  template <typename T, typename Lower, typename Link>
  std::shared_ptr<const T> compileOrLoad(const std::string &key,
                                         const std::string &text,
                                         const std::string &function,
                                         const std::vector<TensorSpec> &inputs,
                                         Lower &&lower, Link &&link);

  /// What one compile needs to itself: an MLIR context (not shared across
  /// threads) and a target machine (not thread-safe either).
  struct Compiler {
    explicit Compiler(llvm::orc::JITTargetMachineBuilder &builder)
        : context(makeContext()),
          machine(unwrap(builder.createTargetMachine(),
                         "cannot target the host CPU")) {}
    std::unique_ptr<mlir::MLIRContext> context;
    std::unique_ptr<llvm::TargetMachine> machine;
  };
  /// Runs `work` with an idle compiler (a new one when every compiler is
  /// busy), so that regions compile in parallel on as many threads as ask.
  /// When the last busy one comes back, all but one idle compiler go: a
  /// context per core would otherwise stay for the life of the process.
  template <typename Work> auto withCompiler(Work &&work);

  DiskCache disk;
  std::string targetIdentity;
  llvm::orc::JITTargetMachineBuilder machineBuilder;

  std::mutex compilersMutex;
  std::vector<std::unique_ptr<Compiler>> idleCompilers;
  int64_t busyCompilers = 0;

  std::shared_ptr<llvm::orc::LLJIT> lljit;

  std::mutex cacheMutex;
  Cache<CompiledFunction> cache;
  Cache<CudaFunction> cudaCache;
  JitStats stats;
  int64_t dylibs = 0;
  std::vector<std::string> warnings;
  bool warnedDiscard = false, warnedStore = false;
};

/// Finds `key` in `cache` or makes its value with `make`, once however many
/// threads ask; a failure is not cached. Counts memory hits in `stats`.
template <typename T, typename Make>
static std::shared_ptr<const T> cached(std::mutex &mutex, Cache<T> &cache,
                                       JitStats &stats, const std::string &key,
                                       Make &&make) {
  std::promise<std::shared_ptr<const T>> promise;
  std::shared_future<std::shared_ptr<const T>> pending;
  bool makes = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = cache.find(key);
    if (found != cache.end()) {
      ++stats.memoryHits;
      pending = found->second;
    } else {
      pending = promise.get_future().share();
      cache.emplace(key, pending);
      makes = true;
    }
  }
  if (!makes)
    return pending.get();
  try {
    std::shared_ptr<const T> value = make();
    promise.set_value(value);
    return value;
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(mutex);
    cache.erase(key);
    throw;
  }
}

Jit::Impl::Impl(const JitOptions &options)
    : disk(options.cacheDir ? *options.cacheDir : defaultCacheDir()),
      machineBuilder(unwrap(llvm::orc::JITTargetMachineBuilder::detectHost(),
                            "cannot target the host CPU")) {
  initializeJitTargets();
  registerAllPasses();
  machineBuilder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = unwrap(machineBuilder.createTargetMachine(),
                        "cannot target the host CPU");
  targetIdentity = machine->getTargetTriple().str() + " " +
                   machine->getTargetCPU().str() + " " +
                   machine->getTargetFeatureString().str() + " " +
                   buildIdentity();
  lljit = unwrap(llvm::orc::LLJITBuilder()
                     .setJITTargetMachineBuilder(machineBuilder)
                     .create(),
                 "cannot create the JIT");
  lljit->getExecutionSession().setErrorReporter(OrcErrors::report);
  // Said once here rather than for each entry the directory cannot hold.
  if (!disk.problem().empty())
    warnings.push_back("fxmlir JIT: not using the cache directory '" +
                       disk.dir() +
                       "', compiled code is kept in memory for this process "
                       "only: " +
                       disk.problem());
}

template <typename Work> auto Jit::Impl::withCompiler(Work &&work) {
  std::unique_ptr<Compiler> compiler;
  {
    // A new one is made under the lock too: it reads the shared builder.
    std::lock_guard<std::mutex> lock(compilersMutex);
    if (idleCompilers.empty()) {
      compiler = std::make_unique<Compiler>(machineBuilder);
    } else {
      compiler = std::move(idleCompilers.back());
      idleCompilers.pop_back();
    }
    ++busyCompilers;
  }
  // Back to the pool however `work` ends; the extra ones are destroyed
  // outside the lock.
  llvm::scope_exit giveBack([&] {
    std::vector<std::unique_ptr<Compiler>> extra;
    std::lock_guard<std::mutex> lock(compilersMutex);
    idleCompilers.push_back(std::move(compiler));
    if (--busyCompilers == 0 && idleCompilers.size() > 1) {
      extra.assign(std::make_move_iterator(idleCompilers.begin() + 1),
                   std::make_move_iterator(idleCompilers.end()));
      idleCompilers.resize(1);
    }
  });
  return work(*compiler);
}

std::string Jit::Impl::key(const std::string &text, const std::string &function,
                           const std::vector<TensorSpec> &inputs,
                           const std::string &target) const {
  llvm::SHA256 hash;
  auto add = [&](llvm::StringRef part) {
    hash.update(part);
    hash.update(llvm::StringRef("\0", 1));
  };
  add(targetIdentity);
  add(target);
  add(function);
  for (const TensorSpec &input : inputs) {
    add(dtypeName(input.dtype));
    for (int64_t dim : input.dims)
      add(std::to_string(dim));
  }
  add(text);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

void Jit::Impl::defineSymbols(
    llvm::orc::JITDylib &dylib,
    const std::vector<std::pair<const char *, void *>> &symbols,
    const char *what) {
  llvm::orc::SymbolMap map;
  for (auto [name, address] : symbols)
    map[lljit->mangleAndIntern(name)] = {
        llvm::orc::ExecutorAddr::fromPtr(address),
        llvm::JITSymbolFlags::Exported};
  checkError(dylib.define(llvm::orc::absoluteSymbols(std::move(map))), what);
}

llvm::orc::JITDylib &Jit::Impl::createDylib() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  auto created = lljit->createJITDylib("fxmlir_" + std::to_string(dylibs++));
  checkError(created.takeError(), "cannot create a JIT library");
  return *created;
}

std::shared_ptr<const CompiledFunction>
Jit::Impl::load(const std::string &key, const CachedObject &entry) {
  llvm::orc::JITDylib &dylib = createDylib();
  OrcErrors errors;
  try {
    defineSymbols(dylib, cpuRuntimeSymbols(),
                  "cannot define the CPU runtime functions");
    errors.check(lljit->addObjectFile(
                     dylib, llvm::MemoryBuffer::getMemBufferCopy(entry.object,
                                                                 key)),
                 "cannot load the compiled code");
    auto address = errors.unwrap(lljit->lookup(dylib, kEntrySymbol),
                                 "cannot link the compiled code");
    return std::make_shared<LoadedFunction>(lljit, entry.signature,
                                            address.toPtr<void (*)(void **)>());
  } catch (const Error &) {
    // Nothing of the library is in use: free its memory.
    llvm::consumeError(lljit->getExecutionSession().removeJITDylib(dylib));
    throw;
  }
}

void Jit::Impl::warnOnce(bool &warned, const std::string &message) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  if (!warned)
    warnings.push_back(message);
  warned = true;
}

/// The disk cache's code for `key` when its entry verifies, holds the
/// `expected` signature and `link` (CachedObject -> code) links it; else
/// null, the entry discarded.
template <typename T, typename Link>
std::shared_ptr<const T> Jit::Impl::loadFromDisk(const std::string &key,
                                                 const Signature &expected,
                                                 Link &&link) {
  CacheLookup lookup = disk.load(key);
  std::string problem = std::move(lookup.problem);
  if (lookup.entry && !(lookup.entry->signature == expected))
    problem = "the signature of its entry is not the function's";
  if (lookup.entry && problem.empty()) {
    try {
      return link(*lookup.entry);
    } catch (const Error &error) {
      problem = error.what();
    }
  }
  if (problem.empty())
    return nullptr;
  disk.discard(key);
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    ++stats.diskDiscarded;
  }
  warnOnce(warnedDiscard,
           "fxmlir JIT: discarded the cache entry " + key + " in '" +
               disk.dir() + "' (" + problem +
               "); compiled it again and rewrote it (further discarded "
               "entries are rebuilt without a warning)");
  return nullptr;
}

template <typename T, typename Lower, typename Link>
std::shared_ptr<const T> Jit::Impl::compileOrLoad(
    const std::string &key, const std::string &text,
    const std::string &function, const std::vector<TensorSpec> &inputs,
    Lower &&lower, Link &&link) {
  auto start = Clock::now();
  return withCompiler([&](Compiler &compiler) {
    // Parsed and analyzed first even for a disk hit: the entry must hold
    // the signature the function has for these inputs.
    SpecializedFunction specialized =
        specialize(*compiler.context, text, function, &inputs);
    if (std::shared_ptr<const T> loaded =
            loadFromDisk<T>(key, specialized.signature, link)) {
      std::lock_guard<std::mutex> lock(cacheMutex);
      ++stats.diskHits;
      stats.diskLoadSeconds += Seconds(Clock::now() - start).count();
      return loaded;
    }
    CachedObject entry;
    entry.signature = specialized.signature;
    entry.object = lower(*specialized.module, *compiler.machine);
    storeOnDisk(key, entry);
    std::shared_ptr<const T> loaded = link(entry);
    std::lock_guard<std::mutex> lock(cacheMutex);
    ++stats.compiled;
    stats.compileSeconds += Seconds(Clock::now() - start).count();
    return loaded;
  });
}

void Jit::Impl::storeOnDisk(const std::string &key,
                            const CachedObject &entry) {
  if (std::optional<std::string> error = disk.store(key, entry))
    warnOnce(warnedStore, "fxmlir JIT: cannot write to the cache directory '" +
                              disk.dir() + "' (" + *error +
                              "); compiled code is kept in memory for this "
                              "process only");
}

/// Links a CUDA host object (its PTX inside) against the mgpu* runtime and
/// loads its kernels into the current context.
std::shared_ptr<const CudaFunction>
Jit::Impl::loadCuda(const std::string &key, const CachedObject &entry,
                    const CudaTarget &target) {
  llvm::orc::JITDylib &dylib = createDylib();
  OrcErrors errors;
  try {
    defineSymbols(dylib, cudaRuntimeSymbols(),
                  "cannot define the CUDA runtime functions");
    errors.check(lljit->addObjectFile(
                     dylib, llvm::MemoryBuffer::getMemBufferCopy(entry.object,
                                                                 key)),
                 "cannot load the compiled code");
    auto lookup = [&](const char *symbol) {
      return errors.unwrap(lljit->lookup(dylib, symbol),
                           "cannot link the compiled code");
    };
    auto entryPoint = lookup(kEntrySymbol).toPtr<void (*)(void **)>();
    auto load = lookup(kCudaLoadSymbol).toPtr<void (*)()>();
    auto unload = lookup(kCudaUnloadSymbol).toPtr<void (*)()>();
    return std::make_shared<LoadedCudaFunction>(
        lljit, entry.signature, target.driver, entryPoint, load, unload);
  } catch (const Error &) {
    // Nothing of the library is in use: free its memory.
    llvm::consumeError(lljit->getExecutionSession().removeJITDylib(dylib));
    throw;
  }
}

Jit::Jit(JitOptions options) : impl(std::make_unique<Impl>(options)) {}
Jit::~Jit() = default;

Jit &Jit::shared() {
  static Jit instance;
  return instance;
}

Signature Jit::analyze(const std::string &moduleText,
                       const std::string &function) {
  return impl->withCompiler([&](Impl::Compiler &compiler) {
    return specialize(*compiler.context, moduleText, function, nullptr)
        .signature;
  });
}

std::shared_ptr<const CompiledFunction>
Jit::compileCpu(const std::string &moduleText, const std::string &function,
                const std::vector<TensorSpec> &inputs) {
  std::string key = impl->key(moduleText, function, inputs, "cpu");
  return cached(impl->cacheMutex, impl->cache, impl->stats, key, [&] {
    // The same region traced at another batch or length is the same generic
    // function: compiled once for all of them.
    std::optional<GenericFunction> generic =
        impl->withCompiler([&](Impl::Compiler &compiler) {
          return generalize(*compiler.context, moduleText, function, inputs);
        });
    if (generic) {
      try {
        return compileCpu(generic->text, function, generic->inputs);
      } catch (const Error &) {
        // Some lowering needs the traced sizes: compiled for them below.
      }
    }
    return impl->compileOrLoad<CompiledFunction>(
        key, moduleText, function, inputs,
        [&](mlir::ModuleOp module, llvm::TargetMachine &machine) {
          return compileToObject(module, function, machine);
        },
        [&](const CachedObject &entry) { return impl->load(key, entry); });
  });
}

CudaProgram Jit::compileCuda(const std::string &moduleText,
                             const std::string &function,
                             const std::vector<TensorSpec> &inputs,
                             const std::string &chip,
                             const std::string &features) {
  return impl->withCompiler([&](Impl::Compiler &compiler) {
    SpecializedFunction specialized =
        specialize(*compiler.context, moduleText, function, &inputs);
    CudaProgram program =
        compileToPtx(*specialized.module, function, chip, features);
    program.signature = std::move(specialized.signature);
    return program;
  });
}

std::shared_ptr<const CudaFunction> Jit::compileCudaFunction(
    const std::string &moduleText, const std::string &function,
    const std::vector<TensorSpec> &inputs, const CudaTarget &target) {
  // On disk the code is the same for every device; in memory each device
  // has its own loaded kernels.
  std::string diskKey = impl->key(moduleText, function, inputs,
                                  "cuda " + target.chip + " " +
                                      target.features);
  std::string key = diskKey + " " + std::to_string(target.device);
  return cached(impl->cacheMutex, impl->cudaCache, impl->stats, key, [&] {
    return impl->compileOrLoad<CudaFunction>(
        diskKey, moduleText, function, inputs,
        [&](mlir::ModuleOp module, llvm::TargetMachine &machine) {
          return compileCudaHost(module, function, target.chip,
                                 target.features, machine);
        },
        [&](const CachedObject &entry) {
          return impl->loadCuda(diskKey, entry, target);
        });
  });
}

std::string Jit::cacheDir() const { return impl->disk.dir(); }

JitStats Jit::stats() const {
  JitStats stats;
  {
    std::lock_guard<std::mutex> lock(impl->cacheMutex);
    stats = impl->stats;
  }
  std::lock_guard<std::mutex> lock(impl->compilersMutex);
  stats.idleCompilers = static_cast<int64_t>(impl->idleCompilers.size());
  return stats;
}

std::vector<std::string> Jit::takeWarnings() {
  std::lock_guard<std::mutex> lock(impl->cacheMutex);
  return std::exchange(impl->warnings, {});
}
