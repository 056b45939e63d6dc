//===- CoreTest.cpp - tests of the public core API ------------------------===//

#include "fxmlir/Core/Core.h"

#include <algorithm>
#include <memory>

#include <gtest/gtest.h>

using fxmlir::Context;
using fxmlir::Error;
using fxmlir::Module;
using fxmlir::PassDescription;
using fxmlir::pipelinePasses;

namespace {

constexpr const char *kBiasGelu = R"mlir(
func.func @forward(%x: tensor<4x8xf32, #fxmlir.device<"cpu">>,
                   %b: tensor<8xf32, #fxmlir.device<"cpu">>)
    -> tensor<4x8xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64}
      : (tensor<4x8xf32, #fxmlir.device<"cpu">>, tensor<8xf32, #fxmlir.device<"cpu">>)
      -> tensor<4x8xf32, #fxmlir.device<"cpu">>
  %1 = fxmlir.aten.gelu %0 {approximate = "none"}
      : (tensor<4x8xf32, #fxmlir.device<"cpu">>) -> tensor<4x8xf32, #fxmlir.device<"cpu">>
  return %1 : tensor<4x8xf32, #fxmlir.device<"cpu">>
}
)mlir";

std::string repeat(const std::string &text, unsigned times) {
  std::string result;
  for (unsigned i = 0; i < times; ++i)
    result += text;
  return result;
}

class CoreTest : public ::testing::Test {
protected:
  /// Module::fromJson's error on `json` (graph name "g"), or "no error".
  std::string importError(const std::string &json) {
    try {
      Module::fromJson(context, json, "g");
    } catch (const Error &e) {
      return e.what();
    }
    return "no error";
  }

