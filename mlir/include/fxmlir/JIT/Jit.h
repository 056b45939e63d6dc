//===- Jit.h - compiling and running outlined JIT regions -------*- C++ -*-===//
//
// The opaque API of the fxmlir JIT: compile a function outlined by
// fxmlir-outline-jit-regions for the host CPU (LLVM ORC, O3) and run it on
// raw contiguous buffers, or compile it for an NVIDIA GPU: PTX kernels and
// host code that launches them through a caller-supplied driver table. Like
// Core.h, nothing here names an MLIR or LLVM type.
//
// Compiled code is cached in memory per Jit object, keyed by the function's
// text, its input dtypes and dims and the target, and on disk (object files
// under FXMLIR_CACHE_DIR, default $XDG_CACHE_HOME/fxmlir or ~/.cache/fxmlir:
// CPU code, and the host side of CUDA code with its PTX inside), so that a
// second process compiles nothing. What the
// disk holds is verified before it is loaded; an entry that does not verify
// is rebuilt, and a directory that cannot be written costs only the disk
// cache (see Jit::takeWarnings).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_JIT_JIT_H
#define FXMLIR_JIT_JIT_H

#include "fxmlir/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fxmlir::jit {

/// Torch's dtypes that JIT regions handle.
enum class DType : uint8_t {
  Bool,
  UInt8,
  Int8,
  Int16,
  Int32,
  Int64,
  Float16,
  BFloat16,
  Float32,
  Float64,
};

/// Bytes per element.
FXMLIR_API size_t elementSize(DType dtype);
/// The dtype's MLIR element type as fxmlir spells it: "f32", "si64", "i1".
FXMLIR_API std::string dtypeName(DType dtype);

/// A dim whose size is only known when the function runs.
constexpr int64_t kDynamic = -1;

/// An input as compiled code expects it: its dtype and dims, each a size or
/// kDynamic.
struct TensorSpec {
  DType dtype;
  std::vector<int64_t> dims;

  bool operator==(const TensorSpec &other) const {
    return dtype == other.dtype && dims == other.dims;
  }
};

/// The size of a result dim: static, or that of dim `dim` of input `input`.
struct DimSource {
  int64_t size = kDynamic;
  int input = -1;
  int dim = -1;

  bool operator==(const DimSource &other) const {
    return size == other.size && input == other.input && dim == other.dim;
  }
};

struct ResultSpec {
  DType dtype;
  std::vector<DimSource> dims;

  bool operator==(const ResultSpec &other) const {
    return dtype == other.dtype && dims == other.dims;
  }
};

/// What a function takes and returns.
struct Signature {
  std::vector<TensorSpec> inputs;
  std::vector<ResultSpec> results;
  /// Whether results can be computed in slices of rows, each slice from the
  /// same rows of the `rowInputs` and all of the other inputs. True for
  /// elementwise ops, reductions over the last dim, returned sums over the
  /// rows and returned values the rows do not reach (each slice computes
  /// them whole: see isWholeResult); false when another reduction spans
  /// the rows.
  bool rowsSplittable = false;
  /// Where the rows run, counted from the last dim: dim rowDimIn(rank) of
  /// each row input and row result. For any batch but one, the rank of the
  /// widest inputs (dim 0 of theirs). For a batch of one ([1, tokens,
  /// hidden], or a [tokens, hidden] view of it) its first dim that is not
  /// 1: 2. Every dim before the row dim is 1, so that a slice of rows is a
  /// contiguous block.
  int64_t rowsFromEnd = 0;
  /// For each input, whether it is sliced with the rows: its row dim is not
  /// a broadcast size 1 (for a batch of one, the dims before it are 1; else
  /// it has the largest rank).
  std::vector<bool> rowInputs;
  /// For each result, whether it sums over the rows (a bias gradient): a
  /// slice of rows computes its own sum, whole, for the caller to add up.
  /// All false unless rowsSplittable.
  std::vector<bool> summedResults;

  /// The row dim of a tensor of rank `rank`; negative where it has none.
  int64_t rowDimIn(size_t rank) const {
    return static_cast<int64_t>(rank) - rowsFromEnd;
  }

  /// Whether result `index` of a rowsSplittable function is one the rows
  /// do not reach: every slice computes it whole (its row dim is no row
  /// input's), so that slices running at once need a buffer each.
  bool isWholeResult(size_t index) const {
    if (!rowsSplittable || summedResults[index])
      return false;
    const std::vector<DimSource> &dims = results[index].dims;
    int64_t rowDim = rowDimIn(dims.size());
    if (rowDim < 0)
      return true;
    const DimSource &source = dims[rowDim];
    return source.input < 0 || !rowInputs[source.input] ||
           source.dim != rowDimIn(inputs[source.input].dims.size());
  }

