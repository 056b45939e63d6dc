//===- JitCudaTest.cpp - CUDA host code against a mock driver -------------===//
//
// The host side of a CUDA function runs on the CPU: with a driver that only
// records its calls, these tests check which modules are loaded, which
// kernels are launched with which grid, block, stream and arguments, and
// how temporaries are allocated, without a GPU.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/JIT/Jit.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

using namespace fxmlir::jit;
using fxmlir::Error;

namespace {

constexpr const char *kChain = R"mlir(
!t = tensor<?x64xf32, #fxmlir.device<"cuda">>
func.func private @jit_add_tanh_mul(%a: !t, %b: !t, %c: !t) -> !t {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.tanh %0 : (!t) -> !t
  %2 = fxmlir.aten.mul.Tensor %1, %c : (!t, !t) -> !t
  return %2 : !t
}
)mlir";

// Row statistics (max, sum) are temporaries of the host function.
constexpr const char *kSoftmax = R"mlir(
!t = tensor<?x16xf32, #fxmlir.device<"cuda">>
func.func private @jit_softmax(%x: !t) -> !t {
  %0 = fxmlir.aten.mul.Scalar %x {other = 2.0 : f64} : (!t) -> !t
  %1 = fxmlir.aten._softmax %0 {dim = -1 : i64, half_to_float = false}
      : (!t) -> !t
  return %1 : !t
}
)mlir";

// GPT-2's residual add + layer norm: rank 3, statistics [?, 512, 1].
constexpr const char *kAddLayerNorm = R"mlir(
!t = tensor<?x512x512xf32, #fxmlir.device<"cuda">>
!w = tensor<512xf32, #fxmlir.device<"cuda">>
!s = tensor<?x512x1xf32, #fxmlir.device<"cuda">>
func.func private @jit_add_native_layer_norm(%x: !t, %y: !t, %w: !w, %b: !w)
    -> (!t, !s, !s) {
  %0 = fxmlir.aten.add.Tensor %x, %y {alpha = 1 : i64} : (!t, !t) -> !t
  %1:3 = fxmlir.aten.native_layer_norm %0, %w, %b
      {normalized_shape = array<i64: 512>, eps = 1.0e-05 : f64}
      : (!t, !w, !w) -> (!t, !s, !s)
  return %1#0, %1#1, %1#2 : !t, !s, !s
}
)mlir";

struct Launch {
  std::string kernel;
  unsigned grid[3];
  unsigned block[3];
  void *stream;
  /// The arguments' values: every kernel argument is an index or a pointer.
  std::vector<uint64_t> args;
};

/// What the mock driver was asked to do, and how it should fail.
struct Recorder {
  std::vector<std::string> loadedImages;
  std::vector<void *> unloaded;
  std::vector<Launch> launches;
  std::vector<std::pair<size_t, void *>> allocations;
  std::vector<void *> freed;
  std::vector<void *> freeStreams;
  int memcpies = 0;
  int loadResult = 0;
  int launchResult = 0;
  /// Fake handles: module i is 0x1000 + i, a function points at its name.
  std::vector<std::string> functionNames;
  std::vector<std::vector<char>> memory;
};

Recorder *recorder = nullptr;

const CudaDriver kMockDriver = {
    /*moduleLoadData=*/
    [](void **module, const void *image) {
      if (recorder->loadResult)
        return recorder->loadResult;
      recorder->loadedImages.push_back(static_cast<const char *>(image));
      *module =
          reinterpret_cast<void *>(0x1000 + recorder->loadedImages.size() - 1);
      return 0;
    },
    /*moduleUnload=*/
    [](void *module) {
      recorder->unloaded.push_back(module);
      return 0;
    },
    /*moduleGetFunction=*/
    [](void **function, void *, const char *name) {
      recorder->functionNames.reserve(64);
      recorder->functionNames.push_back(name);
      *function = &recorder->functionNames.back();
      return 0;
    },
    /*launchKernel=*/
    [](void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
       unsigned by, unsigned bz, unsigned, void *stream, void **params, void **,
       size_t paramCount) {
      if (recorder->launchResult)
        return recorder->launchResult;
      Launch launch{*static_cast<std::string *>(function),
                    {gx, gy, gz},
                    {bx, by, bz},
                    stream,
                    {}};
      // Each params[i] points at an 8-byte argument.
      for (size_t i = 0; i < paramCount; ++i) {
        uint64_t value;
        std::memcpy(&value, params[i], sizeof(value));
        launch.args.push_back(value);
      }
      recorder->launches.push_back(launch);
      return 0;
    },
    /*memcpyAsync=*/
    [](uint64_t, uint64_t, size_t, void *) {
      ++recorder->memcpies;
      return 0;
    },
    /*allocate=*/
    [](size_t bytes, void *stream) -> void * {
      recorder->memory.reserve(64);
      void *pointer = recorder->memory.emplace_back(bytes).data();
      recorder->allocations.push_back({bytes, stream});
      return pointer;
    },
    /*deallocate=*/
    [](void *pointer, void *stream) {
      recorder->freed.push_back(pointer);
      recorder->freeStreams.push_back(stream);
    },
};