  Context context;
};

TEST_F(CoreTest, RegistersGeneratedAndHandWrittenOps) {
  EXPECT_TRUE(context.isRegisteredOp("fxmlir.aten.gelu"));
  EXPECT_TRUE(context.isRegisteredOp("fxmlir.fused_bias_act"));
  EXPECT_TRUE(context.isRegisteredOp("fxmlir.call"));
  EXPECT_FALSE(context.isRegisteredOp("fxmlir.aten.no_such_op"));
  std::vector<std::string> ops = context.dialectOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_NE(std::find(ops.begin(), ops.end(), "fxmlir.mlir_jit"), ops.end());
}

TEST_F(CoreTest, PrintedModuleReparsesToTheSameText) {
  Module module = Module::parse(context, kBiasGelu, "bias_gelu.mlir");
  std::string printed = module.str();
  EXPECT_NE(printed.find("fxmlir.bias_add"), std::string::npos);
  EXPECT_EQ(Module::parse(context, printed).str(), printed);
  // The generic form names every op in quotes and parses back too.
  std::string generic = module.str(/*generic=*/true);
  EXPECT_NE(generic.find("\"fxmlir.aten.gelu\""), std::string::npos);
  EXPECT_EQ(Module::parse(context, generic).str(), printed);
}

TEST_F(CoreTest, MalformedInputNamesTheLocation) {
  try {
    Module::parse(context, "func.func @f() {\n  %0 = fxmlir.nope\n}\n",
                  "bad.mlir");
    FAIL() << "parse accepted malformed input";
  } catch (const Error &error) {
    std::string message = error.what();
    EXPECT_NE(message.find("bad.mlir:2:"), std::string::npos) << message;
    EXPECT_NE(message.find("fxmlir.nope"), std::string::npos) << message;
  }
}

TEST_F(CoreTest, VerifierErrorsAreReported) {
  // The bias is 7 wide but dim 1 is 8.
  const char *text = R"mlir(
func.func @f(%x: tensor<4x8xf32>, %b: tensor<7xf32>) -> tensor<4x8xf32> {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64}
      : (tensor<4x8xf32>, tensor<7xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
)mlir";
  try {
    Module::parse(context, text, "mismatch.mlir");
    FAIL() << "verifier accepted a mismatched bias";
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("does not match dim 1"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(CoreTest, InliningAJitRegionPutsItsOpsBackAtEachCall) {
  // Two calls of one outlined function (identical regions share it).
  const char *text = R"mlir(
!t = tensor<4x8xf32, #fxmlir.device<"cpu">>
func.func @g(%x: !t, %y: !t) -> (!t, !t) {
  %0 = fxmlir.mlir_jit @jit_tanh_mul(%x) : (!t) -> !t
  %1 = fxmlir.mlir_jit @jit_tanh_mul(%y) : (!t) -> !t
  return %0, %1 : !t, !t
}
func.func private @jit_tanh_mul(%a: !t) -> !t {
  %0 = fxmlir.aten.tanh %a : (!t) -> !t loc("tanh")
  %1 = fxmlir.aten.mul.Tensor %0, %a : (!t, !t) -> !t loc("mul")
  return %1 : !t
}
)mlir";
  Module module = Module::parse(context, text);
  EXPECT_THROW(module.inlineJitRegion("jit_other"), Error);
  EXPECT_THROW(module.inlineJitRegion("g"), Error); // a graph, not a region
  module.inlineJitRegion("jit_tanh_mul");
  module.verify();
  std::map<std::string, int64_t> counts = module.opCounts();
  EXPECT_EQ(counts.count("fxmlir.mlir_jit"), 0u);
  EXPECT_EQ(counts["fxmlir.aten.tanh"], 2);
  EXPECT_EQ(counts["fxmlir.aten.mul.Tensor"], 2);
  std::string printed = module.str(/*generic=*/false, /*fxNames=*/true);
  EXPECT_EQ(printed.find("@jit_tanh_mul"), std::string::npos);
  // The ops keep the FX node names they had in the graph.
  EXPECT_NE(printed.find("%tanh = fxmlir.aten.tanh %arg0"), std::string::npos)
      << printed;
}

TEST_F(CoreTest, JitRegionsComeBackWithTheirDeviceAndText) {
  const char *text = R"mlir(
!c = tensor<4x8xf32, #fxmlir.device<"cpu">>
!g = tensor<4x8xf32, #fxmlir.device<"cuda:0">>
func.func @g(%x: !c, %y: !g) -> (!c, !g) {
  %0 = fxmlir.mlir_jit @jit_tanh(%x) : (!c) -> !c
  %1 = fxmlir.mlir_jit @jit_exp(%y) : (!g) -> !g
  return %0, %1 : !c, !g
}
func.func private @jit_tanh(%a: !c) -> !c {
  %0 = fxmlir.aten.tanh %a : (!c) -> !c
  return %0 : !c
}
func.func private @jit_exp(%a: !g) -> !g {
  %0 = fxmlir.aten.exp %a : (!g) -> !g
  return %0 : !g
}
)mlir";
  std::vector<Module::JitRegion> regions =
      Module::parse(context, text).jitRegions();
  ASSERT_EQ(regions.size(), 2u); // the graph @g is no region
  EXPECT_EQ(regions[0].name, "jit_tanh");
  EXPECT_EQ(regions[0].deviceType, "cpu");
  EXPECT_EQ(regions[1].name, "jit_exp");
  EXPECT_EQ(regions[1].deviceType, "cuda");
  // A region's text stands alone: it parses, and gives itself back.
  EXPECT_EQ(regions[1].text.rfind("func.func private @jit_exp(", 0), 0u)
      << regions[1].text;
  std::vector<Module::JitRegion> alone =
      Module::parse(context, regions[1].text).jitRegions();
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].text, regions[1].text);
}

TEST_F(CoreTest, StagePipelinesAreSpelledAndRunByTheCore) {
  EXPECT_EQ(fxmlir::stagePipeline("backward", {}), "fxmlir-backward");
  EXPECT_EQ(fxmlir::stagePipeline(
                "forward", {{}, {"fxmlir-eager-random"}, {"cse"}, {"cpu", "cuda"}}),
            "fxmlir-forward{add=fxmlir-eager-random remove=cse "
            "region-device-types=cpu,cuda}");
  EXPECT_EQ(fxmlir::stagePipeline("backward", {{"cse", "canonicalize"}}),
            "fxmlir-backward{only=cse,canonicalize}");
  EXPECT_THROW(fxmlir::stagePipeline("sideways", {}), Error);
  EXPECT_THROW(fxmlir::stagePipeline("forward", {{}, {"no-such-pass"}}), Error);
  fxmlir::StageChoice choice{{}, {"fxmlir-eager-random"}, {"cse"}, {}};
  Module module = Module::parse(context, kBiasGelu);
  std::vector<std::string> ran;
  for (const Module::PassRun &run : module.runStage("forward", choice))
    ran.push_back(run.pass);
  EXPECT_EQ(ran, fxmlir::stagePasses("forward", choice.only, choice.add,
                                     choice.remove));
}

