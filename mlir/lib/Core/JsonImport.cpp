//===- JsonImport.cpp - a module from its JSON graph ----------------------===//
//
// The inverse of JsonExport.cpp, in the same form: the Python importer hands
// the core an FX graph as tagged JSON, and only the core spells MLIR. Ops
// are built generically (name, operands, attributes, result types) and the
// module is verified at the end, so a malformed graph is an Error naming
// the FX node (each op's location is its node's name), never a crash.
//
//===----------------------------------------------------------------------===//

#include "CoreImpl.h"
#include "JsonReader.h"

#include "../Support/Diagnostics.h"
#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cstdlib>

using namespace mlir;
using fxmlir::json::Array;
using JsonValue = fxmlir::json::Value;

namespace {
class JsonImporter {
public:
  explicit JsonImporter(MLIRContext *context)
      : context(context), builder(context) {}

  OwningOpRef<ModuleOp> importModule(const JsonValue &graph);

private:
  void importFunction(ModuleOp module, const JsonValue &function);
  void importOp(const JsonValue &op);
  Type importType(const JsonValue &type);
  Type elementType(llvm::StringRef name);
  Attribute importAttr(const JsonValue &attr);
  Value use(const JsonValue &id);
  Location nameLoc(const JsonValue &object);

  MLIRContext *context;
  OpBuilder builder;
  llvm::DenseMap<int64_t, Value> values;
  llvm::StringMap<Type> elementTypes;
};
} // namespace

[[noreturn]] static void fail(const llvm::Twine &message) {
  throw fxmlir::Error(message.str());
}

static const JsonValue &asObject(const JsonValue &value,
                              llvm::StringRef what) {
  if (!value.getAsObject())
    fail(what + " is not a JSON object");
  return value;
}

static const JsonValue &field(const JsonValue &object,
                                      llvm::StringRef key) {
  const JsonValue *value = object.get(key);
  if (!value)
    fail("missing field '" + key + "'");
  return *value;
}

static const Array &arrayField(const JsonValue &object, llvm::StringRef key) {
  const Array *array = object.getArray(key);
  if (!array)
    fail("missing list '" + key + "'");
  return *array;
}

static llvm::StringRef stringField(const JsonValue &object, llvm::StringRef key) {
  std::optional<llvm::StringRef> text = object.getString(key);
  if (!text)
    fail("missing string '" + key + "'");
  return *text;
}

static int64_t integer(const JsonValue &value, llvm::StringRef what) {
  std::optional<int64_t> number = value.getAsInteger();
  if (!number)
    fail(what + " is not an integer");
  return *number;
}

/// JsonExport's floats: "%.17g" text, "nan" and "inf" included.
static double parseDouble(const JsonValue &value) {
  std::optional<llvm::StringRef> text = value.getAsString();
  if (!text)
    fail("a float is not given as its text");
  std::string copy = text->str();
  char *end = nullptr;
  double result = std::strtod(copy.c_str(), &end);
  if (copy.empty() || *end != '\0')
    fail("'" + copy + "' is not a float");
  return result;
}

Location JsonImporter::nameLoc(const JsonValue &object) {
  if (std::optional<llvm::StringRef> name = object.getString("loc"))
    return NameLoc::get(StringAttr::get(context, *name));
  return UnknownLoc::get(context);
}

Value JsonImporter::use(const JsonValue &id) {
  auto it = values.find(integer(id, "an operand"));
  if (it == values.end())
    fail("value " + llvm::Twine(*id.getAsInteger()) +
         " is used before it is defined");
  return it->second;
}

Type JsonImporter::importType(const JsonValue &value) {
  const JsonValue &type = asObject(value, "a type");
  llvm::StringRef kind = stringField(type, "kind");
  if (kind == "none")
    return NoneType::get(context);
  if (kind == "scalar")
    return elementType(stringField(type, "dtype"));
  if (kind != "tensor")
    fail("unknown type kind '" + kind + "'");
  SmallVector<int64_t> shape;
  for (const JsonValue &dim : arrayField(type, "shape")) {
    int64_t size = integer(dim, "a dim");
    shape.push_back(size < 0 ? ShapedType::kDynamic : size);
  }
  std::optional<llvm::StringRef> device = type.getString("device");
  Attribute encoding;
  if (device)
    encoding = fxmlir::DeviceAttr::get(context, *device);
  return RankedTensorType::get(shape, elementType(stringField(type, "dtype")),
                               encoding);
}

