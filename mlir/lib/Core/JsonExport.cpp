//===- JsonExport.cpp - a module's functions as a JSON graph --------------===//
//
// The Python exporter rebuilds FX graphs from this form. Values are numbered
// in definition order; every attribute is tagged with its kind so that ints,
// floats and bools survive JSON unchanged ({"int": 1} vs {"float": "1"}).
// Floats travel as strings printed with 17 digits so inf and nan survive too.
// The text is written as the module is walked (llvm::json::OStream): a tree
// of llvm::json::Objects, a hash map of 64 buckets each, cost three times
// the walk. Keys come in sorted order, as such a tree would print them.
//
//===----------------------------------------------------------------------===//

#include "CoreImpl.h"

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <optional>

using namespace mlir;

namespace {
class JsonExporter {
public:
  explicit JsonExporter(llvm::json::OStream &out) : out(out) {}

  void exportModule(ModuleOp module);
  /// The first problem met; the text is complete (and useless) regardless,
  /// so that the stream never unwinds mid-value.
  std::optional<std::string> failure;

private:
  void exportFunction(func::FuncOp func);
  void exportOp(Operation *op);
  void exportType(Type type);
  void exportAttr(Attribute attr);
  void exportValue(Value value) {
    out.object([&] {
      out.attribute("id", define(value));
      out.attributeBegin("type");
      exportType(value.getType());
      out.attributeEnd();
    });
  }
  int64_t define(Value value) { return ids[value] = ids.size(); }
  int64_t use(Value value);
  void fail(std::string message) {
    if (!failure)
      failure = std::move(message);
  }

  llvm::json::OStream &out;
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
  if (it != ids.end())
    return it->second;
  fail("value used before it is defined: " +
       printToString([&](raw_ostream &os) { os << value; }));
  return -1;
}

void JsonExporter::exportType(Type type) {
  auto printed = [&] { return printToString([&](raw_ostream &os) { os << type; }); };
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    fxmlir::DeviceAttr device = fxmlir::getDevice(tensor);
    out.object([&] {
      if (device)
        out.attribute("device", device.getName());
      else
        out.attribute("device", nullptr);
      out.attribute("dtype", printToString([&](raw_ostream &os) {
                      os << tensor.getElementType();
                    }));
      out.attribute("kind", "tensor");
      out.attributeArray("shape", [&] {
        for (int64_t dim : tensor.getShape())
          out.value(ShapedType::isDynamic(dim) ? int64_t(-1) : dim);
      });
    });
    return;
  }
  if (isa<NoneType>(type))
    return out.object([&] { out.attribute("kind", "none"); });
  if (type.isIntOrIndexOrFloat())
    return out.object([&] {
      out.attribute("dtype", printed());
      out.attribute("kind", "scalar");
    });
  out.object([&] {
    out.attribute("kind", "other");
    out.attribute("text", printed());
  });
}

