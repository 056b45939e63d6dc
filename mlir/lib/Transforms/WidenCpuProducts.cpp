//===- WidenCpuProducts.cpp - 16-bit CPU products as float32 GEMMs --------===//
//
// Where ATen has no fast GEMM for a 16-bit float type (x86 without AVX-512:
// no oneDNN kernel, a scalar fallback ~50x slower than float32's), a
// product of CPU tensors of that type runs as a float32 GEMM:
//   mm(a, b) -> to(mm(to(a, f32), to(b, f32)), bf16)
// and alike for bmm and addmm. A 16-bit GEMM sums exact products in
// float32 and rounds once, and so does this; only the order of the sums
// may differ. Flash attention's CPU backward makes its products in the
// 16-bit type too, and is widened the same way: its gradients are then
// rounded once, not after each of its products (closer to a float64
// reference, and 27.4 ms against 6.0 for [2, 8, 128, 64] causal bf16, one
// AMD EPYC thread). Which types to widen is the machine's, given by the
// round trip (python/fxmlir/cpu_products.py).
//
// Where ATen has the 16-bit GEMM (oneDNN's), a small product is widened
// all the same: oneDNN's call costs ~15 us at any size below ~500 000
// multiply-adds, float32's and its casts less (a [32, 64] x [64, 32] bf16
// mm: 15.1 us against 8.1 widened, 2^17 multiply-adds 15.6 against 9.9,
// 2^19 even; one AMD EPYC Zen 4 thread, casts included). A language
// model's step of such products (suites.tiny_llama_model, bf16 autocast)
// went from 1.40x Inductor's time to 0.97x.
//
// An operand that is a view (a weight's transpose, an activation's reshape)
// is widened at its source and viewed again: a cast commutes with a view.
// So the cast meets the op that made the source (autocast's cast of a
// float32 weight, the last op of an elementwise chain) and the outliner
// takes both into one region, and the views of one value (a gradient read
// as itself and transposed) share one cast. A reshape of a permuted value
// is cast as it is: it relies on its source's strides (flash attention's
// gradients, transposed back to [batch, tokens, heads, dim], are
// contiguous), which a region's float32 copy of the source does not keep.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

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

/// The most multiply-adds of a product widened whatever its type's GEMM:
/// a quarter of where widening stops paying on the machine above.
constexpr int64_t kSmallProductMultiplyAdds = int64_t{1} << 17;

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
    llvm::SmallVector<Operation *> widened;
    getOperation()->walk([&](Operation *op) {
      if (isWidenedKind(op) && isWidened(op, narrow))
        widened.push_back(op);
    });
    Type f32 = Float32Type::get(context);
    OpBuilder builder(context);
    // Each value's float32 cast, made once a block, just before the first
    // op that reads it: the copy lives from there to its last reader (a
    // saved activation's, cast at the backward graph's start, would live
    // through the whole graph beside its 16-bit self).
    llvm::DenseMap<std::pair<Value, Block *>, Value> wide;
    // `value`'s float32 copy in `block`: a view's, the view of its source's.
    std::function<Value(Value, Block *)> widen = [&](Value value,
                                                     Block *block) {
      if (Value known = wide.lookup({value, block}))
        return known;
      Value copy;
      Operation *view = value.getDefiningOp();
      if (view && isView(view) && !isReshapeOfPermuted(view)) {
        Value source = widen(view->getOperand(0), block);
        Operation *wideView = builder.clone(*view);
        wideView->setLoc(widenedLoc(view->getLoc()));
        wideView->setOperand(0, source);
        wideView->getResult(0).setType(withElement(value.getType(), f32));
        copy = wideView->getResult(0);
      } else {
        copy = castTo(builder, widenedLoc(value.getLoc()), value, f32);
      }
      wide[{value, block}] = copy;
      return copy;
    };
    for (Operation *op : widened) {
      builder.setInsertionPoint(op);
      Type element = getElementTypeOrSelf(op->getResult(0).getType());
      auto isNarrow = [&](Type type) {
        return getElementTypeOrSelf(type) == element;
      };
      // Operands of other types (attention's float32 log-sum-exp) stay.
      llvm::SmallVector<Value> operands =
          llvm::map_to_vector(op->getOperands(), [&](Value value) {
            return isNarrow(value.getType()) ? widen(value, op->getBlock())
                                             : value;
          });
      llvm::SmallVector<Type> types =
          llvm::map_to_vector(op->getResultTypes(), [&](Type type) {
            return isNarrow(type) ? withElement(type, f32) : type;
          });
      Location loc = widenedLoc(op->getLoc());
      OperationState state(loc, op->getName(), operands, types,
                           op->getAttrs());
      Operation *wideOp = builder.create(state);
      for (auto [result, wideResult] :
           llvm::zip(op->getResults(), wideOp->getResults())) {
        Value replacement = isNarrow(result.getType())
                                ? castTo(builder, loc, wideResult, element)
                                : wideResult;
        result.replaceAllUsesWith(replacement);
      }
      // Views only the product read are dead now that it reads their
      // float32 counterparts (an operand may be another's source).
      llvm::SetVector<Operation *> views;
      for (Value value : op->getOperands())
        if (Operation *view = value.getDefiningOp(); view && isView(view))
          views.insert(view);
      op->erase();
      while (!views.empty()) {
        Operation *view = views.pop_back_val();
        if (!view->use_empty())
          continue;
        if (Operation *source = view->getOperand(0).getDefiningOp();
            source && isView(source))
          views.insert(source);
        wide.erase({view->getResult(0), view->getBlock()});
        view->erase();
      }
    }
  }