class JitCudaTest : public ::testing::Test {
protected:
  void SetUp() override { recorder = &record; }
  // The Jit unloads its modules through the recorder: destroyed first.
  void TearDown() override {
    jit.reset();
    recorder = nullptr;
  }

  CudaTarget target() const {
    CudaTarget target;
    target.driver = kMockDriver;
    return target;
  }

  Recorder record;
  std::unique_ptr<Jit> jit = std::make_unique<Jit>(JitOptions{""});
};

void *fakePointer(uintptr_t address) {
  return reinterpret_cast<void *>(address);
}

TEST_F(JitCudaTest, LoadsThePtxWhenCompiled) {
  std::shared_ptr<const CudaFunction> function = jit->compileCudaFunction(
      kChain, "jit_add_tanh_mul",
      std::vector<TensorSpec>(3, {DType::Float32, {kDynamic, 64}}), target());
  ASSERT_EQ(record.loadedImages.size(), 1u);
  EXPECT_NE(record.loadedImages[0].find(".target sm_90"), std::string::npos);
  EXPECT_NE(record.loadedImages[0].find(".entry jit_add_tanh_mul_elementwise"),
            std::string::npos);
  EXPECT_TRUE(record.launches.empty());
  EXPECT_EQ(function->signature().inputs[0].dims,
            (std::vector<int64_t>{kDynamic, 64}));
}

TEST_F(JitCudaTest, LaunchesOnTheCallersStreamWithTheInputsDims) {
  std::shared_ptr<const CudaFunction> function = jit->compileCudaFunction(
      kChain, "jit_add_tanh_mul",
      std::vector<TensorSpec>(3, {DType::Float32, {kDynamic, 64}}), target());
  void *stream = fakePointer(0x5000);
  for (int64_t rows : {8, 3, 40}) {
    std::vector<Buffer> inputs = {{fakePointer(0xa000), {rows, 64}},
                                  {fakePointer(0xb000), {rows, 64}},
                                  {fakePointer(0xc000), {rows, 64}}};
    std::vector<Buffer> outputs = {{fakePointer(0xd000), {rows, 64}}};
    function->launch(inputs, outputs, stream);
    ASSERT_FALSE(record.launches.empty());
    const Launch &launch = record.launches.back();
    EXPECT_EQ(launch.kernel, "jit_add_tanh_mul_elementwise");
    // A thread per 4 of the 64 columns, blocks of 256 threads.
    int64_t threads = rows * 64 / 4;
    EXPECT_EQ(launch.grid[0], static_cast<unsigned>((threads + 255) / 256));
    EXPECT_EQ(launch.grid[1] * launch.grid[2], 1u);
    EXPECT_EQ(launch.block[0] * launch.block[1] * launch.block[2], 256u);
    EXPECT_EQ(launch.stream, stream);
    // A memref descriptor of 7 words per buffer (inputs, then the output)
    // and the thread count; constants and static sizes are in the kernel.
    EXPECT_EQ(launch.args.size(), 4 * 7 + 1u);
    EXPECT_NE(std::find(launch.args.begin(), launch.args.end(),
                        static_cast<uint64_t>(threads)),
              launch.args.end());
    std::vector<uint64_t> pointers;
    for (uint64_t arg : launch.args)
      if (arg >= 0xa000 && arg <= 0xd000 && arg % 0x1000 == 0 &&
          (pointers.empty() || pointers.back() != arg))
        pointers.push_back(arg);
    EXPECT_EQ(pointers,
              (std::vector<uint64_t>{0xa000, 0xb000, 0xc000, 0xd000}));
    EXPECT_NE(std::find(launch.args.begin(), launch.args.end(),
                        static_cast<uint64_t>(rows)),
              launch.args.end());
  }
  EXPECT_EQ(record.launches.size(), 3u);
  EXPECT_TRUE(record.allocations.empty());
}

