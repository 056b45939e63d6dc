//===- FxmlirDialect.cpp - dialect registration and attributes -----------===//

#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace fxmlir;

#include "fxmlir/Dialect/FxmlirDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fxmlir/Dialect/FxmlirAttrs.cpp.inc"

void FxmlirDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fxmlir/Dialect/FxmlirAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "fxmlir/Dialect/FxmlirOps.cpp.inc"
      >();
  // The ATen ops, registered shard by shard (AtenOps.cpp).
  registerFxmlirDialectOperations(this);
  registerFusedOps();
}

Operation *FxmlirDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  if (isa<NoneAttr>(value) && isa<NoneType>(type))
    return NoneOp::create(builder, loc, type);
  return nullptr;
}

//===----------------------------------------------------------------------===//
// DeviceAttr
//===----------------------------------------------------------------------===//

// Device types torch can place graph tensors on; the index, if any, follows
// a colon ("cuda:1").
static constexpr llvm::StringLiteral kDeviceTypes[] = {
    "cpu", "cuda", "meta", "xpu", "mps", "hpu", "privateuseone"};

LogicalResult DeviceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef name) {
  auto [type, index] = name.split(':');
  if (!llvm::is_contained(kDeviceTypes, type))
    return emitError() << "unknown device type '" << type << "' in '" << name
                       << "'";
  unsigned parsed;
  if (name.contains(':') && index.getAsInteger(10, parsed))
    return emitError() << "bad device index '" << index << "' in '" << name
                       << "'";
  return success();
}

StringRef DeviceAttr::getType() const { return getName().split(':').first; }

LogicalResult DeviceAttr::verifyEncoding(
    ArrayRef<int64_t> /*shape*/, Type /*elementType*/,
    function_ref<InFlightDiagnostic()> /*emitError*/) const {
  // Any shape and element type can live on any device.
  return success();
}

DeviceAttr fxmlir::getDevice(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<DeviceAttr>(tensor.getEncoding())
                : DeviceAttr();
}

bool fxmlir::isPlainCopy(UnderscoreToCopyOp copy, bool orContiguous) {
  DeviceAttr device = getDevice(copy.getSelf().getType());
  if (copy.getDevice() && *copy.getDevice() != device)
    return false;
  if (copy.getLayout() && *copy.getLayout() != "strided")
    return false;
  if (copy.getPinMemory() && *copy.getPinMemory())
    return false;
  std::optional<StringRef> format = copy.getMemoryFormat();
  return !format || *format == "preserve_format" ||
         (orContiguous && *format == "contiguous_format");
}

bool fxmlir::isFloatCast(UnderscoreToCopyOp copy) {
  Type source = getElementTypeOrSelf(copy.getSelf().getType());
  std::optional<Type> dtype = copy.getDtype();
  return isPlainCopy(copy) && dtype && isa<FloatType>(source) &&
         isa<FloatType>(*dtype) && *dtype != source;
}