private:
  /// Whether `op` views its first operand (the others, if any, are sizes):
  /// its float32 counterpart views that operand's float32 copy.
  static bool isView(Operation *op) {
    return isa<TOp, TransposeIntOp, PermuteOp, ViewOp, UnderscoreUnsafeViewOp,
               UnsqueezeOp, SqueezeDimOp, ExpandOp, AliasOp, DetachOp>(op) &&
           op->getNumResults() == 1 &&
           isa<RankedTensorType>(op->getResult(0).getType());
  }

  /// Whether `op` reshapes a value that a view below it permutes: whether
  /// the reshape is possible depends on the strides of what it views.
  static bool isReshapeOfPermuted(Operation *op) {
    if (!isa<ViewOp, UnderscoreUnsafeViewOp>(op))
      return false;
    for (Operation *below = op->getOperand(0).getDefiningOp();
         below && isView(below); below = below->getOperand(0).getDefiningOp())
      if (isa<TOp, TransposeIntOp, PermuteOp>(below))
        return true;
    return false;
  }

  /// The products, and flash attention's backward without an attention
  /// mask: a mask's float32 copy, [batch, heads, queries, keys], took a
  /// masked model's step (T5's, bf16 autocast) 3 % above eager's peak.
  static bool isWidenedKind(Operation *op) {
    if (auto attention =
            dyn_cast<UnderscoreScaledDotProductFlashAttentionForCpuBackwardOp>(
                op))
      return isa<NoneType>(attention.getAttnMask().getType());
    return isa<MmOp, BmmOp, AddmmOp>(op);
  }

  /// Whether `op`'s first result has one of the `narrow` element types, or
  /// is a small product of a 16-bit float type, and every operand and result
  /// of that type is a CPU tensor.
  static bool isWidened(Operation *op, llvm::ArrayRef<Type> narrow) {
    Type element = getElementTypeOrSelf(op->getResult(0).getType());
    if (!llvm::is_contained(narrow, element) &&
        !(isa<BFloat16Type, Float16Type>(element) && isSmallProduct(op)))
      return false;
    auto onCpuOrOther = [&](Value value) {
      return getElementTypeOrSelf(value.getType()) != element ||
             isCpuTensor(value);
    };
    return llvm::all_of(op->getResults(), onCpuOrOther) &&
           llvm::all_of(op->getOperands(), onCpuOrOther);
  }

  /// Whether `op` is an mm, bmm or addmm of static shapes with at most
  /// kSmallProductMultiplyAdds multiply-adds (its result's elements times
  /// the contracted dimension).
  static bool isSmallProduct(Operation *op) {
    if (!isa<MmOp, BmmOp, AddmmOp>(op))
      return false;
    Value left = isa<AddmmOp>(op) ? op->getOperand(1) : op->getOperand(0);
    auto leftType = dyn_cast<RankedTensorType>(left.getType());
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!leftType || !resultType || !leftType.hasStaticShape() ||
        !resultType.hasStaticShape() || leftType.getRank() == 0)
      return false;
    return resultType.getNumElements() * leftType.getShape().back() <=
           kSmallProductMultiplyAdds;
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
