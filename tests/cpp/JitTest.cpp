//===- JitTest.cpp - tests of the JIT API ---------------------------------===//

#include "fxmlir/JIT/Jit.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

using namespace fxmlir::jit;
using fxmlir::Error;

namespace {

constexpr const char *kChain = R"mlir(
!t = tensor<8x64xf32, #fxmlir.device<"cpu">>
func.func private @jit_add_tanh_mul(%a: !t, %b: !t, %c: !t) -> !t {
  %0 = fxmlir.aten.add.Tensor %a, %b {alpha = 1 : i64} : (!t, !t) -> !t
  %1 = fxmlir.aten.tanh %0 : (!t) -> !t
  %2 = fxmlir.aten.mul.Tensor %1, %c : (!t, !t) -> !t
  return %2 : !t
}
)mlir";

// Softmax over the last dim of a batch whose size varies; the bias-like
// 1-D input broadcasts.
constexpr const char *kSoftmax = R"mlir(
func.func private @jit_add_softmax(
    %x: tensor<?x16xf32, #fxmlir.device<"cpu">>,
    %b: tensor<16xf32, #fxmlir.device<"cpu">>)
    -> tensor<?x16xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.add.Tensor %x, %b {alpha = 1 : i64}
      : (tensor<?x16xf32, #fxmlir.device<"cpu">>, tensor<16xf32, #fxmlir.device<"cpu">>)
      -> tensor<?x16xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten._softmax %0 {dim = -1 : i64, half_to_float = false}
      : (tensor<?x16xf32, #fxmlir.device<"cpu">>) -> tensor<?x16xf32, #fxmlir.device<"cpu">>
  return %1 : tensor<?x16xf32, #fxmlir.device<"cpu">>
}
)mlir";

// A bias gradient sums over dim 0: rows cannot be split.
constexpr const char *kBiasGrad = R"mlir(
func.func private @jit_mul_sum(%g: tensor<4x8xf32, #fxmlir.device<"cpu">>)
    -> tensor<8xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.mul.Scalar %g {other = 2.0 : f64}
      : (tensor<4x8xf32, #fxmlir.device<"cpu">>) -> tensor<4x8xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.sum.dim_IntList %0 {dim = array<i64: 0>, keepdim = false}
      : (tensor<4x8xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">>
  return %1 : tensor<8xf32, #fxmlir.device<"cpu">>
}
)mlir";

// GPT-2's attention mask: an additive mask made from a boolean one (the
// rows do not reach it), returned beside its first use. Each slice of rows
// computes it whole.
constexpr const char *kMaskAdd = R"mlir(
func.func private @jit_where_add(%m: tensor<4x8xi1, #fxmlir.device<"cpu">>,
    %s: tensor<6x4x8xf32, #fxmlir.device<"cpu">>)
    -> (tensor<4x8xf32, #fxmlir.device<"cpu">>, tensor<6x4x8xf32, #fxmlir.device<"cpu">>) {
  %neg = fxmlir.aten.scalar_tensor {dtype = f32, s = -1.0e+04 : f64} : () -> tensor<f32, #fxmlir.device<"cpu">>
  %zero = fxmlir.aten.scalar_tensor {dtype = f32, s = 0.0 : f64} : () -> tensor<f32, #fxmlir.device<"cpu">>
  %0 = fxmlir.aten.where.self %m, %zero, %neg
      : (tensor<4x8xi1, #fxmlir.device<"cpu">>, tensor<f32, #fxmlir.device<"cpu">>, tensor<f32, #fxmlir.device<"cpu">>) -> tensor<4x8xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.add.Tensor %s, %0 {alpha = 1 : i64}
      : (tensor<6x4x8xf32, #fxmlir.device<"cpu">>, tensor<4x8xf32, #fxmlir.device<"cpu">>) -> tensor<6x4x8xf32, #fxmlir.device<"cpu">>
  return %0, %1 : tensor<4x8xf32, #fxmlir.device<"cpu">>, tensor<6x4x8xf32, #fxmlir.device<"cpu">>
}
)mlir";

// The bias gradient scaled after the sum: a slice's partial sum would be
// scaled before the slices are added, so the rows do not split.
constexpr const char *kScaledBiasGrad = R"mlir(
func.func private @jit_sum_mul(%g: tensor<4x8xf32, #fxmlir.device<"cpu">>)
    -> tensor<8xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.aten.sum.dim_IntList %g {dim = array<i64: 0>, keepdim = false}
      : (tensor<4x8xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.exp %0
      : (tensor<8xf32, #fxmlir.device<"cpu">>) -> tensor<8xf32, #fxmlir.device<"cpu">>
  return %1 : tensor<8xf32, #fxmlir.device<"cpu">>
}
)mlir";

std::vector<float> randomVector(size_t size, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(size);
  for (float &value : values)
    value = normal(generator);
  return values;
}

/// Expects `result` to be softmax(x + b) over rows of `cols` (b one row).
void expectSoftmaxOfSum(const std::vector<float> &result,
                        const std::vector<float> &x,
                        const std::vector<float> &b, size_t cols) {
  for (size_t row = 0; row < x.size() / cols; ++row) {
    double sum = 0;
    for (size_t col = 0; col < cols; ++col)
      sum += std::exp(x[row * cols + col] + b[col]);
    for (size_t col = 0; col < cols; ++col)
      ASSERT_NEAR(result[row * cols + col],
                  std::exp(x[row * cols + col] + b[col]) / sum, 1e-6);
  }
}

/// A fresh cache directory per test, removed afterwards.
class JitTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/fxmlir-jit-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    cacheDir = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(cacheDir); }

  JitOptions options() const { return JitOptions{cacheDir}; }

  std::string cacheDir;
};

TEST_F(JitTest, CompilesAndRunsAnElementwiseChain) {
  Jit jit(options());
  auto chain = jit.compileCpu(kChain, "jit_add_tanh_mul",
                              {{DType::Float32, {8, 64}},
                               {DType::Float32, {8, 64}},
                               {DType::Float32, {8, 64}}});
  std::vector<float> a = randomVector(512, 1), b = randomVector(512, 2),
                     c = randomVector(512, 3), out(512);
  chain->run({{a.data(), {8, 64}}, {b.data(), {8, 64}}, {c.data(), {8, 64}}},
             {{out.data(), {8, 64}}});
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], std::tanh(a[i] + b[i]) * c[i], 1e-5) << "at " << i;
}

TEST_F(JitTest, SecondRequestHitsTheMemoryCache) {
  Jit jit(options());
  std::vector<TensorSpec> inputs(3, {DType::Float32, {kDynamic, 64}});
  auto first = jit.compileCpu(kChain, "jit_add_tanh_mul", inputs);
  auto second = jit.compileCpu(kChain, "jit_add_tanh_mul", inputs);
  EXPECT_EQ(first, second);
  JitStats stats = jit.stats();
  EXPECT_EQ(stats.compiled, 1);
  EXPECT_EQ(stats.memoryHits, 1);
  // Static rows are rows too: the generic code serves them.
  jit.compileCpu(kChain, "jit_add_tanh_mul",
                 std::vector<TensorSpec>(3, {DType::Float32, {8, 64}}));
  EXPECT_EQ(jit.stats().compiled, 1);
}

/// kChain traced at another shape: [rows, length, 64].
std::string chainAt(int64_t rows, int64_t length) {
  std::string shape = std::to_string(rows) + "x" + std::to_string(length);
  std::string text = kChain;
  text.replace(text.find("8x64"), 4, shape + "x64");
  return text;
}

TEST_F(JitTest, OneCompileServesARegionTracedAtEveryShape) {
  Jit jit(options());
  size_t most = 3 * 5 * 64;
  std::vector<float> a = randomVector(most, 1), b = randomVector(most, 2),
                     c = randomVector(most, 3), out(most);
  for (auto [rows, length] :
       {std::pair<int64_t, int64_t>{2, 7}, {3, 5}, {4, 1}}) {
    std::string text = chainAt(rows, length);
    std::vector<int64_t> shape = {rows, length, 64};
    auto chain = jit.compileCpu(text, "jit_add_tanh_mul",
                                jit.analyze(text, "jit_add_tanh_mul").inputs);
    size_t size = rows * length * 64;
    chain->run({{a.data(), shape}, {b.data(), shape}, {c.data(), shape}},
               {{out.data(), shape}});
    for (size_t i = 0; i < size; ++i)
      ASSERT_NEAR(out[i], std::tanh(a[i] + b[i]) * c[i], 1e-5) << "at " << i;
  }
  // [2, 7] and [3, 5] share one function; a length of 1 is another (a size
  // 1 broadcasts, so it stays in the type).
  EXPECT_EQ(jit.stats().compiled, 2);
}

// The first half of dim 1 of a [2, L, 16] tensor, negated.
constexpr const char *kSliceNeg = R"mlir(
!t = tensor<2x{L}x16xf32, #fxmlir.device<"cpu">>
!half = tensor<2x{H}x16xf32, #fxmlir.device<"cpu">>
func.func private @jit_slice_neg(%x: !t) -> !half {
  %0 = fxmlir.aten.slice.Tensor %x {dim = 1 : i64, start = 0 : i64, end = {H} : i64, step = 1 : i64} : (!t) -> !half
  %1 = fxmlir.aten.neg %0 : (!half) -> !half
  return %1 : !half
}
)mlir";

