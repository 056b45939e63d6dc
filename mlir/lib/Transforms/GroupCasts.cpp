//===- GroupCasts.cpp - a graph's casts of its inputs as one op -----------===//
//
// Under autocast a forward graph casts each weight it multiplies (and each
// bias) to the 16-bit type, a call each: a LLaMA-style step of 4 layers made
// 28 of them, GPT-2's 33. On a GPU each is an op call, a dispatch and a
// kernel launch of a microsecond's work, and the step waits on that host
// work. The casts of the graph's CUDA inputs become one fxmlir.cast_tensors
// per dtype and device, just before the first of them: one call, one launch.
// Not on a CPU: there a cast is a few microseconds of Python beside a
// millisecond of copying, and the weight its product reads right after it is
// still in cache; cast at the graph's start, 25 MB of them later, it is not
// (LLaMA-style bf16, two AMD EPYC threads: 1-2 % slower in three runs).
//
// Moving a cast to the first one's place makes its result live from there:
// a cast is grouped only where that costs no memory at the step's peak,
// that is where the graph keeps its result to the end anyway (returned, as
// the weights a forward graph saves for backward are, directly or through
// views), or where it is a vector (a bias, a norm's weight). A backward
// graph's recomputed weight casts, which die after their product, and its
// weight gradients, cast back to float32 where the step's gradients are its
// peak (a CPU step of few tokens), stay where they are.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Transforms/PatternUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace fxmlir {
#define GEN_PASS_DEF_GROUPCASTS
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// Whether the graph returns `value` or a view of it: its memory lives to
/// the graph's end.
bool keptToTheEnd(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    if (isa<func::ReturnOp>(user))
      return true;
    if (isa<TOp, TransposeIntOp, PermuteOp, ViewOp, UnderscoreUnsafeViewOp,
            UnsqueezeOp, ExpandOp, DetachOp>(user))
      return keptToTheEnd(user->getResult(0));
    return false;
  });
}

/// Whether `copy` casts an input of the graph whose result may be made at
/// the graph's first such cast (see the file comment).
bool isGroupable(UnderscoreToCopyOp copy, Block &entry) {
  auto argument = dyn_cast<BlockArgument>(copy.getSelf());
  if (!argument || argument.getOwner() != &entry || !isFloatCast(copy) ||
      !isCudaTensor(argument))
    return false;
  return cast<RankedTensorType>(copy.getType()).getRank() <= 1 ||
         keptToTheEnd(copy.getResult());
}

void group(ArrayRef<UnderscoreToCopyOp> casts, Type dtype) {
  MLIRContext *context = dtype.getContext();
  SmallVector<Value> tensors;
  SmallVector<Type> types;
  SmallVector<Location> locations;
  for (UnderscoreToCopyOp copy : casts) {
    tensors.push_back(copy.getSelf());
    types.push_back(copy.getType());
    locations.push_back(copy.getLoc());
  }
  // A location of its own: the exporter names the node after the group,
  // not after one of the casts it replaces.
  Location loc = FusedLoc::get(context, locations,
                               StringAttr::get(context, "fxmlir-group-casts"));
  OpBuilder builder(casts.front());
  auto grouped = CastTensorsOp::create(builder, loc, types, tensors,
                                       TypeAttr::get(dtype));
  for (auto [copy, result] : llvm::zip(casts, grouped.getResults())) {
    copy->replaceAllUsesWith(ValueRange(result));
    copy->erase();
  }
}

struct GroupCastsPass : public impl::GroupCastsBase<GroupCastsPass> {
  void runOnOperation() override {
    getOperation()->walk([](func::FuncOp function) {
      // Private functions are JIT regions' bodies: their casts are loops.
      if (function.isPrivate() || function.isExternal())
        return;
      Block &entry = function.getBody().front();
      llvm::MapVector<std::pair<Type, Attribute>,
                      SmallVector<UnderscoreToCopyOp>>
          groups;
      for (auto copy : entry.getOps<UnderscoreToCopyOp>())
        if (isGroupable(copy, entry))
          groups[{*copy.getDtype(), getDevice(copy.getSelf().getType())}]
              .push_back(copy);
      for (auto &[key, casts] : groups)
        if (casts.size() > 1)
          group(casts, key.first);
    });
  }
};
} // namespace
} // namespace fxmlir
