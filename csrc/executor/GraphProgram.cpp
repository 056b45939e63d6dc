//===- GraphProgram.cpp - fxmlir._graph_program: graph bodies in C++ ------===//
//
// A round-tripped graph after autodiff is a straight line of op calls. Run
// as FX's generated Python, each call costs a Python frame's work and the
// binding's argument parsing (0.8 to 1.7 us for a view, a transpose or a
// small product on one AMD EPYC thread), which a small model's step makes
// hundreds of times. A GraphProgram holds the same line as resolved
// operator handles with their constant arguments converted once, and runs
// it through the dispatcher's boxed calls.
//
// Like AOTAutograd's own graphs it takes the boxed list of inputs and
// empties it, and drops each value after its last use, so peak memory is
// what the generated code's `del`s give. Ops are dispatched below autograd
// (the graphs are differentiated already). A failing op raises the op's
// own Python exception with `fx_node` set to the FX node's name.
//
// python/fxmlir/graph_program.py encodes a graph for the constructor.
//
//===----------------------------------------------------------------------===//

#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// An argument of an op call, or a value the graph returns: a value slot,
/// a constant, or a list some of whose items are slots (built per call).
struct Value {
  enum class Kind { Slot, Constant, List };
  Kind kind = Kind::Constant;
  size_t slot = 0;
  c10::IValue constant;
  c10::TypePtr itemType; // List: the list's item type
  std::vector<Value> items;
};

/// Arithmetic on sizes (a dynamic shape's), with Python's semantics.
enum class Arithmetic {
  None,
  Add,
  Sub,
  Mul,
  FloorDiv,
  Mod,
  TrueDiv,
  Neg,
  Max,
  Min
};

/// One FX node: an op call, arithmetic on sizes, or an item of a node's
/// tuple or list result.
struct Node {
  std::string name;
  std::optional<c10::OperatorHandle> op;
  Arithmetic arithmetic = Arithmetic::None; // neither: an item of `source`
  std::vector<Value> arguments;
  size_t returns = 1;
  size_t source = 0;
  int64_t index = 0;
  size_t slot = 0;
  std::vector<size_t> lastUses; // slots dropped after the node
};

[[noreturn]] void badEncoding(const std::string &what) {
  throw py::value_error("GraphProgram: " + what);
}

/// A value with no schema to convert it by (a graph's input, constant or
/// returned constant): a tensor, a Python scalar or None.
c10::IValue untypedValue(py::handle object) {
  PyObject *raw = object.ptr();
  if (THPVariable_Check(raw))
    return THPVariable_Unpack(raw);
  if (raw == Py_None)
    return {};
  if (PyBool_Check(raw))
    return raw == Py_True;
  if (PyLong_Check(raw))
    return object.cast<int64_t>();
  if (PyFloat_Check(raw))
    return PyFloat_AS_DOUBLE(raw);
  throw py::type_error(std::string("GraphProgram: a value of type ") +
                       Py_TYPE(raw)->tp_name +
                       " (accepted: Tensor, int, float, bool, None)");
}

/// The list type inside `type` (`int[]`, `Tensor?[]`, `int[]?`), or null.
c10::TypePtr listItemType(const c10::TypePtr &type) {
  c10::TypePtr unwrapped = type;
  if (auto optional = type->cast<c10::OptionalType>())
    unwrapped = optional->getElementType();
  if (auto list = unwrapped->cast<c10::ListType>())
    return list->getElementType();
  return nullptr;
}

/// A Value from its encoding: ("s", slot), ("c", object), ("l", [items]);
/// constants converted to `type` (null: inferred from the object).
Value decodeValue(py::handle encoded, const c10::TypePtr &type,
                  size_t slotCount) {
  auto tuple = py::reinterpret_borrow<py::tuple>(encoded);
  auto kind = tuple[0].cast<std::string>();
  Value value;
  if (kind == "s") {
    value.kind = Value::Kind::Slot;
    value.slot = tuple[1].cast<size_t>();
    if (value.slot >= slotCount)
      badEncoding("slot " + std::to_string(value.slot) + " out of range");
  } else if (kind == "c") {
    value.constant = type ? torch::jit::toIValue(tuple[1], type)
                          : untypedValue(tuple[1]);
  } else if (kind == "l") {
    value.kind = Value::Kind::List;
    value.itemType = type ? listItemType(type) : nullptr;
    if (type && !value.itemType)
      badEncoding("a list where the op takes " + type->str());
    for (py::handle item : tuple[1].cast<py::list>())
      value.items.push_back(decodeValue(item, value.itemType, slotCount));
  } else {
    badEncoding("unknown value kind '" + kind + "'");
  }
  return value;
}