Type JsonImporter::elementType(llvm::StringRef name) {
  // Parsing a type sets up a parser: once per spelling.
  Type &parsed = elementTypes[name];
  if (!parsed) {
    // A bad spelling is this importer's error, not the parser's message.
    ScopedDiagnosticHandler quiet(context,
                                  [](Diagnostic &) { return success(); });
    parsed = parseType(name, context, nullptr, /*isKnownNullTerminated=*/false);
  }
  if (!parsed)
    fail("unknown element type '" + name + "'");
  return parsed;
}

Attribute JsonImporter::importAttr(const JsonValue &value) {
  const JsonValue &attr = asObject(value, "an attribute");
  if (attr.getAsObject()->size() != 1)
    fail("an attribute has one tag, e.g. {\"int\": 1}");
  llvm::StringRef tag = attr.getAsObject()->front().key;
  const JsonValue &content = attr.getAsObject()->front().value;
  auto list = [&]() -> const Array & {
    const Array *array = content.getAsArray();
    if (!array)
      fail("attribute '" + tag + "' needs a list");
    return *array;
  };
  if (tag == "bool") {
    std::optional<bool> b = content.getAsBoolean();
    if (!b)
      fail("attribute 'bool' needs true or false");
    return builder.getBoolAttr(*b);
  }
  if (tag == "int")
    return builder.getI64IntegerAttr(integer(content, "attribute 'int'"));
  if (tag == "float")
    return builder.getF64FloatAttr(parseDouble(content));
  if (tag == "str") {
    std::optional<llvm::StringRef> s = content.getAsString();
    if (!s)
      fail("attribute 'str' needs a string");
    return builder.getStringAttr(*s);
  }
  if (tag == "dtype") {
    std::optional<llvm::StringRef> name = content.getAsString();
    if (!name)
      fail("attribute 'dtype' needs a string");
    return TypeAttr::get(elementType(*name));
  }
  if (tag == "device") {
    std::optional<llvm::StringRef> s = content.getAsString();
    if (!s)
      fail("attribute 'device' needs a string");
    return fxmlir::DeviceAttr::get(context, *s);
  }
  if (tag == "operand")
    return fxmlir::OperandRefAttr::get(context,
                                       integer(content, "attribute 'operand'"));
  if (tag == "none")
    return fxmlir::NoneAttr::get(context);
  if (tag == "symbol") {
    std::optional<llvm::StringRef> s = content.getAsString();
    if (!s)
      fail("attribute 'symbol' needs a string");
    return FlatSymbolRefAttr::get(context, *s);
  }
  if (tag == "ints" || tag == "i32s") {
    SmallVector<int64_t> ints;
    for (const JsonValue &v : list())
      ints.push_back(integer(v, "an element of an int list"));
    if (tag == "ints")
      return builder.getDenseI64ArrayAttr(ints);
    SmallVector<int32_t> narrow(ints.begin(), ints.end());
    return builder.getDenseI32ArrayAttr(narrow);
  }
  if (tag == "bools") {
    SmallVector<bool> bools;
    for (const JsonValue &v : list()) {
      std::optional<bool> b = v.getAsBoolean();
      if (!b)
        fail("attribute 'bools' needs true or false elements");
      bools.push_back(*b);
    }
    return builder.getDenseBoolArrayAttr(bools);
  }
  if (tag == "floats") {
    SmallVector<double> floats;
    for (const JsonValue &v : list())
      floats.push_back(parseDouble(v));
    return builder.getDenseF64ArrayAttr(floats);
  }
  if (tag == "list") {
    SmallVector<Attribute> elements;
    for (const JsonValue &v : list())
      elements.push_back(importAttr(v));
    return builder.getArrayAttr(elements);
  }
  if (tag == "dict") {
    const JsonValue &entries = asObject(content, "attribute 'dict'");
    SmallVector<NamedAttribute> named;
    for (const fxmlir::json::Member &entry : *entries.getAsObject())
      named.push_back(builder.getNamedAttr(entry.key, importAttr(entry.value)));
    return builder.getDictionaryAttr(named);
  }
  fail("unknown attribute tag '" + tag + "'");
}