TEST_F(JitTest, ARegionSlicingAnInnerDimKeepsItsShapes) {
  // A slice of dim 1 reads by the traced sizes: one compile per shape.
  Jit jit(options());
  for (int64_t length : {4, 6}) {
    std::string text = kSliceNeg;
    for (auto [mark, size] : {std::pair<std::string, int64_t>{"{L}", length},
                              {"{H}", length / 2}})
      for (size_t at; (at = text.find(mark)) != std::string::npos;)
        text.replace(at, mark.size(), std::to_string(size));
    jit.compileCpu(text, "jit_slice_neg",
                   jit.analyze(text, "jit_slice_neg").inputs);
  }
  EXPECT_EQ(jit.stats().compiled, 2);
}

TEST_F(JitTest, FreshJitLoadsFromTheDiskCache) {
  std::vector<TensorSpec> inputs(3, {DType::Float32, {kDynamic, 64}});
  {
    Jit jit(options());
    jit.compileCpu(kChain, "jit_add_tanh_mul", inputs);
    EXPECT_EQ(jit.stats().compiled, 1);
  }
  Jit fresh(options());
  auto chain = fresh.compileCpu(kChain, "jit_add_tanh_mul", inputs);
  JitStats stats = fresh.stats();
  EXPECT_EQ(stats.compiled, 0);
  EXPECT_EQ(stats.diskHits, 1);
  // The loaded code runs, here on 3 rows.
  std::vector<float> a = randomVector(192, 4), b = randomVector(192, 5),
                     c = randomVector(192, 6), out(192);
  chain->run({{a.data(), {3, 64}}, {b.data(), {3, 64}}, {c.data(), {3, 64}}},
             {{out.data(), {3, 64}}});
  EXPECT_NEAR(out[100], std::tanh(a[100] + b[100]) * c[100], 1e-5);
}

TEST_F(JitTest, CompilesOnManyThreadsAtOnce) {
  // Each thread compiles the chain for its own row width: distinct code,
  // each compile with its own context and target machine.
  auto chainOf = [](int width) {
    std::string text = kChain;
    text.replace(text.find("8x64"), 4, "8x" + std::to_string(width));
    return text;
  };
  Jit jit(options());
  constexpr int kThreads = 6;
  std::vector<std::shared_ptr<const CompiledFunction>> compiled(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        compiled[t] = jit.compileCpu(
            chainOf(64 + t), "jit_add_tanh_mul",
            std::vector<TensorSpec>(3, {DType::Float32, {8, 64 + t}}));
      } catch (const Error &error) {
        errors[t] = error.what();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(jit.stats().compiled, kThreads);
  EXPECT_EQ(jit.stats().idleCompilers, 1);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(compiled[t]) << errors[t];
    size_t size = 8 * (64 + t);
    std::vector<float> a = randomVector(size, t), b = randomVector(size, t + 7),
                       c = randomVector(size, t + 13), out(size);
    compiled[t]->run({{a.data(), {8, 64 + t}},
                      {b.data(), {8, 64 + t}},
                      {c.data(), {8, 64 + t}}},
                     {{out.data(), {8, 64 + t}}});
    for (size_t i = 0; i < size; ++i)
      ASSERT_NEAR(out[i], std::tanh(a[i] + b[i]) * c[i], 1e-5)
          << "thread " << t << " at " << i;
  }
}

TEST_F(JitTest, NoDiskCacheWithAnEmptyDirectory) {
  Jit jit(JitOptions{std::string()});
  EXPECT_EQ(jit.cacheDir(), "");
  jit.compileCpu(kChain, "jit_add_tanh_mul",
                 std::vector<TensorSpec>(3, {DType::Float32, {8, 64}}));
  EXPECT_EQ(jit.stats().compiled, 1);
  EXPECT_TRUE(std::filesystem::is_empty(cacheDir));
}

std::string readFile(const std::string &path) {
  std::ifstream is(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(is), {});
}

