//===- module.cpp - fxmlir._C: Python bindings of the core API ------------===//
//
// A thin layer over fxmlir/Core/Core.h: no MLIR headers, so it builds against
// a prebuilt core with whatever Python and compiler the machine has. A Module
// shares ownership of its Context in the core, so no keep_alive is needed
// here (pybind11 3.1 runs keep_alive's post-call hook even for calls whose
// arguments did not convert, which crashed on a bad argument).
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Core/Core.h"
#include "fxmlir/JIT/Jit.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace {
/// The UTF-8 text of a str argument: TypeError for any other type, and
/// Python's UnicodeEncodeError for text UTF-8 cannot hold (lone surrogates).
std::string textArgument(py::handle value, const char *function,
                         const char *argument) {
  if (!PyUnicode_Check(value.ptr()))
    throw py::type_error(std::string(function) + "(): " + argument +
                         " must be str, not " + Py_TYPE(value.ptr())->tp_name);
  Py_ssize_t size = 0;
  const char *data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (!data)
    throw py::error_already_set();
  return std::string(data, size);
}

/// A stage's pass choice from run_stage's and explain_stage's keywords.
fxmlir::StageChoice stageChoice(std::vector<std::string> only,
                                std::vector<std::string> add,
                                std::vector<std::string> remove,
                                std::vector<std::string> regionDeviceTypes,
                                std::vector<std::string> widenedProductTypes) {
  return {std::move(only), std::move(add), std::move(remove),
          std::move(regionDeviceTypes), std::move(widenedProductTypes)};
}
} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "fxmlir core: parse, verify, transform and export fxmlir modules";

  py::register_exception<fxmlir::Error>(m, "Error", PyExc_ValueError);
  m.attr("MAX_NESTING_DEPTH") = fxmlir::kMaxNestingDepth;

  py::class_<fxmlir::PassDescription>(m, "PassDescription")
      .def_readonly("name", &fxmlir::PassDescription::name)
      .def_readonly("summary", &fxmlir::PassDescription::summary)
      .def_readonly("stages", &fxmlir::PassDescription::stages,
                    "The stages whose default pipeline runs it.")
      .def("__repr__", [](const fxmlir::PassDescription &p) {
        return "<pass " + p.name + ": " + p.summary + ">";
      });
  m.def("pipeline_passes", &fxmlir::pipelinePasses,
        "The passes a round trip may run, in pipeline order.");
  m.def("stages", &fxmlir::stages,
        "The stages of a training step, each with a default pipeline.");
  m.def(
      "stage_pipeline",
      [](const std::string &stage, std::vector<std::string> only,
         std::vector<std::string> add, std::vector<std::string> remove,
         std::vector<std::string> regionDeviceTypes,
         std::vector<std::string> widenedProductTypes) {
        return fxmlir::stagePipeline(
            stage, stageChoice(std::move(only), std::move(add),
                               std::move(remove), std::move(regionDeviceTypes),
                               std::move(widenedProductTypes)));
      },
      py::arg("stage"), py::kw_only(),
      py::arg("only") = std::vector<std::string>(),
      py::arg("add") = std::vector<std::string>(),
      py::arg("remove") = std::vector<std::string>(),
      py::arg("region_device_types") = std::vector<std::string>(),
      py::arg("widened_product_dtypes") = std::vector<std::string>(),
      "The pipeline Module.run_stage runs, in fxmlir-opt syntax (to "
      "reproduce a round trip with fxmlir-opt).");
  m.def("stage_passes", &fxmlir::stagePasses, py::arg("stage"),
        py::arg("only"), py::arg("add"), py::arg("remove"),
        "The passes a stage's pipeline runs: its default ones with `add` and "
        "without `remove`, or exactly `only` when not empty.");

  py::class_<fxmlir::Module::PassRun>(m, "PassRun")
      .def_readonly("pass_name", &fxmlir::Module::PassRun::pass)
      .def_readonly("milliseconds", &fxmlir::Module::PassRun::milliseconds)
      .def_readonly("module_after", &fxmlir::Module::PassRun::moduleAfter,
                    "The module after the pass ('' without snapshots).");

  m.def(
      "jit_stats",
      [] {
        fxmlir::jit::Jit &jit = fxmlir::jit::Jit::shared();
        fxmlir::jit::JitStats stats = jit.stats();
        py::dict result;
        result["compiled"] = stats.compiled;
        result["memory_hits"] = stats.memoryHits;
        result["disk_hits"] = stats.diskHits;
        result["disk_discarded"] = stats.diskDiscarded;
        result["compile_seconds"] = stats.compileSeconds;
        result["disk_load_seconds"] = stats.diskLoadSeconds;
        result["cache_dir"] = jit.cacheDir();
        return result;
      },
      "Counters of the process's JIT (torch.ops.fxmlir.mlir_jit's).");
  m.def(
      "jit_compile_cpu",
      [](py::handle module, py::handle function) {
        std::string text = textArgument(module, "jit_compile_cpu", "module");
        std::string name =
            textArgument(function, "jit_compile_cpu", "function");
        fxmlir::jit::Jit *jit;
        {
          py::gil_scoped_release release;
          jit = &fxmlir::jit::Jit::shared();
          jit->compileCpu(text, name, jit->analyze(text, name).inputs);
        }
        // What the JIT worked around (a cache entry rebuilt, a cache
        // directory it cannot write), as Python warnings.
        for (const std::string &warning : jit->takeWarnings())
          if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) < 0)
            throw py::error_already_set();
      },
      py::arg("module"), py::arg("function"),
      "Compile a JIT region for the CPU as mlir_jit's CPU kernel will (so "
      "that its first call finds the code cached); raises Error when it "
      "cannot, warns (UserWarning) for what the JIT worked around.");

  m.def(
      "jit_check_cuda",
      [](py::handle module, py::handle function) {
        std::string text = textArgument(module, "jit_check_cuda", "module");
        std::string name = textArgument(function, "jit_check_cuda", "function");
        py::gil_scoped_release release;
        fxmlir::jit::Jit &jit = fxmlir::jit::Jit::shared();
        jit.compileCuda(text, name, jit.analyze(text, name).inputs);
      },
      py::arg("module"), py::arg("function"),
      "Lower a JIT region for CUDA (to PTX, no GPU needed), as mlir_jit's "
      "CUDA kernel will for its device; raises Error when it cannot.");

  py::class_<fxmlir::Module::UnfusedSite>(m, "UnfusedSite")
      .def_readonly("pass_name", &fxmlir::Module::UnfusedSite::pass)
      .def_readonly("op", &fxmlir::Module::UnfusedSite::op)
      .def_readonly("location", &fxmlir::Module::UnfusedSite::location)
      .def_readonly("pattern", &fxmlir::Module::UnfusedSite::pattern,
                    "The pattern that came closest to matching.")
      .def_readonly("reason", &fxmlir::Module::UnfusedSite::reason,
                    "The check it failed.")
      .def_readonly("reason_location",
                    &fxmlir::Module::UnfusedSite::reasonLocation)
      .def_readonly("reason_op", &fxmlir::Module::UnfusedSite::reasonOp,
                    "The op the check failed at, when it is the site's op "
                    "or produces one of its operands; else ''.")
      .def_readonly("others", &fxmlir::Module::UnfusedSite::others,
                    "The other patterns tried there: 'Pattern: reason'.");

  py::class_<fxmlir::Module::JitRegion>(m, "JitRegion")
      .def_readonly("name", &fxmlir::Module::JitRegion::name)
      .def_readonly("device_type", &fxmlir::Module::JitRegion::deviceType,
                    "The device type of its tensors: 'cpu' or 'cuda'.")
      .def_readonly("text", &fxmlir::Module::JitRegion::text,
                    "The function's text: all an mlir_jit call of it needs.")
      .def("__repr__", [](const fxmlir::Module::JitRegion &r) {
        return "<JitRegion @" + r.name + " on " + r.deviceType + ">";
      });

  py::class_<fxmlir::Module>(m, "Module")
      .def("__str__", [](const fxmlir::Module &m) { return m.str(); })
      .def("print", &fxmlir::Module::str, py::arg("generic") = false,
           py::arg("fx_names") = false,
           "The module's text; with fx_names, values named after their FX "
           "nodes, as dumps print them.")
      .def("verify", &fxmlir::Module::verify)
      .def(
          "run_pipeline",
          [](fxmlir::Module &m, py::handle pipeline, bool snapshots) {
            std::string text =
                textArgument(pipeline, "run_pipeline", "pipeline");
            py::gil_scoped_release release;
            return m.runPipeline(text, snapshots);
          },
          py::arg("pipeline"), py::arg("snapshots") = false,
          "Run a textual pass pipeline (fxmlir-opt syntax) in place with one "
          "PassManager; returns the passes that ran, with their time and, "
          "with snapshots, the module each left.")
      .def(
          "run_stage",
          [](fxmlir::Module &m, const std::string &stage,
             std::vector<std::string> only, std::vector<std::string> add,
             std::vector<std::string> remove,
             std::vector<std::string> regionDeviceTypes,
             std::vector<std::string> widenedProductTypes, bool snapshots) {
            fxmlir::StageChoice choice = stageChoice(
                std::move(only), std::move(add), std::move(remove),
                std::move(regionDeviceTypes), std::move(widenedProductTypes));
            py::gil_scoped_release release;
            return m.runStage(stage, choice, snapshots);
          },
          py::arg("stage"), py::kw_only(),
          py::arg("only") = std::vector<std::string>(),
          py::arg("add") = std::vector<std::string>(),
          py::arg("remove") = std::vector<std::string>(),
          py::arg("region_device_types") = std::vector<std::string>(),
          py::arg("widened_product_dtypes") = std::vector<std::string>(),
          py::arg("snapshots") = false,
          "Run the stage's pipeline in place: its default passes with add and "
          "without remove, or exactly only; JIT regions on "
          "region_device_types (CPU tensors' when empty), CPU products of "
          "widened_product_dtypes as float32 GEMMs. Returns the passes that "
          "ran, as run_pipeline does.")
      .def(
          "explain_stage",
          [](fxmlir::Module &m, const std::string &stage,
             std::vector<std::string> only, std::vector<std::string> add,
             std::vector<std::string> remove,
             std::vector<std::string> regionDeviceTypes,
             std::vector<std::string> widenedProductTypes) {
            fxmlir::StageChoice choice = stageChoice(
                std::move(only), std::move(add), std::move(remove),
                std::move(regionDeviceTypes), std::move(widenedProductTypes));
            py::gil_scoped_release release;
            return m.explainStage(stage, choice);
          },
          py::arg("stage"), py::kw_only(),
          py::arg("only") = std::vector<std::string>(),
          py::arg("add") = std::vector<std::string>(),
          py::arg("remove") = std::vector<std::string>(),
          py::arg("region_device_types") = std::vector<std::string>(),
          py::arg("widened_product_dtypes") = std::vector<std::string>(),
          "explain_fusions of the stage's pipeline chosen as run_stage's; "
          "where it outlines JIT regions, each op left out of them is a site "
          "too (pattern 'JIT region', the reason why).")
      .def(
          "outline_jit_regions",
          [](fxmlir::Module &m, int64_t minOps, bool costModel) {
            py::gil_scoped_release release;
            m.outlineJitRegions(minOps, costModel);
          },
          py::kw_only(), py::arg("min_ops") = 2, py::arg("cost_model") = false,
          "Outline JIT regions of at least min_ops ops (with the round "
          "trip's cost model, or without).")
      .def("jit_regions", &fxmlir::Module::jitRegions,
           "The JIT regions (private functions) in module order: name, "
           "device type, text.")
      .def(
          "explain_fusions",
          [](fxmlir::Module &m, py::handle pipeline) {
            std::string text =
                textArgument(pipeline, "explain_fusions", "pipeline");
            py::gil_scoped_release release;
            return m.explainFusions(text);
          },
          py::arg("pipeline"),
          "Run a pipeline in place like run_pipeline; returns the sites its "
          "fusion passes left unfused, each with the pattern that came "
          "closest and the check it failed.")
      .def("to_json", &fxmlir::Module::toJson)
      .def("op_counts", &fxmlir::Module::opCounts)
      .def("clone", &fxmlir::Module::clone)
      .def("inline_jit_region", &fxmlir::Module::inlineJitRegion,
           py::arg("name"),
           "Puts the JIT region's ops back in place of its calls.");

  py::class_<fxmlir::Context>(m, "Context")
      .def(py::init<>())
      .def(
          "is_registered_op",
          [](const fxmlir::Context &context, py::handle name) {
            return context.isRegisteredOp(
                textArgument(name, "is_registered_op", "name"));
          },
          py::arg("name"), "Whether an op of this name is registered.")
      .def("dialect_ops", &fxmlir::Context::dialectOps,
           "Names of all ops of the fxmlir dialect.")
      .def(
          "parse",
          [](fxmlir::Context &context, py::handle text, py::handle name) {
            std::string source = textArgument(text, "parse", "text");
            std::string bufferName = textArgument(name, "parse", "name");
            py::gil_scoped_release release;
            return fxmlir::Module::parse(context, source, bufferName);
          },
          py::arg("text"), py::arg("name") = "<string>",
          "Parse and verify a module; raises Error with located diagnostics.")
      .def(
          "import_graph",
          [](fxmlir::Context &context, py::handle json, py::handle name) {
            std::string graph = textArgument(json, "import_graph", "json");
            std::string graphName = textArgument(name, "import_graph", "name");
            py::gil_scoped_release release;
            return fxmlir::Module::fromJson(context, graph, graphName);
          },
          py::arg("json"), py::arg("name") = "<graph>",
          "Build and verify the module of a JSON graph (Module.to_json's "
          "form); raises Error naming the FX node of a bad op.");
}