TEST_F(CoreTest, RunsPipelinesAndRejectsUnknownPasses) {
  const char *text = R"mlir(
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fxmlir.aten.gelu %x {approximate = "none"} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = fxmlir.aten.gelu %x {approximate = "none"} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = fxmlir.aten.gelu %x {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
)mlir";
  Module module = Module::parse(context, text);
  EXPECT_EQ(module.opCounts()["fxmlir.aten.gelu"], 3);
  Module copy = module.clone();
  // Pure ops: the unused one is dead.
  module.runPipeline("canonicalize");
  EXPECT_EQ(module.opCounts()["fxmlir.aten.gelu"], 2);
  // The clone is independent of the transformed module; CSE merges the twins.
  EXPECT_EQ(copy.opCounts()["fxmlir.aten.gelu"], 3);
  copy.runPipeline("cse");
  EXPECT_EQ(copy.opCounts()["fxmlir.aten.gelu"], 1);
  EXPECT_THROW(module.runPipeline("no-such-pass"), Error);
}

TEST_F(CoreTest, ExportsJsonGraphWithTaggedAttributes) {
  Module module = Module::parse(context, kBiasGelu);
  std::string json = module.toJson();
  EXPECT_NE(json.find("\"name\":\"forward\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"axis\":{\"int\":1}"), std::string::npos) << json;
  EXPECT_NE(json.find("\"approximate\":{\"str\":\"none\"}"), std::string::npos)
      << json;
  EXPECT_NE(json.find("\"device\":\"cpu\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"shape\":[4,8]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"returns\":[3]"), std::string::npos) << json;
}

// The Python importer hands the core toJson's form: built back, the module
// prints as the one it came from, attributes of every tag included.
TEST_F(CoreTest, JsonGraphBuildsTheModuleItWasExportedFrom) {
  constexpr const char *kTagged = R"mlir(
func.func @forward(%x: tensor<?x8xbf16, #fxmlir.device<"cuda:0">>) -> (tensor<?x8xbf16, #fxmlir.device<"cuda:0">>, none) {
  %none = "fxmlir.none"() : () -> none
  %0 = "fxmlir.call"(%x) {target = "aten::x", args = [#fxmlir.operand<0>, 1.5e-05 : f64, 0x7FF0000000000000 : f64, "a\22b", true, bf16, #fxmlir.device<"cpu">, #fxmlir.none, {tuple = [1 : i64, -2 : i64]}], kwargs = {k = array<i64: 1, 2>, f = array<f64: 0.5>, b = array<i1: true>}} : (tensor<?x8xbf16, #fxmlir.device<"cuda:0">>) -> tensor<?x8xbf16, #fxmlir.device<"cuda:0">> loc("call")
  return %0, %none : tensor<?x8xbf16, #fxmlir.device<"cuda:0">>, none
}
)mlir";
  Module module = Module::parse(context, kTagged);
  Module built = Module::fromJson(context, module.toJson(), "tagged");
  EXPECT_EQ(built.str(/*generic=*/false, /*fxNames=*/true),
            module.str(/*generic=*/false, /*fxNames=*/true));
  Module again = Module::fromJson(context, Module::parse(context, kBiasGelu).toJson());
  EXPECT_EQ(again.str(), Module::parse(context, kBiasGelu).str());
}

// The graph's JSON is read by the core's own reader (JsonReader.cpp):
// escapes, non-ASCII text and large integers arrive as JSON spells them,
// and toJson writes them back so that they read the same again.
TEST_F(CoreTest, JsonStringsAndNumbersReadAsJsonSpellsThem) {
  // \u00e9 is e-acute; the surrogate pair, U+1F600; a lone surrogate reads
  // as U+FFFD.
  std::string json =
      R"({"functions": [{"name": "f", "arguments": [], "returns": [], "ops": [)"
      R"({"name": "fxmlir.call", "loc": "call", "operands": [], "results": [],)"
      R"( "attributes": {"target": {"str": "q\"b\\s\/\n\t\u00e9\ud83d\ude00\ud800x"},)"
      R"( "args": {"list": [{"int": -9223372036854775808}, {"float": "-1e-05"}]},)"
      R"( "kwargs": {"dict": {}}}}]}]})";
  Module module = Module::fromJson(context, json, "strings");
  std::string printed = module.str();
  EXPECT_NE(printed.find(R"(fxmlir.call "q\22b\\s/\0A\09\C3\A9\F0\9F\98\80\EF\BF\BDx"())"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("args = [-9223372036854775808, -1.000000e-05]"),
            std::string::npos)
      << printed;
  Module again = Module::fromJson(context, module.toJson(), "again");
  EXPECT_EQ(again.str(), printed);
}