  bool operator==(const Signature &other) const {
    return inputs == other.inputs && results == other.results &&
           rowsSplittable == other.rowsSplittable &&
           rowsFromEnd == other.rowsFromEnd &&
           rowInputs == other.rowInputs &&
           summedResults == other.summedResults;
  }
};

/// A contiguous row-major buffer.
struct Buffer {
  void *data = nullptr;
  std::vector<int64_t> sizes;
};

/// Compiled CPU code of one function for one input signature. Thread-safe:
/// `run` and `runRows` may be called concurrently.
class FXMLIR_API CompiledFunction {
public:
  virtual ~CompiledFunction();

  /// The signature compiled for: input dims kDynamic where sizes may vary.
  virtual const Signature &signature() const = 0;
  /// The shapes of the results for inputs of `inputShapes`. Throws Error
  /// when the inputs do not match the signature.
  std::vector<std::vector<int64_t>>
  resultShapes(const std::vector<std::vector<int64_t>> &inputShapes) const;
  /// Computes the results into `outputs`, shaped as resultShapes says. The
  /// outputs must not overlap each other or the inputs (inputs may overlap).
  /// Throws Error for buffers that do not match the signature.
  void run(const std::vector<Buffer> &inputs,
           const std::vector<Buffer> &outputs) const;
  /// Computes rows [begin, end) (Signature::rowsFromEnd) of every result
  /// (`inputs` and
  /// `outputs` whole, as for run), and into each summed result the sum over
  /// those rows only. Needs signature().rowsSplittable; the row inputs must
  /// agree on their number of rows.
  void runRows(const std::vector<Buffer> &inputs,
               const std::vector<Buffer> &outputs, int64_t begin,
               int64_t end) const;
  /// The row dim of the row inputs, which runRows slices. Throws Error when they
  /// disagree or the function cannot be run in slices of rows.
  int64_t rowCount(const std::vector<Buffer> &inputs) const;

protected:
  /// Calls the compiled code with one memref descriptor per input and
  /// output.
  virtual void invoke(void **descriptors) const = 0;

private:
  void check(const std::vector<Buffer> &inputs,
             const std::vector<Buffer> &outputs) const;
  void call(const std::vector<Buffer> &inputs,
            const std::vector<Buffer> &outputs, int64_t begin,
            int64_t end) const;
};

/// One kernel launch of a CUDA program.
struct CudaLaunch {
  /// The kernel's entry name in `ptx`.
  std::string kernel;
  /// PTX assembly of the module holding the kernel, for cuModuleLoadData.
  std::string ptx;
};

/// PTX for one function, and how to launch its kernels.
struct CudaProgram {
  /// The kernel launches in order.
  std::vector<CudaLaunch> launches;
  /// The host side: the function after GPU lowering, with one
  /// gpu.launch_func per launch (grid and block sizes computed from the
  /// input dims), in MLIR syntax.
  std::string host;
  Signature signature;
};

/// The CUDA driver functions that compiled host code reaches, with cuda.h's
/// signatures and opaque handles (CUmodule, CUfunction, CUstream as void *,
/// CUdeviceptr as uint64_t), launchKernel also told the number of `params`;
/// each returns a CUresult, 0 for success. The core
/// links no CUDA library: its user fills the table (the torch op library from
/// the driver torch loaded, tests with mocks). None may throw.
struct CudaDriver {
  int (*moduleLoadData)(void **module, const void *image) = nullptr;
  int (*moduleUnload)(void *module) = nullptr;
  int (*moduleGetFunction)(void **function, void *module,
                           const char *name) = nullptr;
  int (*launchKernel)(void *function, unsigned gridX, unsigned gridY,
                      unsigned gridZ, unsigned blockX, unsigned blockY,
                      unsigned blockZ, unsigned sharedMemBytes, void *stream,
                      void **params, void **extra, size_t paramCount) = nullptr;
  int (*memcpyAsync)(uint64_t dst, uint64_t src, size_t bytes,
                     void *stream) = nullptr;
  /// Device memory for a temporary, used and freed in order on `stream`
  /// (torch's caching allocator); null when there is none.
  void *(*allocate)(size_t bytes, void *stream) = nullptr;
  void (*deallocate)(void *pointer, void *stream) = nullptr;
};

/// Where compileCudaFunction's code runs.
struct CudaTarget {
  /// Architecture and PTX features, for nvvm-attach-target.
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  /// The device whose context is current when compiling: the kernels are
  /// loaded into it, and cached per device.
  int device = 0;
  CudaDriver driver;
};