void writeFile(const std::string &path, const std::string &data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

/// Disk cache entries: what corrupting them costs.
class JitCacheTest : public JitTest {
protected:
  static std::vector<TensorSpec> chainInputs() {
    return std::vector<TensorSpec>(3, {DType::Float32, {kDynamic, 64}});
  }

  /// Compiles kChain in a Jit of its own; returns the path of its entry
  /// without the extension.
  std::string compileChain() { return compile(kChain, "jit_add_tanh_mul"); }

  std::string compile(const char *text, const char *function) {
    std::set<std::string> before = entries();
    Jit jit(options());
    jit.compileCpu(text, function, jit.analyze(text, function).inputs);
    EXPECT_EQ(jit.stats().compiled, 1);
    std::set<std::string> after = entries();
    for (const std::string &entry : after)
      if (!before.count(entry))
        return entry;
    ADD_FAILURE() << "no new cache entry";
    return "";
  }

  std::set<std::string> entries() const {
    std::set<std::string> stems;
    for (const auto &file : std::filesystem::directory_iterator(cacheDir))
      if (file.path().extension() == ".sig")
        stems.insert(file.path().parent_path() / file.path().stem());
    return stems;
  }

  /// Rewrites the checksum of `entry` for its files as they are, as a
  /// writer would: only what the checksum cannot see is left to detect.
  void rechecksum(const std::string &entry) {
    std::string sig = readFile(entry + ".sig");
    std::string key = std::filesystem::path(entry).filename();
    size_t sum = sig.find("sha256 ");
    size_t body = sig.find('\n', sum) + 1;
    std::string hashed = entry + ".hashed";
    writeFile(hashed, key + "\n" + sig.substr(body) + readFile(entry + ".o"));
    FILE *pipe = popen(("sha256sum " + hashed).c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char hex[65] = {};
    ASSERT_EQ(fread(hex, 1, 64, pipe), 64u);
    pclose(pipe);
    std::filesystem::remove(hashed);
    writeFile(entry + ".sig",
              sig.substr(0, sum) + "sha256 " + hex + "\n" + sig.substr(body));
  }

  /// A fresh Jit discards the corrupted chain entry with one warning naming
  /// `reason`, compiles the right code and rewrites the entry.
  void expectRebuilt(const std::string &reason) {
    {
      Jit fresh(options());
      auto chain = fresh.compileCpu(kChain, "jit_add_tanh_mul", chainInputs());
      JitStats stats = fresh.stats();
      EXPECT_EQ(stats.diskHits, 0);
      EXPECT_EQ(stats.diskDiscarded, 1);
      EXPECT_EQ(stats.compiled, 1);
      std::vector<std::string> warnings = fresh.takeWarnings();
      ASSERT_EQ(warnings.size(), 1u);
      EXPECT_NE(warnings[0].find(reason), std::string::npos) << warnings[0];
      EXPECT_NE(warnings[0].find("compiled it again"), std::string::npos);
      EXPECT_TRUE(fresh.takeWarnings().empty());
      std::vector<float> a = randomVector(128, 1), b = randomVector(128, 2),
                         c = randomVector(128, 3), out(128);
      chain->run(
          {{a.data(), {2, 64}}, {b.data(), {2, 64}}, {c.data(), {2, 64}}},
          {{out.data(), {2, 64}}});
      for (size_t i = 0; i < out.size(); ++i)
        ASSERT_NEAR(out[i], std::tanh(a[i] + b[i]) * c[i], 1e-5) << i;
    }
    Jit next(options());
    next.compileCpu(kChain, "jit_add_tanh_mul", chainInputs());
    EXPECT_EQ(next.stats().diskHits, 1);
    EXPECT_EQ(next.stats().compiled, 0);
    EXPECT_TRUE(next.takeWarnings().empty());
  }
};

TEST_F(JitCacheTest, TruncatedObjectIsRebuilt) {
  std::string entry = compileChain();
  std::string object = readFile(entry + ".o");
  writeFile(entry + ".o", object.substr(0, object.size() / 2));
  expectRebuilt("bytes, its entry says " + std::to_string(object.size()));
}

TEST_F(JitCacheTest, FlippedObjectBytesAreRebuilt) {
  std::string entry = compileChain();
  std::string object = readFile(entry + ".o");
  for (size_t i = object.size() / 2; i < object.size() / 2 + 8; ++i)
    object[i] = static_cast<char>(~object[i]);
  writeFile(entry + ".o", object);
  expectRebuilt("checksum");
}

TEST_F(JitCacheTest, AnotherRegionsObjectIsRebuilt) {
  std::string entry = compileChain();
  std::string other = compile(kSoftmax, "jit_add_softmax");
  std::filesystem::copy_file(other + ".o", entry + ".o",
                             std::filesystem::copy_options::overwrite_existing);
  expectRebuilt("bytes, its entry says");
}

TEST_F(JitCacheTest, AnotherRegionsEntryIsRebuilt) {
  std::string entry = compileChain();
  std::string other = compile(kSoftmax, "jit_add_softmax");
  for (const char *extension : {".o", ".sig"})
    std::filesystem::copy_file(
        other + extension, entry + extension,
        std::filesystem::copy_options::overwrite_existing);
  expectRebuilt("written for another key");
}

TEST_F(JitCacheTest, EditedSignatureIsRebuilt) {
  std::string entry = compileChain();
  std::string sig = readFile(entry + ".sig");
  // The result's static dim 64 becomes 32.
  size_t last = sig.rfind(" 64\n");
  ASSERT_NE(last, std::string::npos) << sig;
  writeFile(entry + ".sig", sig.replace(last, 4, " 32\n"));
  expectRebuilt("checksum");
}

TEST_F(JitCacheTest, SignatureOtherThanTheFunctionsIsRebuilt) {
  std::string entry = compileChain();
  std::string sig = readFile(entry + ".sig");
  size_t last = sig.rfind(" 64\n");
  ASSERT_NE(last, std::string::npos) << sig;
  writeFile(entry + ".sig", sig.replace(last, 4, " 32\n"));
  rechecksum(entry);
  expectRebuilt("signature of its entry is not the function's");
}

TEST_F(JitCacheTest, UnreadableOrForeignSignatureFileIsRebuilt) {
  std::string entry = compileChain();
  writeFile(entry + ".sig", "fxmlir-jit-signature 1\nrows 1\n");
  expectRebuilt("has no 'fxmlir-jit-entry 4' header");
  std::filesystem::remove(entry + ".sig");
  std::filesystem::create_directory(entry + ".sig");
  expectRebuilt("cannot read");
}

TEST_F(JitCacheTest, LinkFailureNamesTheMissingSymbol) {
  // f64 tanh calls libm's tanh. In an entry whose object calls `tanq`
  // instead, its checksum made right, ORC's reason for the failed link
  // (reported to the session, not returned by the lookup) reaches the
  // warning.
  const char *tanh64 = R"mlir(
    func.func private @jit_f64(%x: tensor<4x8xf64, #fxmlir.device<"cpu">>)
        -> tensor<4x8xf64, #fxmlir.device<"cpu">> {
      %0 = fxmlir.aten.tanh %x
          : (tensor<4x8xf64, #fxmlir.device<"cpu">>)
          -> tensor<4x8xf64, #fxmlir.device<"cpu">>
      return %0 : tensor<4x8xf64, #fxmlir.device<"cpu">>
    })mlir";
  std::string entry = compile(tanh64, "jit_f64");
  std::string object = readFile(entry + ".o");
  size_t name = object.find(std::string("\0tanh\0", 6));
  ASSERT_NE(name, std::string::npos) << "the object calls no tanh";
  object.replace(name + 1, 4, "tanq");
  writeFile(entry + ".o", object);
  rechecksum(entry);

  Jit fresh(options());
  auto compiled = fresh.compileCpu(tanh64, "jit_f64",
                                   fresh.analyze(tanh64, "jit_f64").inputs);
  EXPECT_EQ(fresh.stats().diskDiscarded, 1);
  EXPECT_EQ(fresh.stats().compiled, 1);
  std::vector<std::string> warnings = fresh.takeWarnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot link the compiled code: Symbols not "
                             "found: [ tanq ]"),
            std::string::npos)
      << warnings[0];
  std::vector<double> x(32), out(32);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.25 * static_cast<double>(i) - 4;
  compiled->run({{x.data(), {4, 8}}}, {{out.data(), {4, 8}}});
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_NEAR(out[i], std::tanh(x[i]), 1e-12) << i;
}