TEST_F(CoreTest, InvalidJsonIsAnErrorAtItsByte) {
  auto error = [&](const std::string &json) { return importError(json); };
  EXPECT_EQ(error(R"({"functions": [)"),
            "cannot import g: invalid JSON at byte 15: the text ends where a "
            "value should be");
  EXPECT_EQ(error(R"({"functions": []} x)"),
            "cannot import g: invalid JSON at byte 18: text after the end of "
            "the value");
  EXPECT_EQ(error(R"({"functions": [01]})"),
            "cannot import g: invalid JSON at byte 16: expected ',' or ']'");
  EXPECT_EQ(error(R"({"a": "\x"})"),
            "cannot import g: invalid JSON at byte 8: an unknown escape in a string");
  EXPECT_EQ(error(R"({"a": "\u12"})"),
            "cannot import g: invalid JSON at byte 9: expected four hex digits after \\u");
  EXPECT_EQ(error("{\"a\": \"x\ny\"}"),
            "cannot import g: invalid JSON at byte 8: a control character in a string");
  // Deep nesting is an error, not a stack overflow.
  EXPECT_NE(error(repeat("[", 100000)).find("nested deeper than 256 levels"),
            std::string::npos);
  // Valid JSON, wrong graph: the importer's own message.
  EXPECT_EQ(error(R"({"functions": [{"name": "f", "arguments": [1.5]}]})"),
            "cannot import g: an argument is not a JSON object");
}

// A bad graph is an Error naming the FX node, never a crash.
TEST_F(CoreTest, BadJsonGraphsNameTheNodeAndTheProblem) {
  auto error = [&](const std::string &json) { return importError(json); };
  auto graph = [](const std::string &op) {
    return R"({"functions": [{"name": "f", "arguments": [{"id": 0, "type": )"
           R"({"kind": "tensor", "shape": [2], "dtype": "f32", "device": "cpu"}}],)"
           R"( "ops": [)" + op + R"(], "returns": [1]}]})";
  };
  std::string tanh = R"({"name": "fxmlir.aten.tanh", "loc": "tanh_1", "operands": [0], )"
                     R"("results": [{"id": 1, "type": {"kind": "tensor", "shape": [2], )"
                     R"("dtype": "f32", "device": "cpu"}}]})";
  EXPECT_EQ(error(graph(tanh)), "no error");
  EXPECT_NE(error("{").find("cannot import g:"), std::string::npos);
  std::string unknown = tanh;
  unknown.replace(unknown.find("aten.tanh"), 9, "aten.nope");
  EXPECT_NE(error(graph(unknown)).find("node 'tanh_1' (fxmlir.aten.nope): unknown op"),
            std::string::npos)
      << error(graph(unknown));
  std::string early = tanh;
  early.replace(early.find("[0]"), 3, "[7]");
  EXPECT_NE(error(graph(early)).find("value 7 is used before it is defined"),
            std::string::npos);
  std::string badType = tanh;
  badType.replace(badType.find("f32\", \"device"), 3, "f99");
  EXPECT_NE(error(graph(badType)).find("unknown element type 'f99'"),
            std::string::npos)
      << error(graph(badType));
  std::string noId = tanh;
  noId.replace(noId.find("\"id\": 1, "), 9, "");
  EXPECT_NE(error(graph(noId)).find("node 'tanh_1' (fxmlir.aten.tanh): missing field 'id'"),
            std::string::npos)
      << error(graph(noId));
  // Built but wrong: the verifier's message, at the node.
  std::string wrongShape = tanh;
  wrongShape.replace(wrongShape.rfind("[2]"), 3, "[3]");
  std::string message = error(graph(wrongShape));
  EXPECT_NE(message.find("does not verify"), std::string::npos) << message;
  EXPECT_NE(message.find("tanh_1"), std::string::npos) << message;
}