Arithmetic arithmeticNamed(const std::string &name) {
  static const std::pair<const char *, Arithmetic> names[] = {
      {"add", Arithmetic::Add},           {"sub", Arithmetic::Sub},
      {"mul", Arithmetic::Mul},           {"floordiv", Arithmetic::FloorDiv},
      {"mod", Arithmetic::Mod},           {"truediv", Arithmetic::TrueDiv},
      {"neg", Arithmetic::Neg},           {"max", Arithmetic::Max},
      {"min", Arithmetic::Min}};
  for (const auto &[text, arithmetic] : names)
    if (name == text)
      return arithmetic;
  badEncoding("unknown arithmetic '" + name + "'");
}

/// Python's floor division and modulo of ints (rounding toward -inf).
int64_t floorDiv(int64_t a, int64_t b) {
  TORCH_CHECK_VALUE(b != 0, "integer division or modulo by zero");
  int64_t quotient = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? quotient - 1 : quotient;
}

c10::IValue compute(Arithmetic arithmetic, const c10::IValue &a,
                    const c10::IValue &b) {
  if (arithmetic == Arithmetic::Neg)
    return a.isInt() ? c10::IValue(-a.toInt()) : c10::IValue(-a.toDouble());
  if (a.isInt() && b.isInt() && arithmetic != Arithmetic::TrueDiv) {
    int64_t x = a.toInt(), y = b.toInt();
    switch (arithmetic) {
    case Arithmetic::Add: return x + y;
    case Arithmetic::Sub: return x - y;
    case Arithmetic::Mul: return x * y;
    case Arithmetic::FloorDiv: return floorDiv(x, y);
    case Arithmetic::Mod: return x - floorDiv(x, y) * y;
    case Arithmetic::Max: return std::max(x, y);
    case Arithmetic::Min: return std::min(x, y);
    default: break;
    }
  }
  TORCH_CHECK_TYPE((a.isInt() || a.isDouble()) && (b.isInt() || b.isDouble()),
                   "size arithmetic on ", a.tagKind(), " and ", b.tagKind());
  double x = a.isInt() ? a.toInt() : a.toDouble();
  double y = b.isInt() ? b.toInt() : b.toDouble();
  switch (arithmetic) {
  case Arithmetic::Add: return x + y;
  case Arithmetic::Sub: return x - y;
  case Arithmetic::Mul: return x * y;
  case Arithmetic::TrueDiv:
    TORCH_CHECK_VALUE(y != 0, "division by zero");
    return x / y;
  case Arithmetic::FloorDiv:
    TORCH_CHECK_VALUE(y != 0, "float floor division by zero");
    return std::floor(x / y);
  case Arithmetic::Mod:
    TORCH_CHECK_VALUE(y != 0, "float modulo");
    return x - std::floor(x / y) * y;
  case Arithmetic::Max: return std::max(x, y);
  case Arithmetic::Min: return std::min(x, y);
  default: break;
  }
  TORCH_CHECK(false, "unreachable arithmetic");
}

c10::IValue evaluate(const Value &value, std::vector<c10::IValue> &slots) {
  switch (value.kind) {
  case Value::Kind::Slot:
    return slots[value.slot];
  case Value::Kind::Constant:
    return value.constant;
  case Value::Kind::List: {
    c10::impl::GenericList list(value.itemType);
    list.reserve(value.items.size());
    for (const Value &item : value.items)
      list.push_back(evaluate(item, slots));
    return list;
  }
  }
  return {};
}