void JsonExporter::exportAttr(Attribute attr) {
  auto tagged = [&](llvm::StringRef tag, llvm::json::Value value) {
    out.object([&] { out.attribute(tag, std::move(value)); });
  };
  auto taggedArray = [&](llvm::StringRef tag, llvm::function_ref<void()> items) {
    out.object([&] { out.attributeArray(tag, items); });
  };
  if (auto b = dyn_cast<BoolAttr>(attr))
    return tagged("bool", b.getValue());
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    // JSON (and torch) integers are 64-bit: a wider value would wrap.
    const APInt &value = i.getValue();
    bool isUnsigned = i.getType().isUnsignedInteger();
    if (isUnsigned ? !value.isIntN(63) : !value.isSignedIntN(64))
      fail("integer attribute " +
           printToString([&](raw_ostream &os) { os << attr; }) +
           " does not fit in 64 bits");
    return tagged("int", value.getSExtValue());
  }
  if (auto f = dyn_cast<FloatAttr>(attr))
    return tagged("float", formatDouble(f.getValueAsDouble()));
  if (auto s = dyn_cast<StringAttr>(attr))
    return tagged("str", s.getValue());
  if (auto t = dyn_cast<TypeAttr>(attr))
    return tagged("dtype",
                  printToString([&](raw_ostream &os) { os << t.getValue(); }));
  if (auto d = dyn_cast<fxmlir::DeviceAttr>(attr))
    return tagged("device", d.getName());
  if (auto r = dyn_cast<fxmlir::OperandRefAttr>(attr))
    return tagged("operand", r.getIndex());
  if (isa<fxmlir::NoneAttr>(attr))
    return tagged("none", nullptr);
  if (auto s = dyn_cast<FlatSymbolRefAttr>(attr))
    return tagged("symbol", s.getValue());
  auto values = [&](llvm::StringRef tag, auto elements) {
    taggedArray(tag, [&] {
      for (auto v : elements)
        out.value(v);
    });
  };
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return values("ints", a.asArrayRef());
  if (auto a = dyn_cast<DenseI32ArrayAttr>(attr))
    return values("i32s", a.asArrayRef());
  if (auto a = dyn_cast<DenseBoolArrayAttr>(attr))
    return values("bools", a.asArrayRef());
  if (auto a = dyn_cast<DenseF64ArrayAttr>(attr))
    return taggedArray("floats", [&] {
      for (double v : a.asArrayRef())
        out.value(formatDouble(v));
    });
  if (auto a = dyn_cast<ArrayAttr>(attr))
    return taggedArray("list", [&] {
      for (Attribute element : a)
        exportAttr(element);
    });
  if (auto d = dyn_cast<DictionaryAttr>(attr))
    return out.object([&] {
      out.attributeObject("dict", [&] {
        // A DictionaryAttr keeps its entries sorted by name.
        for (NamedAttribute entry : d) {
          out.attributeBegin(entry.getName().getValue());
          exportAttr(entry.getValue());
          out.attributeEnd();
        }
      });
    });
  tagged("unsupported", printToString([&](raw_ostream &os) { os << attr; }));
}

void JsonExporter::exportOp(Operation *op) {
  if (op->getNumRegions() != 0)
    fail("cannot export op with regions: " +
         op->getName().getStringRef().str());
  out.object([&] {
    // An op's attribute dictionary is sorted by name already.
    out.attributeObject("attributes", [&] {
      for (NamedAttribute attr : op->getAttrDictionary()) {
        out.attributeBegin(attr.getName().getValue());
        exportAttr(attr.getValue());
        out.attributeEnd();
      }
    });
    // A rewrite's op carries the locations of the ops it replaced.
    if (auto fused = dyn_cast<FusedLoc>(op->getLoc()))
      out.attributeArray("fused_from", [&] {
        for (Location part : fused.getLocations())
          if (auto name = dyn_cast<NameLoc>(part))
            out.value(name.getName().getValue());
      });
    // The importer names each op's location after its FX node; keeping the
    // name keeps the exported graph readable and its nodes traceable.
    if (auto name = dyn_cast<NameLoc>(op->getLoc()))
      out.attribute("loc", name.getName().getValue());
    out.attribute("name", op->getName().getStringRef());
    out.attributeArray("operands", [&] {
      for (Value operand : op->getOperands())
        out.value(use(operand));
    });
    out.attributeArray("results", [&] {
      for (Value result : op->getResults())
        exportValue(result);
    });
  });
}

void JsonExporter::exportFunction(func::FuncOp func) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return fail("function @" + func.getSymName().str() +
                " must have exactly one block");
  out.object([&] {
    out.attributeArray("arguments", [&] {
      for (BlockArgument arg : func.getArguments())
        exportValue(arg);
    });
    out.attribute("name", func.getSymName());
    func::ReturnOp ret;
    out.attributeArray("ops", [&] {
      for (Operation &op : func.getBody().front()) {
        if (auto isReturn = dyn_cast<func::ReturnOp>(op))
          ret = isReturn;
        else
          exportOp(&op);
      }
    });
    out.attributeArray("returns", [&] {
      if (ret)
        for (Value value : ret.getOperands())
          out.value(use(value));
    });
  });
}

void JsonExporter::exportModule(ModuleOp module) {
  out.object([&] {
    out.attributeArray("functions", [&] {
      for (auto func : module.getOps<func::FuncOp>())
        exportFunction(func);
    });
  });
}

namespace fxmlir {
std::string moduleToJson(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::optional<std::string> failure;
  {
    llvm::json::OStream out(os);
    JsonExporter exporter(out);
    exporter.exportModule(module);
    failure = exporter.failure;
  }
  if (failure)
    throw Error(*failure);
  return text;
}
} // namespace fxmlir