/// Compiled host code of one CUDA function: launches its kernels, loaded
/// into the device's context when compiled and unloaded when destroyed.
/// Buffers hold device pointers. `run` and `runRows` launch on the default
/// stream, `launch` on any; thread-safe.
class FXMLIR_API CudaFunction : public CompiledFunction {
public:
  /// Computes the results on `stream` (a CUstream): enqueues the kernels and
  /// returns. Throws Error when a driver call fails.
  void launch(const std::vector<Buffer> &inputs,
              const std::vector<Buffer> &outputs, void *stream) const;
};

struct JitOptions {
  /// Where compiled objects are cached on disk: unset for FXMLIR_CACHE_DIR
  /// or its default, empty for no disk cache.
  std::optional<std::string> cacheDir;
};

/// How often compileCpu and compileCudaFunction found their code where, and
/// the time spent compiling.
struct JitStats {
  int64_t compiled = 0;
  int64_t memoryHits = 0;
  int64_t diskHits = 0;
  /// Disk cache entries that did not verify and were rebuilt.
  int64_t diskDiscarded = 0;
  double compileSeconds = 0;
  double diskLoadSeconds = 0;
  /// Compilers (an MLIR context and a target machine each) kept between
  /// compiles: one, however many compiled at once.
  int64_t idleCompilers = 0;
};

/// Compiles and caches JIT functions. Thread-safe.
class FXMLIR_API Jit {
public:
  /// A cache directory that cannot be created is no error: the code
  /// compiled is then kept in memory only, with a warning.
  explicit Jit(JitOptions options = {});
  ~Jit();
  /// The process's Jit, with the default options: the one the torch op
  /// library and the Python bindings share. Created on first use.
  static Jit &shared();
  Jit(const Jit &) = delete;
  Jit &operator=(const Jit &) = delete;

  /// The signature of `function` in `moduleText` as written (its inputs'
  /// dims as the graph recorded them), with result dims and row splitting
  /// inferred. Throws Error for a missing function or one the JIT cannot
  /// lower.
  Signature analyze(const std::string &moduleText, const std::string &function);

  /// Compiles `function` for the host CPU at O3 for inputs of `inputs`: the
  /// function's dtypes, its static dims or kDynamic (a dim kDynamic here
  /// may be static in the function, and the other way round). When its ops
  /// take their sizes from their operands, the code is compiled for every
  /// dim but the last dynamic (sizes of 1 kept), so a region traced at
  /// other batch sizes and lengths reuses it: the returned function's
  /// signature may be more general than `inputs`. Returns the
  /// cached code when there is some: from disk only when the entry's
  /// checksum and key verify and its signature is the function's for these
  /// inputs, else the entry is discarded, compiled again and rewritten.
  /// Throws Error with the diagnostics (a link failure with ORC's reason,
  /// such as the symbols not found) when the inputs do not match or
  /// lowering fails.
  std::shared_ptr<const CompiledFunction>
  compileCpu(const std::string &moduleText, const std::string &function,
             const std::vector<TensorSpec> &inputs);

  /// Lowers `function` for an NVIDIA GPU of architecture `chip` (sm_90)
  /// with PTX `features` (+ptx80). Not cached.
  CudaProgram compileCuda(const std::string &moduleText,
                          const std::string &function,
                          const std::vector<TensorSpec> &inputs,
                          const std::string &chip = "sm_90",
                          const std::string &features = "+ptx80");

  /// Compiles `function` for an NVIDIA GPU as compileCuda does, and its
  /// host side for the host CPU, calling `target.driver`; loads the kernels.
  /// Cached in memory per target and device, and on disk per chip and
  /// features (the host object, PTX included) with the checks compileCpu
  /// makes. Throws Error with the diagnostics, or when loading the kernels
  /// fails.
  std::shared_ptr<const CudaFunction> compileCudaFunction(
      const std::string &moduleText, const std::string &function,
      const std::vector<TensorSpec> &inputs, const CudaTarget &target);

  /// The disk cache directory, empty when there is none.
  std::string cacheDir() const;
  JitStats stats() const;
  /// What the Jit worked around since the last call, for its user to show
  /// as warnings: the first disk cache entry that did not verify (rebuilt;
  /// later ones only count in stats().diskDiscarded), the first entry that
  /// could not be written (the code stays in memory), a cache directory not
  /// used (no directory, another user's, or writable by group or others).
  /// At most one of each kind per Jit.
  std::vector<std::string> takeWarnings();

  struct Impl;

private:
  std::unique_ptr<Impl> impl;
};

} // namespace fxmlir::jit

#endif // FXMLIR_JIT_JIT_H