TEST_F(JitCacheTest, UncreatableDirectoryKeepsCodeInMemory) {
  writeFile(cacheDir + "/file", "");
  Jit jit(JitOptions{cacheDir + "/file/cache"});
  jit.compileCpu(kChain, "jit_add_tanh_mul", chainInputs());
  jit.compileCpu(kSoftmax, "jit_add_softmax",
                 jit.analyze(kSoftmax, "jit_add_softmax").inputs);
  EXPECT_EQ(jit.stats().compiled, 2);
  EXPECT_EQ(jit.stats().diskDiscarded, 0);
  std::vector<std::string> warnings = jit.takeWarnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot create the directory"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find("kept in memory"), std::string::npos);
}

/// A Jit on `dir` compiles kChain and kSoftmax (it runs the chain right),
/// loading nothing, discarding nothing and writing nothing, with one
/// warning naming `dir` and holding `reason`; returns the warning.
std::string expectRefused(const std::string &dir, const std::string &reason) {
  Jit jit(JitOptions{dir});
  auto chain = jit.compileCpu(kChain, "jit_add_tanh_mul",
                              std::vector<TensorSpec>(3, {DType::Float32,
                                                          {kDynamic, 64}}));
  jit.compileCpu(kSoftmax, "jit_add_softmax",
                 jit.analyze(kSoftmax, "jit_add_softmax").inputs);
  JitStats stats = jit.stats();
  EXPECT_EQ(stats.compiled, 2);
  EXPECT_EQ(stats.diskHits, 0);
  EXPECT_EQ(stats.diskDiscarded, 0);
  std::vector<std::string> warnings = jit.takeWarnings();
  EXPECT_TRUE(jit.takeWarnings().empty());
  std::vector<float> a = randomVector(128, 1), b = randomVector(128, 2),
                     c = randomVector(128, 3), out(128);
  chain->run({{a.data(), {2, 64}}, {b.data(), {2, 64}}, {c.data(), {2, 64}}},
             {{out.data(), {2, 64}}});
  for (size_t i = 0; i < out.size(); ++i)
    EXPECT_NEAR(out[i], std::tanh(a[i] + b[i]) * c[i], 1e-5) << i;
  if (warnings.size() != 1u) {
    ADD_FAILURE() << warnings.size() << " warnings";
    return "";
  }
  EXPECT_NE(warnings[0].find("not using the cache directory '" + dir + "'"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[0].find(reason), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("kept in memory for this process only"),
            std::string::npos)
      << warnings[0];
  EXPECT_EQ(warnings[0].find("discarded"), std::string::npos) << warnings[0];
  return warnings[0];
}

std::filesystem::perms modeOf(const std::string &path) {
  return std::filesystem::status(path).permissions();
}

TEST_F(JitCacheTest, FileAsDirectoryKeepsCodeInMemory) {
  std::string file = cacheDir + "/file";
  writeFile(file, "not a cache");
  expectRefused(file, "it is a file, not a directory");
  EXPECT_EQ(readFile(file), "not a cache");
}

TEST_F(JitCacheTest, DirectoryWritableByOthersIsRefused) {
  using std::filesystem::perms;
  std::string entry = compileChain();
  for (perms mode : {perms(0777), perms(0775), perms(0722)}) {
    std::filesystem::permissions(cacheDir, mode);
    char octal[8];
    snprintf(octal, sizeof(octal), "%04o", static_cast<unsigned>(mode));
    std::string warning = expectRefused(
        cacheDir, "writable by group or others (mode " + std::string(octal) +
                      ")");
    EXPECT_NE(warning.find("chmod go-w '" + cacheDir + "'"), std::string::npos)
        << warning;
    // Nothing written: the softmax has no entry.
    EXPECT_EQ(entries(), std::set<std::string>{entry});
  }
  // Readable by others but writable by this user only, it is used.
  std::filesystem::permissions(cacheDir, perms(0755));
  Jit jit(options());
  jit.compileCpu(kChain, "jit_add_tanh_mul", chainInputs());
  EXPECT_EQ(jit.stats().diskHits, 1);
  EXPECT_TRUE(jit.takeWarnings().empty());
}

TEST_F(JitCacheTest, DirectoryOfAnotherUserIsRefused) {
  compileChain();
  if (chown(cacheDir.c_str(), 12345, -1) != 0)
    GTEST_SKIP() << "this user cannot give a directory away (not root)";
  expectRefused(cacheDir, "owned by uid 12345, not by this user");
}

TEST_F(JitCacheTest, CreatesAPrivateDirectoryAndEntries) {
  using std::filesystem::perms;
  // Modes as a usual umask would leave them, not what this one leaves.
  mode_t umaskBefore = umask(022);
  std::string dir = cacheDir + "/parent/cache";
  {
    Jit jit(JitOptions{dir});
    jit.compileCpu(kChain, "jit_add_tanh_mul", chainInputs());
    EXPECT_TRUE(jit.takeWarnings().empty());
  }
  umask(umaskBefore);
  EXPECT_EQ(modeOf(cacheDir + "/parent"), perms::owner_all);
  EXPECT_EQ(modeOf(dir), perms::owner_all);
  size_t files = 0;
  for (const auto &file : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(modeOf(file.path()), perms::owner_read | perms::owner_write)
        << file.path();
  }
  // The object and the signature; no temporary left.
  EXPECT_EQ(files, 2u);
}

TEST_F(JitCacheTest, EntryWritableByGroupIsRebuiltPrivate) {
  using std::filesystem::perms;
  std::string entry = compileChain();
  std::filesystem::permissions(entry + ".o", perms(0664));
  expectRebuilt("'" + entry + ".o' is writable by group or others (mode 0664)");
  EXPECT_EQ(modeOf(entry + ".o"), perms::owner_read | perms::owner_write);
  std::filesystem::permissions(entry + ".sig", perms(0602));
  expectRebuilt("is writable by group or others (mode 0602)");
}

TEST_F(JitCacheTest, EntryOfAnotherUserIsRebuilt) {
  std::string entry = compileChain();
  if (chown((entry + ".sig").c_str(), 12345, -1) != 0)
    GTEST_SKIP() << "this user cannot give a file away (not root)";
  expectRebuilt("'" + entry + ".sig' is owned by uid 12345, not by this user");
}

TEST_F(JitCacheTest, ReadOnlyDirectoryIsReadAndKeepsNewCodeInMemory) {
  compileChain();
  using std::filesystem::perms;
  std::filesystem::permissions(cacheDir, perms::owner_read | perms::owner_exec);
  if (access(cacheDir.c_str(), W_OK) == 0) {
    std::filesystem::permissions(cacheDir, perms::owner_all);
    GTEST_SKIP() << "permissions do not bind this user (root)";
  }
  Jit jit(options());
  jit.compileCpu(kChain, "jit_add_tanh_mul", chainInputs());
  jit.compileCpu(kSoftmax, "jit_add_softmax",
                 jit.analyze(kSoftmax, "jit_add_softmax").inputs);
  std::filesystem::permissions(cacheDir, perms::owner_all);
  EXPECT_EQ(jit.stats().diskHits, 1);
  EXPECT_EQ(jit.stats().compiled, 1);
  std::vector<std::string> warnings = jit.takeWarnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("kept in memory"), std::string::npos)
      << warnings[0];
}