void JsonImporter::importOp(const JsonValue &op) {
  llvm::StringRef name = stringField(op, "name");
  Location loc = nameLoc(op);
  if (!RegisteredOperationName::lookup(name, context))
    fail("unknown op '" + name + "'");
  OperationState state(loc, name);
  for (const JsonValue &id : arrayField(op, "operands"))
    state.operands.push_back(use(id));
  const Array &results = arrayField(op, "results");
  for (const JsonValue &result : results)
    state.types.push_back(
        importType(field(asObject(result, "a result"), "type")));
  if (const fxmlir::json::Object *attrs = op.getObject("attributes"))
    for (const fxmlir::json::Member &attr : *attrs)
      state.addAttribute(attr.key, importAttr(attr.value));
  Operation *created = builder.create(state);
  for (auto [result, value] : llvm::zip_equal(results, created->getResults()))
    values[integer(field(asObject(result, "a result"), "id"), "a result id")] =
        value;
}

void JsonImporter::importFunction(ModuleOp module, const JsonValue &function) {
  llvm::StringRef name = stringField(function, "name");
  SmallVector<Type> inputs;
  SmallVector<Location> locs;
  const Array &arguments = arrayField(function, "arguments");
  for (const JsonValue &value : arguments) {
    const JsonValue &argument = asObject(value, "an argument");
    inputs.push_back(importType(field(argument, "type")));
    locs.push_back(nameLoc(argument));
  }
  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(builder, UnknownLoc::get(context), name,
                                   builder.getFunctionType(inputs, {}));
  Block *body = func.addEntryBlock();
  for (auto [value, arg, loc] :
       llvm::zip_equal(arguments, body->getArguments(), locs)) {
    arg.setLoc(loc);
    values[integer(field(asObject(value, "an argument"), "id"),
                   "an argument id")] = arg;
  }
  builder.setInsertionPointToEnd(body);
  for (const JsonValue &value : arrayField(function, "ops")) {
    const JsonValue &op = asObject(value, "an op");
    try {
      importOp(op);
    } catch (const fxmlir::Error &error) {
      fail("node '" + op.getString("loc").value_or("?") + "' (" +
           op.getString("name").value_or("?") + "): " + error.what());
    }
  }
  SmallVector<Value> returned;
  for (const JsonValue &id : arrayField(function, "returns"))
    returned.push_back(use(id));
  func::ReturnOp::create(builder, UnknownLoc::get(context), returned);
  func.setFunctionType(
      builder.getFunctionType(inputs, ValueRange(returned).getTypes()));
}

OwningOpRef<ModuleOp> JsonImporter::importModule(const JsonValue &graph) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(context));
  for (const JsonValue &function :
       arrayField(asObject(graph, "the graph"), "functions"))
    importFunction(*module, asObject(function, "a function"));
  return module;
}

namespace fxmlir {
Module Module::fromJson(Context &context, const std::string &json,
                        const std::string &graphName) {
  std::string invalid;
  std::optional<json::Document> graph = json::Document::parse(json, invalid);
  if (!graph)
    throw Error("cannot import " + graphName + ": " + invalid);
  MLIRContext *ctx = context.impl->context.get();
  JsonImporter importer(ctx);
  OwningOpRef<ModuleOp> module;
  try {
    module = importer.importModule(graph->root());
  } catch (const Error &error) {
    throw Error("cannot import " + graphName + ": " + error.what());
  }
  DiagnosticCollector diagnostics(ctx);
  if (failed(mlir::verify(*module)))
    diagnostics.fail("cannot import " + graphName + ": it does not verify");
  auto impl = std::make_unique<Impl>();
  impl->context = context.impl;
  impl->module = std::move(module);
  return Module(std::move(impl));
}
} // namespace fxmlir
