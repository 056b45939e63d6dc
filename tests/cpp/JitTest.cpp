//===- JitTest.cpp - tests of the JIT API ---------------------------------===//

#include "fxmlir/Core/Jit.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

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

std::vector<float> randomVector(size_t size, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  std::vector<float> values(size);
  for (float &value : values)
    value = normal(generator);
  return values;
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
  // Another signature is another compile.
  jit.compileCpu(kChain, "jit_add_tanh_mul",
                 std::vector<TensorSpec>(3, {DType::Float32, {8, 64}}));
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

TEST_F(JitTest, NoDiskCacheWithAnEmptyDirectory) {
  Jit jit(JitOptions{std::string()});
  EXPECT_EQ(jit.cacheDir(), "");
  jit.compileCpu(kChain, "jit_add_tanh_mul",
                 std::vector<TensorSpec>(3, {DType::Float32, {8, 64}}));
  EXPECT_EQ(jit.stats().compiled, 1);
  EXPECT_TRUE(std::filesystem::is_empty(cacheDir));
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
  for (int row = 0; row < 5; ++row) {
    double sum = 0;
    for (int col = 0; col < 16; ++col)
      sum += std::exp(x[row * 16 + col] + b[col]);
    for (int col = 0; col < 16; ++col)
      ASSERT_NEAR(whole[row * 16 + col],
                  std::exp(x[row * 16 + col] + b[col]) / sum, 1e-6);
  }
}

TEST_F(JitTest, ReductionOverDim0IsNotSplit) {
  Jit jit(options());
  Signature analyzed = jit.analyze(kBiasGrad, "jit_mul_sum");
  EXPECT_FALSE(analyzed.rowsSplittable);
  auto grad = jit.compileCpu(kBiasGrad, "jit_mul_sum", analyzed.inputs);
  std::vector<float> g = randomVector(32, 9), out(8);
  grad->run({{g.data(), {4, 8}}}, {{out.data(), {8}}});
  for (int col = 0; col < 8; ++col)
    EXPECT_NEAR(out[col],
                2 * (g[col] + g[8 + col] + g[16 + col] + g[24 + col]), 1e-5);
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