TEST_F(JitTest, InfersResultShapesAndSplitsRows) {
  Jit jit(options());
  Signature analyzed = jit.analyze(kSoftmax, "jit_add_softmax");
  ASSERT_EQ(analyzed.results.size(), 1u);
  EXPECT_EQ(analyzed.results[0].dims[0].input, 0);
  EXPECT_EQ(analyzed.results[0].dims[0].dim, 0);
  EXPECT_EQ(analyzed.results[0].dims[1].size, 16);
  EXPECT_TRUE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.rowInputs, (std::vector<bool>{true, false}));

  auto softmax = jit.compileCpu(kSoftmax, "jit_add_softmax", analyzed.inputs);
  EXPECT_EQ(softmax->resultShapes({{5, 16}, {16}}),
            (std::vector<std::vector<int64_t>>{{5, 16}}));
  std::vector<float> x = randomVector(80, 7), b = randomVector(16, 8),
                     whole(80), sliced(80);
  std::vector<Buffer> inputs = {{x.data(), {5, 16}}, {b.data(), {16}}};
  softmax->run(inputs, {{whole.data(), {5, 16}}});
  softmax->runRows(inputs, {{sliced.data(), {5, 16}}}, 0, 2);
  softmax->runRows(inputs, {{sliced.data(), {5, 16}}}, 2, 5);
  EXPECT_EQ(whole, sliced);
  expectSoftmaxOfSum(whole, x, b, 16);
}

TEST_F(JitTest, SumOverRowsIsSummedPerSlice) {
  Jit jit(options());
  Signature analyzed = jit.analyze(kBiasGrad, "jit_mul_sum");
  EXPECT_TRUE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.summedResults, (std::vector<bool>{true}));
  auto grad = jit.compileCpu(kBiasGrad, "jit_mul_sum", analyzed.inputs);
  std::vector<float> g = randomVector(32, 9), out(8), first(8), rest(8);
  std::vector<Buffer> inputs = {{g.data(), {4, 8}}};
  EXPECT_EQ(grad->rowCount(inputs), 4);
  grad->run(inputs, {{out.data(), {8}}});
  grad->runRows(inputs, {{first.data(), {8}}}, 0, 1);
  grad->runRows(inputs, {{rest.data(), {8}}}, 1, 4);
  for (int col = 0; col < 8; ++col) {
    EXPECT_NEAR(out[col],
                2 * (g[col] + g[8 + col] + g[16 + col] + g[24 + col]), 1e-5);
    EXPECT_NEAR(first[col], 2 * g[col], 1e-6);
    EXPECT_NEAR(first[col] + rest[col], out[col], 1e-5);
  }
}

TEST_F(JitTest, AResultTheRowsDoNotReachIsComputedWholeBySlices) {
  Jit jit(options());
  Signature analyzed = jit.analyze(kMaskAdd, "jit_where_add");
  ASSERT_TRUE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.rowInputs, (std::vector<bool>{false, true}));
  EXPECT_TRUE(analyzed.isWholeResult(0));
  EXPECT_FALSE(analyzed.isWholeResult(1));
  auto fn = jit.compileCpu(kMaskAdd, "jit_where_add", analyzed.inputs);
  std::vector<uint8_t> mask(32);
  for (size_t i = 0; i < mask.size(); ++i)
    mask[i] = i % 3 == 0;
  std::vector<float> scores = randomVector(6 * 32, 11), wholeMask(32),
                     wholeSum(6 * 32), firstMask(32), secondMask(32),
                     slicedSum(6 * 32);
  std::vector<Buffer> inputs = {{mask.data(), {4, 8}},
                                {scores.data(), {6, 4, 8}}};
  fn->run(inputs, {{wholeMask.data(), {4, 8}}, {wholeSum.data(), {6, 4, 8}}});
  // Two slices, each writing the mask whole into a buffer of its own.
  fn->runRows(inputs, {{firstMask.data(), {4, 8}}, {slicedSum.data(), {6, 4, 8}}},
              0, 2);
  fn->runRows(inputs, {{secondMask.data(), {4, 8}}, {slicedSum.data(), {6, 4, 8}}},
              2, 6);
  EXPECT_EQ(firstMask, wholeMask);
  EXPECT_EQ(secondMask, wholeMask);
  EXPECT_EQ(slicedSum, wholeSum);
  for (int i = 0; i < 32; ++i)
    ASSERT_EQ(wholeMask[i], mask[i] ? 0.0f : -1.0e4f);

}

