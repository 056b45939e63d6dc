//===- module.cpp - fxmlir._C: Python bindings of the core API ------------===//
//
// A thin layer over fxmlir/Core/Core.h: no MLIR headers, so it builds against
// a prebuilt core with whatever Python and compiler the machine has.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Core/Core.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  m.doc() = "fxmlir core: parse, verify, transform and export fxmlir modules";

  py::register_exception<fxmlir::Error>(m, "Error", PyExc_ValueError);

  py::class_<fxmlir::PassDescription>(m, "PassDescription")
      .def_readonly("name", &fxmlir::PassDescription::name)
      .def_readonly("summary", &fxmlir::PassDescription::summary)
      .def_readonly("in_default_pipeline",
                    &fxmlir::PassDescription::inDefaultPipeline)
      .def("__repr__", [](const fxmlir::PassDescription &p) {
        return "<pass " + p.name + ": " + p.summary + ">";
      });
  m.def("pipeline_passes", &fxmlir::pipelinePasses,
        "The passes a round trip may run, in pipeline order.");

  py::class_<fxmlir::Context>(m, "Context")
      .def(py::init<>())
      .def("is_registered_op", &fxmlir::Context::isRegisteredOp,
           py::arg("name"), "Whether an op of this name is registered.")
      .def("dialect_ops", &fxmlir::Context::dialectOps,
           "Names of all ops of the fxmlir dialect.")
      .def(
          "parse",
          [](fxmlir::Context &context, const std::string &text,
             const std::string &name) {
            py::gil_scoped_release release;
            return fxmlir::Module::parse(context, text, name);
          },
          py::arg("text"), py::arg("name") = "<string>",
          // A module must not outlive its context.
          py::keep_alive<0, 1>(),
          "Parse and verify a module; raises Error with located diagnostics.");

  py::class_<fxmlir::Module>(m, "Module")
      .def("__str__", [](const fxmlir::Module &m) { return m.str(); })
      .def("print", &fxmlir::Module::str, py::arg("generic") = false)
      .def("verify", &fxmlir::Module::verify)
      .def(
          "run_pipeline",
          [](fxmlir::Module &m, const std::string &pipeline) {
            py::gil_scoped_release release;
            m.runPipeline(pipeline);
          },
          py::arg("pipeline"),
          "Run a textual pass pipeline (fxmlir-opt syntax) in place.")
      .def("to_json", &fxmlir::Module::toJson)
      .def("to_dot", &fxmlir::Module::toDot)
      .def("op_counts", &fxmlir::Module::opCounts)
      .def("clone", &fxmlir::Module::clone, py::keep_alive<0, 1>());
}