TEST_F(CoreTest, ExplainsASiteThatDidNotFuse) {
  // The bias_add feeds gelu and the return: fusing would compute it twice.
  constexpr const char *kTwoUses = R"mlir(
func.func @forward(%x: tensor<4x8xf32>, %b: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = fxmlir.bias_add %x, %b {axis = 1 : i64}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = fxmlir.aten.gelu %0 {approximate = "none"}
      : (tensor<4x8xf32>) -> tensor<4x8xf32> loc("gelu")
  return %1, %0 : tensor<4x8xf32>, tensor<4x8xf32>
}
)mlir";
  Module module = Module::parse(context, kTwoUses);
  std::vector<Module::UnfusedSite> sites =
      module.explainFusions("fxmlir-fuse-bias-add-activation");
  ASSERT_EQ(sites.size(), 1u) << module.str();
  EXPECT_EQ(sites[0].pass, "fxmlir-fuse-bias-add-activation");
  EXPECT_EQ(sites[0].op, "fxmlir.aten.gelu");
  EXPECT_EQ(sites[0].location, "gelu");
  EXPECT_EQ(sites[0].pattern, "FuseBiasAddGeluPattern");
  EXPECT_NE(sites[0].reason.find("has one use"), std::string::npos)
      << sites[0].reason;
  // A site that fuses is no site.
  EXPECT_TRUE(Module::parse(context, kBiasGelu)
                  .explainFusions("fxmlir-fuse-bias-add-activation")
                  .empty());
}

TEST_F(CoreTest, ListsThePipelineInOrderAndRunsItsPasses) {
  std::vector<PassDescription> passes = pipelinePasses();
  std::vector<std::string> names;
  for (const PassDescription &pass : passes) {
    EXPECT_FALSE(pass.summary.empty()) << pass.name;
    names.push_back(pass.name);
  }
  auto position = [&](const std::string &name) {
    return std::find(names.begin(), names.end(), name) - names.begin();
  };
  ASSERT_LT(position("fxmlir-recompose"), int64_t(names.size()));
  EXPECT_LT(position("fxmlir-decompose"),
            position("fxmlir-fuse-bias-add-activation"));
  EXPECT_LT(position("fxmlir-fuse-bias-add-activation"),
            position("fxmlir-recompose"));

  // Every listed pass runs by its name.
  Module module = Module::parse(context, kBiasGelu);
  for (const std::string &name : names)
    module.runPipeline(name);
  EXPECT_EQ(module.opCounts()["fxmlir.fused_bias_act"], 1);
  EXPECT_EQ(module.opCounts().count("fxmlir.bias_add"), 0u);
}

TEST_F(CoreTest, EachStageHasANamedPipelineOfItsDefaultPasses) {
  for (const std::string &stage : fxmlir::stages()) {
    std::string name = "fxmlir-" + stage;
    std::replace(name.begin(), name.end(), '_', '-');
    std::vector<std::string> expected;
    for (const PassDescription &pass : pipelinePasses())
      if (std::find(pass.stages.begin(), pass.stages.end(), stage) !=
          pass.stages.end())
        expected.push_back(pass.name);
    Module module = Module::parse(context, kBiasGelu);
    std::vector<std::string> ran;
    for (const Module::PassRun &run : module.runPipeline(name))
      ran.push_back(run.pass);
    EXPECT_EQ(ran, expected) << name;
    EXPECT_EQ(module.opCounts()["fxmlir.fused_bias_act"], 1) << name;
  }
}

TEST_F(CoreTest, StagePassesAddRemoveOrChooseOnly) {
  const std::string outline = "fxmlir-outline-jit-regions";
  auto has = [](const std::vector<std::string> &passes,
                const std::string &name) {
    return std::find(passes.begin(), passes.end(), name) != passes.end();
  };
  std::vector<std::string> forward = fxmlir::stagePasses("forward", {}, {}, {});
  EXPECT_TRUE(has(forward, outline));
  EXPECT_TRUE(has(forward, "cse"));
  EXPECT_FALSE(has(fxmlir::stagePasses("forward", {}, {}, {outline}), outline));
  // Regions never run before autodiff, even when added.
  EXPECT_FALSE(has(fxmlir::stagePasses("before_autodiff", {}, {outline}, {}),
                   outline));
  // `only` keeps pipeline order, whatever order it names passes in.
  EXPECT_EQ(fxmlir::stagePasses("backward", {outline, "cse"}, {}, {}),
            (std::vector<std::string>{"cse", outline}));
  EXPECT_THROW(fxmlir::stagePasses("forward", {}, {"fxmlir-nothing"}, {}),
               fxmlir::Error);
  EXPECT_THROW(fxmlir::stagePasses("sideways", {}, {}, {}), fxmlir::Error);
}