TEST_F(JitTest, AnOpNothingReadsDoesNotKeepASumFromSplitting) {
  // LLaMA's RMSNorm backward regions return the weight gradient's sum and
  // hold a view of it that nothing reads: the sum had a user besides the
  // return, so the rows did not split (one thread's, at any thread count).
  std::string withDeadView = kBiasGrad;
  size_t at = withDeadView.find("  return %1");
  ASSERT_NE(at, std::string::npos);
  withDeadView.insert(
      at, "  %2 = fxmlir.aten.view %1 {size = array<i64: 1, 8>}\n"
          "      : (tensor<8xf32, #fxmlir.device<\"cpu\">>) -> "
          "tensor<1x8xf32, #fxmlir.device<\"cpu\">>\n");
  Jit jit(options());
  Signature analyzed = jit.analyze(withDeadView, "jit_mul_sum");
  EXPECT_TRUE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.summedResults, (std::vector<bool>{true}));
}

// A batch of one: softmax(x + b) over [1, 5, 16]. The rows run along dim 1.
constexpr const char *kBatchOfOne = R"mlir(
!x = tensor<1x5x16xf32, #fxmlir.device<"cpu">>
!b = tensor<16xf32, #fxmlir.device<"cpu">>
func.func private @jit_add_softmax(%x: !x, %b: !b) -> !x {
  %0 = fxmlir.aten.add.Tensor %x, %b {alpha = 1 : i64} : (!x, !b) -> !x
  %1 = fxmlir.aten._softmax %0 {dim = -1 : i64, half_to_float = false} : (!x) -> !x
  return %1 : !x
}
)mlir";

TEST_F(JitTest, ABatchOfOneSplitsItsRowsAlongItsFirstDimThatIsNot1) {
  Jit jit(options());
  Signature analyzed = jit.analyze(kBatchOfOne, "jit_add_softmax");
  ASSERT_TRUE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.rowsFromEnd, 2);
  EXPECT_EQ(analyzed.rowInputs, (std::vector<bool>{true, false}));
  EXPECT_EQ(analyzed.inputs[0].dims, (std::vector<int64_t>{1, kDynamic, 16}));
  EXPECT_EQ(analyzed.results[0].dims[1].input, 0);
  EXPECT_EQ(analyzed.results[0].dims[1].dim, 1);
  EXPECT_FALSE(analyzed.isWholeResult(0));

  auto softmax =
      jit.compileCpu(kBatchOfOne, "jit_add_softmax", analyzed.inputs);
  std::vector<float> x = randomVector(80, 7), b = randomVector(16, 8),
                     whole(80), sliced(80);
  std::vector<Buffer> inputs = {{x.data(), {1, 5, 16}}, {b.data(), {16}}};
  EXPECT_EQ(softmax->rowCount(inputs), 5);
  softmax->run(inputs, {{whole.data(), {1, 5, 16}}});
  softmax->runRows(inputs, {{sliced.data(), {1, 5, 16}}}, 0, 2);
  softmax->runRows(inputs, {{sliced.data(), {1, 5, 16}}}, 2, 5);
  EXPECT_EQ(whole, sliced);
  expectSoftmaxOfSum(whole, x, b, 16);
}

TEST_F(JitTest, ABatchOfOneSumsItsRowsPerSlice) {
  // A bias gradient of [1, 4, 8]: the sum over dims 0 and 1 splits.
  const char *text = R"mlir(
!g = tensor<1x4x8xf32, #fxmlir.device<"cpu">>
!s = tensor<8xf32, #fxmlir.device<"cpu">>
func.func private @jit_mul_sum(%g: !g) -> !s {
  %0 = fxmlir.aten.mul.Scalar %g {other = 2.0 : f64} : (!g) -> !g
  %1 = fxmlir.aten.sum.dim_IntList %0 {dim = array<i64: 0, 1>, keepdim = false} : (!g) -> !s
  return %1 : !s
}
)mlir";
  Jit jit(options());
  Signature analyzed = jit.analyze(text, "jit_mul_sum");
  ASSERT_TRUE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.rowsFromEnd, 2);
  EXPECT_EQ(analyzed.summedResults, (std::vector<bool>{true}));
  auto grad = jit.compileCpu(text, "jit_mul_sum", analyzed.inputs);
  std::vector<float> g = randomVector(32, 9), out(8), first(8), rest(8);
  std::vector<Buffer> inputs = {{g.data(), {1, 4, 8}}};
  EXPECT_EQ(grad->rowCount(inputs), 4);
  grad->run(inputs, {{out.data(), {8}}});
  grad->runRows(inputs, {{first.data(), {8}}}, 0, 1);
  grad->runRows(inputs, {{rest.data(), {8}}}, 1, 4);
  for (int col = 0; col < 8; ++col) {
    EXPECT_NEAR(first[col], 2 * g[col], 1e-6);
    EXPECT_NEAR(first[col] + rest[col], out[col], 1e-5);
  }
}

TEST_F(JitTest, ABatchOfOnesProductsViewedWithItSplitTheirRowsToo) {
  // LLaMA's SwiGLU at a batch of one: the products are [tokens, 16], viewed
  // as [1, tokens, 16] inside the region; their rows are their dim 0.
  const char *text = R"mlir(
!p = tensor<5x16xf32, #fxmlir.device<"cpu">>
!x = tensor<1x5x16xf32, #fxmlir.device<"cpu">>
func.func private @jit_silu_mul(%a: !p, %b: !p) -> !x {
  %0 = fxmlir.aten._unsafe_view %a {size = array<i64: 1, 5, 16>} : (!p) -> !x
  %1 = fxmlir.aten.silu %0 : (!x) -> !x
  %2 = fxmlir.aten._unsafe_view %b {size = array<i64: 1, 5, 16>} : (!p) -> !x
  %3 = fxmlir.aten.mul.Tensor %1, %2 : (!x, !x) -> !x
  return %3 : !x
}
)mlir";
  Jit jit(options());
  Signature analyzed = jit.analyze(text, "jit_silu_mul");
  ASSERT_TRUE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.rowsFromEnd, 2);
  EXPECT_EQ(analyzed.rowInputs, (std::vector<bool>{true, true}));
  EXPECT_EQ(analyzed.inputs[0].dims, (std::vector<int64_t>{kDynamic, 16}));
  EXPECT_FALSE(analyzed.isWholeResult(0));
  auto fn = jit.compileCpu(text, "jit_silu_mul", analyzed.inputs);
  std::vector<float> a = randomVector(80, 3), b = randomVector(80, 4),
                     whole(80), sliced(80);
  std::vector<Buffer> inputs = {{a.data(), {5, 16}}, {b.data(), {5, 16}}};
  EXPECT_EQ(fn->rowCount(inputs), 5);
  fn->run(inputs, {{whole.data(), {1, 5, 16}}});
  fn->runRows(inputs, {{sliced.data(), {1, 5, 16}}}, 0, 3);
  fn->runRows(inputs, {{sliced.data(), {1, 5, 16}}}, 3, 5);
  EXPECT_EQ(whole, sliced);
  for (int i = 0; i < 80; ++i)
    ASSERT_NEAR(whole[i], a[i] / (1 + std::exp(-a[i])) * b[i], 1e-5);
}