class GraphProgram {
public:
  /// `inputs`: the slot of each graph input, or -1 for one the graph does
  /// not use; `constants`: (slot, value) pairs held for the program's life;
  /// `nodes`: ("op", name, qualified op name, overload, [arguments], slot,
  /// [last uses]), ("arith", name, "add" | "sub" | "mul" | "floordiv" |
  /// "mod" | "truediv" | "neg" | "max" | "min", [operands], slot, [last
  /// uses]) or ("item", name, source slot, index, slot, [last uses]),
  /// an argument ("d",) for the schema's default; `output`: the returned
  /// value, or ("t", [values]) / ("L", [values]) for a tuple or list.
  GraphProgram(size_t slotCount, std::vector<int64_t> inputs,
               const py::list &constants, const py::list &nodes,
               const py::tuple &output)
      : slotCount(slotCount), inputs(std::move(inputs)),
        constants(slotCount) {
    for (int64_t slot : this->inputs)
      if (slot >= static_cast<int64_t>(slotCount))
        badEncoding("input slot out of range");
    for (py::handle pair : constants) {
      auto tuple = pair.cast<py::tuple>();
      size_t slot = tuple[0].cast<size_t>();
      if (slot >= slotCount)
        badEncoding("constant slot out of range");
      this->constants[slot] = untypedValue(tuple[1]);
      constantSlots.push_back(slot);
    }
    for (py::handle encoded : nodes)
      this->nodes.push_back(decodeNode(encoded.cast<py::tuple>()));
    auto outputKind = output[0].cast<std::string>();
    outputIsTuple = outputKind == "t";
    outputIsList = outputKind == "L";
    if (outputIsTuple || outputIsList)
      for (py::handle item : output[1].cast<py::list>())
        outputs.push_back(decodeValue(item, nullptr, slotCount));
    else
      outputs.push_back(decodeValue(output, nullptr, slotCount));
  }

  py::object run(const py::list &arguments) {
    if (arguments.size() != inputs.size())
      throw py::type_error("GraphProgram: " + std::to_string(inputs.size()) +
                           " inputs expected, " +
                           std::to_string(arguments.size()) + " given");
    std::vector<c10::IValue> slots(slotCount);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i] >= 0)
        slots[inputs[i]] = untypedValue(arguments[i]);
    // The boxed convention: the caller's list no longer holds the inputs.
    if (PyList_SetSlice(arguments.ptr(), 0, PyList_GET_SIZE(arguments.ptr()),
                        nullptr) != 0)
      throw py::error_already_set();
    for (size_t slot : constantSlots)
      slots[slot] = constants[slot];

    size_t failed = nodes.size();
    std::exception_ptr failure;
    {
      py::gil_scoped_release noGil;
      at::AutoDispatchBelowAutograd belowAutograd;
      c10::Stack stack;
      for (size_t i = 0; i < nodes.size(); ++i) {
        try {
          runNode(nodes[i], slots, stack);
        } catch (...) {
          failed = i;
          failure = std::current_exception();
          break;
        }
      }
    }
    if (failure)
      raise(nodes[failed].name, failure);

    if (outputIsList) {
      py::list result(outputs.size());
      for (size_t i = 0; i < outputs.size(); ++i)
        result[i] = torch::jit::toPyObject(evaluate(outputs[i], slots));
      return result;
    }
    if (!outputIsTuple)
      return torch::jit::toPyObject(evaluate(outputs.front(), slots));
    py::tuple result(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i)
      result[i] = torch::jit::toPyObject(evaluate(outputs[i], slots));
    return result;
  }

  size_t nodeCount() const { return nodes.size(); }