TEST_F(CoreTest, PipelineRunsReportEachPassWithTimeAndSnapshot) {
  Module module = Module::parse(context, kBiasGelu);
  std::vector<Module::PassRun> runs =
      module.runPipeline("canonicalize,fxmlir-fuse-bias-add-activation", true);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].pass, "canonicalize");
  EXPECT_EQ(runs[1].pass, "fxmlir-fuse-bias-add-activation");
  for (const Module::PassRun &run : runs)
    EXPECT_GE(run.milliseconds, 0.0);
  // Each snapshot is the module as that pass left it.
  EXPECT_NE(runs[0].moduleAfter.find("fxmlir.aten.gelu"), std::string::npos);
  EXPECT_EQ(runs[1].moduleAfter.find("fxmlir.aten.gelu"), std::string::npos);
  EXPECT_NE(runs[1].moduleAfter.find("fxmlir.fused_bias_act"),
            std::string::npos);
  // Without snapshots the report still names and times every pass.
  std::vector<Module::PassRun> quiet = module.runPipeline("cse,canonicalize");
  ASSERT_EQ(quiet.size(), 2u);
  EXPECT_TRUE(quiet[0].moduleAfter.empty());
}

TEST_F(CoreTest, ModulesOutliveTheirContextHandle) {
  auto scoped = std::make_unique<Context>();
  Module module = Module::parse(*scoped, kBiasGelu);
  Module copy = module.clone();
  scoped.reset();
  // The module's ops still live: printing and transforming them works.
  EXPECT_NE(module.str().find("fxmlir.bias_add"), std::string::npos);
  copy.runPipeline("canonicalize");
  EXPECT_EQ(copy.opCounts()["fxmlir.aten.gelu"], 1);
}

/// `depth` nested array attributes: [[[ ... ]]].
std::string nestedArrays(unsigned depth) {
  return "func.func @f() attributes {a = " + std::string(depth, '[') +
         std::string(depth, ']') + "} {\n  return\n}\n";
}

TEST_F(CoreTest, RefusesInputNestedDeeperThanTheLimit) {
  // Within the limit (the function's braces add one level) it parses.
  EXPECT_NO_THROW(
      Module::parse(context, nestedArrays(fxmlir::kMaxNestingDepth - 2)));
  // Far beyond it, where MLIR's recursive parser would overflow the stack,
  // it is an error naming the place, for each kind of bracket.
  std::string deepTuple = "func.func @f(%x: " + repeat("tuple<", 20000) +
                          "i32" + repeat(">", 20000) + ") {\n  return\n}\n";
  // Each unary minus of an affine expression recurses as a bracket does.
  std::string minuses =
      "#m = affine_map<(d0) -> (" + std::string(15000, '-') + "d0)>\n";
  for (const std::string &text : {nestedArrays(7000), deepTuple, minuses}) {
    try {
      Module::parse(context, text, "deep.mlir");
      FAIL() << "parse accepted input nested 7000+ deep";
    } catch (const Error &error) {
      std::string message = error.what();
      EXPECT_NE(message.find("deep.mlir:1:"), std::string::npos) << message;
      EXPECT_NE(message.find("more than 256 levels deep"), std::string::npos)
          << message;
    }
  }
  // Brackets inside string literals and comments and the arrows of function
  // types do not count.
  std::string quoted = "// " + std::string(1000, '(') +
                       "\nfunc.func @f() -> () attributes {s = \"" +
                       std::string(1000, '[') + "\"} {\n  return\n}\n";
  EXPECT_NO_THROW(Module::parse(context, quoted));
}

TEST_F(CoreTest, JsonRefusesIntegersWiderThan64Bits) {
  const char *text = R"mlir(
func.func @f() {
  "fxmlir.call"() {target = "t", args = [%s], kwargs = {}} : () -> ()
  return
}
)mlir";
  auto withArg = [&](const std::string &arg) {
    std::string source = text;
    source.replace(source.find("%s"), 2, arg);
    return Module::parse(context, source);
  };
  EXPECT_NO_THROW(withArg("-9223372036854775808 : i64").toJson());
  for (const char *wide :
       {"18446744073709551621 : i128", "9223372036854775808 : ui64"}) {
    try {
      withArg(wide).toJson();
      FAIL() << wide << " was exported";
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find("does not fit in 64 bits"),
                std::string::npos)
          << error.what();
    }
  }
}

} // namespace