TEST_F(JitTest, ABatchOfOnesLayerNormWithoutAffineSplits) {
  // `fxmlir.none` for the absent weight and bias: a value of no tensor type
  // among the row analysis's (it crashed the analysis once).
  const char *text = R"mlir(
!x = tensor<1x5x16xf32, #fxmlir.device<"cpu">>
!s = tensor<1x5x1xf32, #fxmlir.device<"cpu">>
func.func private @jit_layer_norm(%x: !x) -> (!x, !s, !s) {
  %none = fxmlir.none
  %0:3 = fxmlir.aten.native_layer_norm %x, %none, %none {normalized_shape = array<i64: 16>, eps = 1.0e-05 : f64} : (!x, none, none) -> (!x, !s, !s)
  return %0#0, %0#1, %0#2 : !x, !s, !s
}
)mlir";
  Jit jit(options());
  Signature analyzed = jit.analyze(text, "jit_layer_norm");
  ASSERT_TRUE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.rowsFromEnd, 2);
  auto fn = jit.compileCpu(text, "jit_layer_norm", analyzed.inputs);
  std::vector<float> x = randomVector(80, 5), y(80), mean(5), rstd(5),
                     slicedY(80), slicedMean(5), slicedRstd(5);
  std::vector<Buffer> inputs = {{x.data(), {1, 5, 16}}};
  fn->run(inputs, {{y.data(), {1, 5, 16}},
                   {mean.data(), {1, 5, 1}},
                   {rstd.data(), {1, 5, 1}}});
  for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, 2}, {2, 5}})
    fn->runRows(inputs,
                {{slicedY.data(), {1, 5, 16}},
                 {slicedMean.data(), {1, 5, 1}},
                 {slicedRstd.data(), {1, 5, 1}}},
                begin, end);
  EXPECT_EQ(y, slicedY);
  EXPECT_EQ(mean, slicedMean);
  EXPECT_EQ(rstd, slicedRstd);
}

/// Whether the rows of the one-op function `op` from !in to !out split,
/// with the extra argument !y where `op` names %y.
bool batchOfOneSplits(Jit &jit, const std::string &types,
                      const std::string &op) {
  std::string text = types + R"mlir(
func.func private @f(%x: !in)mlir" +
                     (op.find("%y") != std::string::npos ? ", %y: !y" : "") +
                     R"mlir() -> !out {
  %0 = )mlir" + op + R"mlir(
  return %0 : !out
}
)mlir";
  return jit.analyze(text, "f").rowsSplittable;
}

TEST_F(JitTest, ABatchOfOneKeepsItsRowsWhereNothingMovesThem) {
  Jit jit(options());
  const std::string cpu = ", #fxmlir.device<\"cpu\">>";
  const std::string heads = "!in = tensor<1x6x4x8xf32" + cpu +
                            "\n!out = tensor<1x6x8x4xf32" + cpu + "\n";
  // Inner dims swapped: the rows (dim 1) stay.
  EXPECT_TRUE(batchOfOneSplits(
      jit, heads,
      "fxmlir.aten.transpose.int %x {dim0 = 2 : i64, dim1 = 3 : i64} : (!in) "
      "-> !out"));
  // The rows moved: tokens and heads swapped.
  EXPECT_FALSE(batchOfOneSplits(
      jit,
      "!in = tensor<1x6x4x8xf32" + cpu + "\n!out = tensor<1x4x6x8xf32" + cpu +
          "\n",
      "fxmlir.aten.transpose.int %x {dim0 = 1 : i64, dim1 = 2 : i64} : (!in) "
      "-> !out"));
  EXPECT_FALSE(batchOfOneSplits(
      jit,
      "!in = tensor<1x6x4x8xf32" + cpu + "\n!out = tensor<1x4x6x8xf32" + cpu +
          "\n",
      "fxmlir.aten.permute %x {dims = array<i64: 0, 2, 1, 3>} : (!in) -> "
      "!out"));
  // A slice of the whole row dim (transformers' `hidden[:, 0:, :]`) is its
  // operand.
  EXPECT_TRUE(batchOfOneSplits(
      jit,
      "!in = tensor<1x6x8xf32" + cpu + "\n!out = tensor<1x6x8xf32" + cpu +
          "\n",
      "fxmlir.aten.slice.Tensor %x {dim = 1 : i64, start = 0 : i64, step = 1 "
      ": i64} : (!in) -> !out"));
  // A slice of the rows.
  EXPECT_FALSE(batchOfOneSplits(
      jit,
      "!in = tensor<1x6x8xf32" + cpu + "\n!out = tensor<1x3x8xf32" + cpu +
          "\n",
      "fxmlir.aten.slice.Tensor %x {dim = 1 : i64, start = 0 : i64, end = 3 "
      ": i64, step = 1 : i64} : (!in) -> !out"));
  // A [tokens, hidden] input lines its dim 0 up with the rows: it is
  // sliced with them.
  EXPECT_TRUE(batchOfOneSplits(
      jit,
      "!in = tensor<1x6x8xf32" + cpu + "\n!y = tensor<6x8xf32" + cpu +
          "\n!out = tensor<1x6x8xf32" + cpu + "\n",
      "fxmlir.aten.add.Tensor %x, %y {alpha = 1 : i64} : (!in, !y) -> !out"));
  // One that does not (a bias): the rows split.
  EXPECT_TRUE(batchOfOneSplits(
      jit,
      "!in = tensor<1x6x8xf32" + cpu + "\n!y = tensor<1x8xf32" + cpu +
          "\n!out = tensor<1x6x8xf32" + cpu + "\n",
      "fxmlir.aten.add.Tensor %x, %y {alpha = 1 : i64} : (!in, !y) -> !out"));
  // A view that puts a 1 before the rows' dim: [1, 6, 8] as [6, 1, 8].
  EXPECT_FALSE(batchOfOneSplits(
      jit,
      "!in = tensor<1x6x8xf32" + cpu + "\n!out = tensor<6x1x8xf32" + cpu +
          "\n",
      "fxmlir.aten.view %x {size = array<i64: 6, 1, 8>} : (!in) -> !out"));
  // A 1-D input viewed as [1, 8] and reduced over its last dim: the rows
  // would be that dim.
  const char *rowsInnermost = R"mlir(
!v = tensor<8xf32, #fxmlir.device<"cpu">>
!r = tensor<1x8xf32, #fxmlir.device<"cpu">>
func.func private @f(%x: !v) -> !r {
  %0 = fxmlir.aten.view %x {size = array<i64: 1, 8>} : (!v) -> !r
  %1 = fxmlir.aten._softmax %0 {dim = -1 : i64, half_to_float = false} : (!r) -> !r
  return %1 : !r
}
)mlir";
  EXPECT_FALSE(jit.analyze(rowsInnermost, "f").rowsSplittable);
  // Rows along the innermost dim: a row reduction would span them.
  EXPECT_FALSE(batchOfOneSplits(
      jit,
      "!in = tensor<1x1x8xf32" + cpu + "\n!out = tensor<1x1x8xf32" + cpu +
          "\n",
      "fxmlir.aten.neg %x : (!in) -> !out"));
}

