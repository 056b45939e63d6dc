//===- WidenCpuProducts.cpp - 16-bit CPU products as float32 GEMMs --------===//
//
// Where ATen has no fast GEMM for a 16-bit float type (x86 without AVX-512:
// no oneDNN kernel, a scalar fallback ~50x slower than float32's), a
// product of CPU tensors of that type runs as a float32 GEMM:
//   mm(a, b) -> to(mm(to(a, f32), to(b, f32)), bf16)
// and alike for bmm and addmm. A 16-bit GEMM sums exact products in
// float32 and rounds once, and so does this; only the order of the sums
// may differ. Which types to widen is the machine's, given by the round
// trip (python/fxmlir/cpu_products.py).
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace fxmlir {
#define GEN_PASS_DEF_WIDENCPUPRODUCTS
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// The element type `name` ("bf16", "f16") stands for, or null.
Type elementType(MLIRContext *context, llvm::StringRef name) {
  if (name == "bf16")
    return BFloat16Type::get(context);
  if (name == "f16")
    return Float16Type::get(context);
  return {};
}

/// A location for an op the pass creates next to the op at `loc`: fused,
/// so that the exporter makes a node of its own rather than taking the
/// original's (whose values have the 16-bit type).
Location widenedLoc(Location loc) {
  MLIRContext *context = loc.getContext();
  return FusedLoc::get(context, {loc},
                       StringAttr::get(context, "fxmlir-widen-cpu-products"));
}

/// `type` with element type `element`.
RankedTensorType withElement(Type type, Type element) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(), element,
                               tensor.getEncoding());
}

struct WidenCpuProductsPass
    : public impl::WidenCpuProductsBase<WidenCpuProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    llvm::SmallVector<Type> narrow;
    for (const std::string &name : dtypes) {
      Type type = elementType(context, name);
      if (!type) {
        getOperation()->emitError()
            << "fxmlir-widen-cpu-products: unknown dtype '" << name
            << "'; accepted values: bf16, f16";
        return signalPassFailure();
      }
      narrow.push_back(type);
    }
    if (narrow.empty())
      return;
    llvm::SmallVector<Operation *> products;
    getOperation()->walk([&](Operation *op) {
      if (isa<MmOp, BmmOp, AddmmOp>(op) && isWidened(op, narrow))
        products.push_back(op);
    });
    Type f32 = Float32Type::get(context);
    OpBuilder builder(context);
    // Each value's float32 cast, made once a block, just before the first
    // product that reads it: the copy lives from there to its last product
    // (a saved activation's, cast at the backward graph's start, would live
    // through the whole graph beside its 16-bit self).
    llvm::DenseMap<std::pair<Value, Block *>, Value> wide;
    for (Operation *op : products) {
      builder.setInsertionPoint(op);
      llvm::SmallVector<Value> operands =
          llvm::map_to_vector(op->getOperands(), [&](Value value) {
            Value &cast = wide[{value, op->getBlock()}];
            if (!cast)
              cast = castTo(builder, widenedLoc(value.getLoc()), value, f32);
            return cast;
          });
      Type narrowType = op->getResult(0).getType();
      Location loc = widenedLoc(op->getLoc());
      OperationState state(loc, op->getName(), operands,
                           {withElement(narrowType, f32)}, op->getAttrs());
      Operation *wideOp = builder.create(state);
      Value result =
          castTo(builder, loc, wideOp->getResult(0),
                 cast<RankedTensorType>(narrowType).getElementType());
      op->getResult(0).replaceAllUsesWith(result);
      op->erase();
    }
  }

private:
  /// Whether `op`'s operands and result are CPU tensors of one of the
  /// `narrow` element types.
  static bool isWidened(Operation *op, llvm::ArrayRef<Type> narrow) {
    Type element = getElementTypeOrSelf(op->getResult(0).getType());
    if (!llvm::is_contained(narrow, element))
      return false;
    auto onCpu = [&](Value value) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (!type || type.getElementType() != element)
        return false;
      DeviceAttr device = getDevice(type);
      return device && device.getType() == "cpu";
    };
    return onCpu(op->getResult(0)) && llvm::all_of(op->getOperands(), onCpu);
  }

  /// `to(value, element)`: aten._to_copy keeping its device and layout.
  static Value castTo(OpBuilder &builder, Location loc, Value value,
                      Type element) {
    return UnderscoreToCopyOp::create(
        builder, loc, withElement(value.getType(), element), value,
        TypeAttr::get(element), /*layout=*/nullptr, /*device=*/nullptr,
        /*pin_memory=*/nullptr, builder.getBoolAttr(false),
        /*memory_format=*/nullptr);
  }
};
} // namespace
} // namespace fxmlir