private:
  Node decodeNode(const py::tuple &encoded) {
    Node node;
    auto kind = encoded[0].cast<std::string>();
    node.name = encoded[1].cast<std::string>();
    if (kind == "op") {
      auto name = encoded[2].cast<std::string>();
      auto overload = encoded[3].cast<std::string>();
      auto handle = c10::Dispatcher::singleton().findSchema({name, overload});
      if (!handle)
        badEncoding("node '" + node.name + "': no operator " + name +
                    (overload.empty() ? "" : "." + overload));
      // As torch.ops calls from Python convert them: a number where a
      // tensor goes is a wrapped-number tensor.
      torch::jit::ToIValueAllowNumbersAsTensors numbersAsTensors(true);
      const c10::FunctionSchema &schema = handle->schema();
      auto arguments = encoded[4].cast<py::list>();
      if (arguments.size() != schema.arguments().size())
        badEncoding("node '" + node.name + "': " + schema.name() + " takes " +
                    std::to_string(schema.arguments().size()) +
                    " arguments, " + std::to_string(arguments.size()) +
                    " given");
      for (size_t i = 0; i < arguments.size(); ++i) {
        const c10::Argument &argument = schema.arguments()[i];
        auto tuple = arguments[i].cast<py::tuple>();
        if (tuple[0].cast<std::string>() == "d") {
          if (!argument.default_value())
            badEncoding("node '" + node.name + "': argument '" +
                        argument.name() + "' has no default");
          Value value;
          value.constant = *argument.default_value();
          node.arguments.push_back(std::move(value));
        } else {
          node.arguments.push_back(
              decodeValue(tuple, argument.type(), slotCount));
        }
      }
      node.returns = schema.returns().size();
      node.op = *handle;
      node.slot = encoded[5].cast<size_t>();
    } else if (kind == "arith") {
      node.arithmetic = arithmeticNamed(encoded[2].cast<std::string>());
      for (py::handle argument : encoded[3].cast<py::list>())
        node.arguments.push_back(decodeValue(argument, nullptr, slotCount));
      size_t arity = node.arithmetic == Arithmetic::Neg ? 1 : 2;
      if (node.arguments.size() != arity)
        badEncoding("node '" + node.name + "': " + std::to_string(arity) +
                    " operands expected");
      node.slot = encoded[4].cast<size_t>();
    } else if (kind == "item") {
      node.source = encoded[2].cast<size_t>();
      node.index = encoded[3].cast<int64_t>();
      node.slot = encoded[4].cast<size_t>();
      if (node.source >= slotCount)
        badEncoding("node '" + node.name + "': source slot out of range");
    } else {
      badEncoding("unknown node kind '" + kind + "'");
    }
    if (node.slot >= slotCount)
      badEncoding("node '" + node.name + "': slot out of range");
    for (py::handle slot : encoded[encoded.size() - 1].cast<py::list>()) {
      node.lastUses.push_back(slot.cast<size_t>());
      if (node.lastUses.back() >= slotCount)
        badEncoding("node '" + node.name + "': dropped slot out of range");
    }
    return node;
  }

  static void runNode(const Node &node, std::vector<c10::IValue> &slots,
                      c10::Stack &stack) {
    if (node.op) {
      stack.clear();
      stack.reserve(node.arguments.size());
      for (const Value &argument : node.arguments)
        stack.push_back(evaluate(argument, slots));
      node.op->callBoxed(stack);
      if (node.returns == 1)
        slots[node.slot] = std::move(stack.front());
      else if (node.returns > 1)
        slots[node.slot] = c10::ivalue::Tuple::create(std::move(stack));
      stack.clear();
    } else if (node.arithmetic != Arithmetic::None) {
      c10::IValue a = evaluate(node.arguments.front(), slots);
      c10::IValue b = evaluate(node.arguments.back(), slots);
      slots[node.slot] = compute(node.arithmetic, a, b);
    } else {
      const c10::IValue &source = slots[node.source];
      TORCH_CHECK(source.isTuple() || source.isList(), "an item of a ",
                  source.tagKind(), " value");
      c10::ArrayRef<c10::IValue> items = source.isTuple()
                                             ? source.toTupleRef().elements()
                                             : source.toListRef();
      // Python's indexing: -1 is the last item.
      int64_t size = static_cast<int64_t>(items.size());
      int64_t index = node.index < 0 ? node.index + size : node.index;
      TORCH_CHECK_INDEX(index >= 0 && index < size, "item ", node.index,
                        " of ", size);
      slots[node.slot] = items[index];
    }
    for (size_t slot : node.lastUses)
      slots[slot] = c10::IValue();
  }

  /// Raises `failure` as torch's bindings would, with `fx_node` set.
  [[noreturn]] static void raise(const std::string &node,
                                 std::exception_ptr failure) {
    torch::translate_exception_to_python(failure);
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    if (value) {
      py::str name(node);
      // An exception type that takes no attributes keeps its message alone.
      if (PyObject_SetAttrString(value, "fx_node", name.ptr()) != 0)
        PyErr_Clear();
    }
    PyErr_Restore(type, value, traceback);
    throw py::error_already_set();
  }

  size_t slotCount;
  std::vector<int64_t> inputs;
  std::vector<c10::IValue> constants;
  std::vector<size_t> constantSlots;
  std::vector<Node> nodes;
  std::vector<Value> outputs;
  bool outputIsTuple = false;
  bool outputIsList = false;
};

} // namespace

PYBIND11_MODULE(_graph_program, m) {
  m.doc() = "Round-tripped graphs' bodies run as C++ op calls";
  py::class_<GraphProgram>(m, "GraphProgram")
      .def(py::init<size_t, std::vector<int64_t>, const py::list &,
                    const py::list &, const py::tuple &>(),
           py::arg("slots"), py::arg("inputs"), py::arg("constants"),
           py::arg("nodes"), py::arg("output"))
      .def("run", &GraphProgram::run, py::arg("inputs"),
           "Runs the graph on the boxed list of inputs, which it empties.")
      .def_property_readonly("node_count", &GraphProgram::nodeCount);
}