TEST_F(JitTest, RowInputsMustAgreeOnTheirRows) {
  Jit jit(options());
  Signature analyzed = jit.analyze(kChain, "jit_add_tanh_mul");
  ASSERT_TRUE(analyzed.rowsSplittable);
  auto chain = jit.compileCpu(kChain, "jit_add_tanh_mul", analyzed.inputs);
  std::vector<float> data(8 * 64);
  Buffer eight{data.data(), {8, 64}}, four{data.data(), {4, 64}};
  EXPECT_EQ(chain->rowCount({eight, eight, eight}), 8);
  try {
    chain->rowCount({eight, four, eight});
    ADD_FAILURE() << "no error for 8 and 4 rows";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("8 and 4"), std::string::npos)
        << error.what();
  }
}

TEST_F(JitTest, ReductionOverDim0UsedLaterIsNotSplit) {
  Jit jit(options());
  Signature analyzed = jit.analyze(kScaledBiasGrad, "jit_sum_mul");
  EXPECT_FALSE(analyzed.rowsSplittable);
  EXPECT_EQ(analyzed.summedResults, (std::vector<bool>{false}));
  // A bf16 sum rounds once, at the end: slices would each round theirs.
  std::string bf16 = kBiasGrad;
  for (size_t at; (at = bf16.find("f32")) != std::string::npos;)
    bf16.replace(at, 3, "bf16");
  EXPECT_FALSE(jit.analyze(bf16, "jit_mul_sum").rowsSplittable);
  auto grad = jit.compileCpu(kScaledBiasGrad, "jit_sum_mul", analyzed.inputs);
  std::vector<float> g = randomVector(32, 9), out(8);
  grad->run({{g.data(), {4, 8}}}, {{out.data(), {8}}});
  for (int col = 0; col < 8; ++col)
    EXPECT_NEAR(out[col],
                std::exp(g[col] + g[8 + col] + g[16 + col] + g[24 + col]),
                1e-4);
  EXPECT_THROW(grad->runRows({{g.data(), {4, 8}}}, {{out.data(), {8}}}, 0, 2),
               Error);
}

TEST_F(JitTest, BadRequestsAreErrors) {
  Jit jit(options());
  std::vector<TensorSpec> good(3, {DType::Float32, {8, 64}});
  EXPECT_THROW(jit.compileCpu("func.func @", "f", good), Error);
  EXPECT_THROW(jit.compileCpu(kChain, "missing", good), Error);
  std::vector<TensorSpec> wrongDtype = good;
  wrongDtype[1].dtype = DType::Float16;
  EXPECT_THROW(jit.compileCpu(kChain, "jit_add_tanh_mul", wrongDtype), Error);
  std::vector<TensorSpec> wrongDim = good;
  wrongDim[2].dims = {8, 32};
  EXPECT_THROW(jit.compileCpu(kChain, "jit_add_tanh_mul", wrongDim), Error);
  EXPECT_THROW(jit.compileCpu(kChain, "jit_add_tanh_mul", {good[0]}), Error);
  // An op the JIT cannot lower.
  const char *gemm = R"mlir(
    func.func @f(%a: tensor<4x4xf32, #fxmlir.device<"cpu">>) -> tensor<4x4xf32, #fxmlir.device<"cpu">> {
      %0 = fxmlir.aten.mm %a, %a : (tensor<4x4xf32, #fxmlir.device<"cpu">>, tensor<4x4xf32, #fxmlir.device<"cpu">>) -> tensor<4x4xf32, #fxmlir.device<"cpu">>
      return %0 : tensor<4x4xf32, #fxmlir.device<"cpu">>
    })mlir";
  try {
    jit.compileCpu(gemm, "f", {{DType::Float32, {4, 4}}});
    FAIL() << "mm compiled";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("fxmlir.aten.mm"),
              std::string::npos)
        << error.what();
  }
  // A failed compile is not cached: the next request fails the same way.
  EXPECT_THROW(jit.compileCpu(kChain, "missing", good), Error);

  auto chain = jit.compileCpu(kChain, "jit_add_tanh_mul", good);
  std::vector<float> data(512), out(512);
  Buffer ok{data.data(), {8, 64}};
  EXPECT_THROW(chain->run({ok, ok, {data.data(), {8, 32}}},
                          {{out.data(), {8, 64}}}),
               Error);
  EXPECT_THROW(chain->run({ok, ok, ok}, {{out.data(), {4, 64}}}), Error);
  EXPECT_THROW(chain->run({ok, ok}, {{out.data(), {8, 64}}}), Error);
  EXPECT_THROW(
      chain->run({ok, ok, {nullptr, {8, 64}}}, {{out.data(), {8, 64}}}),
      Error);
  EXPECT_THROW(chain->run({ok, ok, ok}, {}), Error);
  // A wrong output names itself and the shape the inputs give the result.
  try {
    chain->run({ok, ok, ok}, {{out.data(), {8, 32}}});
    ADD_FAILURE() << "an output of the wrong shape ran";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what())
                  .find("output 0 has shape [8, 32], the result has shape "
                        "[8, 64]"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(JitTest, CompilesForCudaToPtxWithoutLibdevice) {
  Jit jit(options());
  CudaProgram program =
      jit.compileCuda(kSoftmax, "jit_add_softmax",
                      {{DType::Float32, {kDynamic, 16}},
                       {DType::Float32, {16}}});
  ASSERT_FALSE(program.launches.empty());
  EXPECT_NE(program.host.find("gpu.launch_func"), std::string::npos);
  bool ptxas = std::system("command -v ptxas > /dev/null 2>&1") == 0;
  for (const CudaLaunch &launch : program.launches) {
    EXPECT_NE(launch.ptx.find(".target sm_90"), std::string::npos);
    EXPECT_NE(launch.ptx.find(".entry " + launch.kernel + "("),
              std::string::npos);
    // exp is approximated: nothing left to link from libdevice.
    EXPECT_EQ(launch.ptx.find(".extern"), std::string::npos);
    if (!ptxas)
      continue;
    std::string path = cacheDir + "/" + launch.kernel + ".ptx";
    std::ofstream(path) << launch.ptx;
    EXPECT_EQ(std::system(("ptxas -arch=sm_90 -o /dev/null " + path).c_str()),
              0)
        << launch.ptx;
  }
}

} // namespace
