//===- JsonExport.cpp - a module's functions as a JSON graph --------------===//
//
// The Python exporter rebuilds FX graphs from this form. Values are numbered
// in definition order; every attribute is tagged with its kind so that ints,
// floats and bools survive JSON unchanged ({"int": 1} vs {"float": "1"}).
// Floats travel as strings printed with 17 digits so inf and nan survive too.
//
//===----------------------------------------------------------------------===//

#include "CoreImpl.h"

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using llvm::json::Array;
using llvm::json::Object;

namespace {
class JsonExporter {
public:
  llvm::json::Value exportModule(ModuleOp module);

private:
  Object exportFunction(func::FuncOp func);
  Object exportOp(Operation *op);
  llvm::json::Value exportType(Type type);
  llvm::json::Value exportAttr(Attribute attr);
  int64_t define(Value value) { return ids[value] = ids.size(); }
  int64_t use(Value value);

  llvm::DenseMap<Value, int64_t> ids;
};
} // namespace

static std::string printToString(llvm::function_ref<void(raw_ostream &)> fn) {
  std::string text;
  llvm::raw_string_ostream os(text);
  fn(os);
  return text;
}

static std::string formatDouble(double value) {
  return printToString(
      [&](raw_ostream &os) { os << llvm::format("%.17g", value); });
}

int64_t JsonExporter::use(Value value) {
  auto it = ids.find(value);
  if (it == ids.end())
    throw fxmlir::Error("value used before it is defined: " +
                          printToString([&](raw_ostream &os) { os << value; }));
  return it->second;
}

llvm::json::Value JsonExporter::exportType(Type type) {
  auto printed = printToString([&](raw_ostream &os) { os << type; });
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    Array shape;
    for (int64_t dim : tensor.getShape())
      shape.push_back(ShapedType::isDynamic(dim) ? int64_t(-1) : dim);
    fxmlir::DeviceAttr device = fxmlir::getDevice(tensor);
    return Object{{"kind", "tensor"},
                  {"shape", std::move(shape)},
                  {"dtype", printToString([&](raw_ostream &os) {
                     os << tensor.getElementType();
                   })},
                  {"device", device ? llvm::json::Value(device.getName().str())
                                    : llvm::json::Value(nullptr)}};
  }
  if (isa<NoneType>(type))
    return Object{{"kind", "none"}};
  if (type.isIntOrIndexOrFloat())
    return Object{{"kind", "scalar"}, {"dtype", printed}};
  return Object{{"kind", "other"}, {"text", printed}};
}

llvm::json::Value JsonExporter::exportAttr(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return Object{{"bool", b.getValue()}};
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    // JSON (and torch) integers are 64-bit: a wider value would wrap.
    const APInt &value = i.getValue();
    bool isUnsigned = i.getType().isUnsignedInteger();
    if (isUnsigned ? !value.isIntN(63) : !value.isSignedIntN(64))
      throw fxmlir::Error(
          "integer attribute " +
          printToString([&](raw_ostream &os) { os << attr; }) +
          " does not fit in 64 bits");
    return Object{{"int", value.getSExtValue()}};
  }
  if (auto f = dyn_cast<FloatAttr>(attr))
    return Object{{"float", formatDouble(f.getValueAsDouble())}};
  if (auto s = dyn_cast<StringAttr>(attr))
    return Object{{"str", s.getValue().str()}};
  if (auto t = dyn_cast<TypeAttr>(attr))
    return Object{
        {"dtype", printToString([&](raw_ostream &os) { os << t.getValue(); })}};
  if (auto d = dyn_cast<fxmlir::DeviceAttr>(attr))
    return Object{{"device", d.getName().str()}};
  if (auto r = dyn_cast<fxmlir::OperandRefAttr>(attr))
    return Object{{"operand", r.getIndex()}};
  if (isa<fxmlir::NoneAttr>(attr))
    return Object{{"none", nullptr}};
  if (auto s = dyn_cast<FlatSymbolRefAttr>(attr))
    return Object{{"symbol", s.getValue().str()}};
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return Object{{"ints", Array(a.asArrayRef())}};
  if (auto a = dyn_cast<DenseI32ArrayAttr>(attr))
    return Object{{"i32s", Array(a.asArrayRef())}};
  if (auto a = dyn_cast<DenseBoolArrayAttr>(attr))
    return Object{{"bools", Array(a.asArrayRef())}};
  if (auto a = dyn_cast<DenseF64ArrayAttr>(attr)) {
    Array values;
    for (double v : a.asArrayRef())
      values.push_back(formatDouble(v));
    return Object{{"floats", std::move(values)}};
  }
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    Array values;
    for (Attribute element : a)
      values.push_back(exportAttr(element));
    return Object{{"list", std::move(values)}};
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    Object values;
    for (NamedAttribute entry : d)
      values[entry.getName().str()] = exportAttr(entry.getValue());
    return Object{{"dict", std::move(values)}};
  }
  return Object{
      {"unsupported", printToString([&](raw_ostream &os) { os << attr; })}};
}

Object JsonExporter::exportOp(Operation *op) {
  if (op->getNumRegions() != 0)
    throw fxmlir::Error("cannot export op with regions: " +
                          op->getName().getStringRef().str());
  Array operands, results;
  for (Value operand : op->getOperands())
    operands.push_back(use(operand));
  for (Value result : op->getResults())
    results.push_back(
        Object{{"id", define(result)}, {"type", exportType(result.getType())}});
  Object attrs;
  for (NamedAttribute attr : op->getAttrDictionary())
    attrs[attr.getName().str()] = exportAttr(attr.getValue());
  Object exported{{"name", op->getName().getStringRef().str()},
                  {"operands", std::move(operands)},
                  {"results", std::move(results)},
                  {"attributes", std::move(attrs)}};
  // The importer names each op's location after its FX node; keeping the
  // name keeps the exported graph readable and its nodes traceable.
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    exported["loc"] = name.getName().str();
  // A rewrite's op carries the locations of the ops it replaced.
  if (auto fused = dyn_cast<FusedLoc>(op->getLoc())) {
    Array names;
    for (Location part : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(part))
        names.push_back(name.getName().str());
    exported["fused_from"] = std::move(names);
  }
  return exported;
}

Object JsonExporter::exportFunction(func::FuncOp func) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    throw fxmlir::Error("function @" + func.getSymName().str() +
                          " must have exactly one block");
  Array arguments, ops, returns;
  for (BlockArgument arg : func.getArguments())
    arguments.push_back(
        Object{{"id", define(arg)}, {"type", exportType(arg.getType())}});
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value value : ret.getOperands())
        returns.push_back(use(value));
      continue;
    }
    ops.push_back(exportOp(&op));
  }
  return Object{{"name", func.getSymName().str()},
                {"arguments", std::move(arguments)},
                {"ops", std::move(ops)},
                {"returns", std::move(returns)}};
}

llvm::json::Value JsonExporter::exportModule(ModuleOp module) {
  Array functions;
  for (auto func : module.getOps<func::FuncOp>())
    functions.push_back(exportFunction(func));
  return Object{{"functions", std::move(functions)}};
}

namespace fxmlir {
std::string moduleToJson(ModuleOp module) {
  return printToString(
      [&](raw_ostream &os) { os << JsonExporter().exportModule(module); });
}
} // namespace fxmlir