// cuLaunchKernel refuses (CUDA error 1) a block of more than 1024 threads
// or 64 on z, and a grid of more than 65535 on y or z: every kernel of a
// rank-3 region keeps its threads and blocks on x.
TEST_F(JitCudaTest, RankThreeRegionsLaunchWithinTheDeviceLimits) {
  std::vector<TensorSpec> specs = {{DType::Float32, {kDynamic, 512, 512}},
                                   {DType::Float32, {kDynamic, 512, 512}},
                                   {DType::Float32, {512}},
                                   {DType::Float32, {512}}};
  std::shared_ptr<const CudaFunction> function = jit->compileCudaFunction(
      kAddLayerNorm, "jit_add_native_layer_norm", specs, target());
  constexpr int64_t kBatch = 8;
  std::vector<Buffer> inputs = {{fakePointer(0xa000), {kBatch, 512, 512}},
                                {fakePointer(0xb000), {kBatch, 512, 512}},
                                {fakePointer(0xc000), {512}},
                                {fakePointer(0xd000), {512}}};
  std::vector<Buffer> outputs = {{fakePointer(0xe000), {kBatch, 512, 512}},
                                 {fakePointer(0xf000), {kBatch, 512, 1}},
                                 {fakePointer(0x10000), {kBatch, 512, 1}}};
  function->launch(inputs, outputs, fakePointer(0x5000));
  ASSERT_FALSE(record.launches.empty());
  for (const Launch &launch : record.launches) {
    SCOPED_TRACE(launch.kernel);
    EXPECT_EQ(launch.block[1] * launch.block[2], 1u);
    EXPECT_LE(launch.block[0], 1024u);
    EXPECT_EQ(launch.grid[1] * launch.grid[2], 1u);
    // No block of idle threads per element of the [8, 512, 1] statistics.
    EXPECT_LE(uint64_t(launch.grid[0]) * launch.block[0],
              uint64_t(kBatch) * 512 * 512 + 1024);
  }
}

TEST_F(JitCudaTest, EmptyInputsLaunchNothing) {
  std::shared_ptr<const CudaFunction> function = jit->compileCudaFunction(
      kChain, "jit_add_tanh_mul",
      std::vector<TensorSpec>(3, {DType::Float32, {kDynamic, 64}}), target());
  std::vector<Buffer> inputs(3, Buffer{nullptr, {0, 64}});
  function->launch(inputs, {{nullptr, {0, 64}}}, fakePointer(0x5000));
  EXPECT_TRUE(record.launches.empty());
}

TEST_F(JitCudaTest, TemporariesAreDeviceMemoryOnTheStream) {
  std::shared_ptr<const CudaFunction> function = jit->compileCudaFunction(
      kSoftmax, "jit_softmax", {{DType::Float32, {kDynamic, 16}}}, target());
  void *stream = fakePointer(0x5000);
  function->launch({{fakePointer(0xa000), {5, 16}}},
                   {{fakePointer(0xd000), {5, 16}}}, stream);
  ASSERT_GE(record.launches.size(), 2u);
  for (const Launch &launch : record.launches)
    EXPECT_EQ(launch.stream, stream);
  ASSERT_FALSE(record.allocations.empty());
  std::multiset<void *> allocated;
  for (size_t i = 0; i < record.allocations.size(); ++i) {
    // A row statistic: one f32 per row.
    EXPECT_EQ(record.allocations[i].first % (5 * sizeof(float)), 0u);
    EXPECT_EQ(record.allocations[i].second, stream);
    allocated.insert(record.memory[i].data());
  }
  EXPECT_EQ(std::multiset<void *>(record.freed.begin(), record.freed.end()),
            allocated);
  for (void *freeStream : record.freeStreams)
    EXPECT_EQ(freeStream, stream);
}

TEST_F(JitCudaTest, CachedPerTargetAndUnloadedWithTheJit) {
  {
    Jit local{JitOptions{""}};
    std::vector<TensorSpec> inputs(3, {DType::Float32, {kDynamic, 64}});
    auto first =
        local.compileCudaFunction(kChain, "jit_add_tanh_mul", inputs, target());
    auto again =
        local.compileCudaFunction(kChain, "jit_add_tanh_mul", inputs, target());
    EXPECT_EQ(first, again);
    CudaTarget otherDevice = target();
    otherDevice.device = 1;
    auto other = local.compileCudaFunction(kChain, "jit_add_tanh_mul", inputs,
                                           otherDevice);
    EXPECT_NE(first, other);
    EXPECT_EQ(local.stats().memoryHits, 1);
    EXPECT_EQ(record.loadedImages.size(), 2u);
    EXPECT_TRUE(record.unloaded.empty());
  }
  EXPECT_EQ(std::set<void *>(record.unloaded.begin(), record.unloaded.end()),
            (std::set<void *>{fakePointer(0x1000), fakePointer(0x1001)}));
}

TEST_F(JitCudaTest, DriverFailuresAreErrors) {
  std::vector<TensorSpec> inputs(3, {DType::Float32, {kDynamic, 64}});
  record.loadResult = 218; // CUDA_ERROR_INVALID_PTX
  try {
    jit->compileCudaFunction(kChain, "jit_add_tanh_mul", inputs, target());
    FAIL() << "a failed load must throw";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("cuModuleLoadData failed with "
                        "CUDA error 218"),
              std::string::npos)
        << error.what();
  }
  // Not cached: the next request compiles and loads again.
  record.loadResult = 0;
  auto function =
      jit->compileCudaFunction(kChain, "jit_add_tanh_mul", inputs, target());
  record.launchResult = 1; // CUDA_ERROR_INVALID_VALUE
  std::vector<Buffer> buffers(3, Buffer{fakePointer(0xa000), {2, 64}});
  EXPECT_THROW(
      {
        try {
          function->launch(buffers, {{fakePointer(0xd000), {2, 64}}}, nullptr);
        } catch (const Error &error) {
          // The launch's shape, to tell which device limit it broke.
          EXPECT_NE(std::string(error.what()).find("cuLaunchKernel (grid "),
                    std::string::npos)
              << error.what();
          EXPECT_NE(std::string(error.what()).find(", block 256x1x1"),
                    std::string::npos)
              << error.what();
          throw;
        }
      },
      Error);
  // Wrong shapes are refused before any launch.
  record.launchResult = 0;
  EXPECT_THROW(
      function->launch(buffers, {{fakePointer(0xd000), {3, 64}}}, nullptr),
      Error);
  EXPECT_TRUE(record.launches.empty());
}

/// The entries (object files) of a disk cache directory.
std::vector<std::filesystem::path> cachedObjects(const std::string &dir) {
  std::vector<std::filesystem::path> objects;
  for (const auto &file : std::filesystem::directory_iterator(dir))
    if (file.path().extension() == ".o")
      objects.push_back(file.path());
  return objects;
}

TEST_F(JitCudaTest, HostObjectInTheDiskCache) {
  char pattern[] = "/tmp/fxmlir-cuda-cache-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::string dir = pattern;
  std::vector<TensorSpec> inputs(3, {DType::Float32, {kDynamic, 64}});
  std::vector<Buffer> buffers = {{fakePointer(0xa000), {8, 64}},
                                 {fakePointer(0xb000), {8, 64}},
                                 {fakePointer(0xc000), {8, 64}}};
  std::vector<Buffer> outputs = {{fakePointer(0xd000), {8, 64}}};
  auto compileAndLaunch = [&](Jit &jit, const CudaTarget &cudaTarget) {
    jit.compileCudaFunction(kChain, "jit_add_tanh_mul", inputs, cudaTarget)
        ->launch(buffers, outputs, fakePointer(0x5000));
    return jit.stats();
  };
  {
    Jit writer{JitOptions{dir}};
    JitStats stats = compileAndLaunch(writer, target());
    EXPECT_EQ(stats.compiled, 1);
    EXPECT_EQ(stats.diskHits, 0);
  }
  ASSERT_EQ(cachedObjects(dir).size(), 1u);
  {
    // Another process: the host object is loaded, not compiled, and loads
    // the same PTX and launches the same kernel with the same arguments.
    Jit reader{JitOptions{dir}};
    JitStats stats = compileAndLaunch(reader, target());
    EXPECT_EQ(stats.compiled, 0);
    EXPECT_EQ(stats.diskHits, 1);
    ASSERT_EQ(record.loadedImages.size(), 2u);
    EXPECT_EQ(record.loadedImages[1], record.loadedImages[0]);
    ASSERT_EQ(record.launches.size(), 2u);
    EXPECT_EQ(record.launches[1].kernel, record.launches[0].kernel);
    EXPECT_EQ(record.launches[1].args, record.launches[0].args);
    EXPECT_TRUE(reader.takeWarnings().empty());
  }
  {
    // A flipped byte fails the checksum: rebuilt and rewritten, one warning.
    std::filesystem::path object = cachedObjects(dir).front();
    std::fstream file(object, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(64);
    char byte = static_cast<char>(file.get() ^ 0x5a);
    file.seekp(64);
    file.put(byte);
    file.close();
    Jit rebuilder{JitOptions{dir}};
    JitStats stats = compileAndLaunch(rebuilder, target());
    EXPECT_EQ(stats.compiled, 1);
    EXPECT_EQ(stats.diskDiscarded, 1);
    std::vector<std::string> warnings = rebuilder.takeWarnings();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("discarded the cache entry"), std::string::npos)
        << warnings[0];
  }
  {
    Jit reader{JitOptions{dir}};
    EXPECT_EQ(compileAndLaunch(reader, target()).diskHits, 1);
    // Another chip is another entry.
    CudaTarget ampere = target();
    ampere.chip = "sm_80";
    JitStats stats = compileAndLaunch(reader, ampere);
    EXPECT_EQ(stats.compiled, 1);
    EXPECT_EQ(cachedObjects(dir).size(), 2u);
    EXPECT_NE(record.loadedImages.back().find(".target sm_80"),
              std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

} // namespace
