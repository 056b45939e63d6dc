//===- GroupCasts.cpp - a graph's casts to one dtype as one op ------------===//
//
// Under autocast a forward graph casts each weight it multiplies (and each
// bias) to the 16-bit type, and a backward graph casts each 16-bit weight
// gradient it returns back to float32: a LLaMA-style step of 4 layers made
// 28 such casts in each graph, GPT-2's 33 and 16. Each is an op call, a
// dispatch and, on a GPU, a kernel launch of a microsecond's work; on a GPU
// the step waits on that host work. The casts of the graph's inputs, and
// the casts whose results the graph only returns, become one
// fxmlir.cast_tensors per dtype and device: one call, one launch.
//
// Where the group goes keeps what each value costs in memory: casts of the
// graph's inputs (which live through the whole graph anyway) just before the
// first of them; returned casts just before the return, which their results
// reach at once, where they widen (the 16-bit weight gradients a backward
// graph returns: their inputs then live to the graph's end, half the bytes
// of the results that do anyway, when the saved activations are freed). A
// narrowing returned cast (a forward graph's saved keys and values) would
// keep twice its result's bytes to the end, at the step's peak: left alone.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/MapVector.h"

namespace fxmlir {
#define GEN_PASS_DEF_GROUPCASTS
#include "fxmlir/Transforms/Passes.h.inc"

namespace {

/// Whether `copy` changes a floating-point tensor's dtype and nothing else:
/// same device, strided, strides kept, blocking.
bool isFloatCast(UnderscoreToCopyOp copy) {
  auto source = cast<RankedTensorType>(copy.getSelf().getType());
  if (!copy.getDtype() || !isa<FloatType>(source.getElementType()) ||
      !isa<FloatType>(*copy.getDtype()) ||
      *copy.getDtype() == source.getElementType())
    return false;
  if (copy.getDevice() && *copy.getDevice() != getDevice(source))
    return false;
  if (copy.getLayout() && *copy.getLayout() != "strided")
    return false;
  if (copy.getPinMemory() && *copy.getPinMemory())
    return false;
  return !copy.getNonBlocking() &&
         (!copy.getMemoryFormat() || *copy.getMemoryFormat() == "preserve_format");
}

/// Where a cast's group goes, and what it is grouped with.
enum class Place { Arguments, Return };

using GroupKey = std::tuple<Place, Type, Attribute>;

std::optional<Place> placeOf(UnderscoreToCopyOp copy, Block &entry) {
  auto argument = dyn_cast<BlockArgument>(copy.getSelf());
  if (argument && argument.getOwner() == &entry)
    return Place::Arguments;
  // A widening cast only: its input, kept to the return, is at most half
  // the bytes its result keeps there anyway (a narrowing one's, twice).
  Type from = getElementTypeOrSelf(copy.getSelf().getType());
  bool widens = copy.getDtype() && from.getIntOrFloatBitWidth() <
                                       copy.getDtype()->getIntOrFloatBitWidth();
  if (widens && !copy->use_empty() &&
      llvm::all_of(copy->getUsers(),
                   [](Operation *user) { return isa<func::ReturnOp>(user); }))
    return Place::Return;
  return std::nullopt;
}

void group(ArrayRef<UnderscoreToCopyOp> casts, Place place, Type dtype,
           Block &entry) {
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
  OpBuilder builder(context);
  if (place == Place::Return)
    builder.setInsertionPoint(entry.getTerminator());
  else
    builder.setInsertionPoint(casts.front());
  auto grouped = builder.create<CastTensorsOp>(loc, types, tensors,
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
      llvm::MapVector<GroupKey, SmallVector<UnderscoreToCopyOp>> groups;
      for (auto copy : entry.getOps<UnderscoreToCopyOp>()) {
        if (!isFloatCast(copy))
          continue;
        std::optional<Place> place = placeOf(copy, entry);
        if (!place)
          continue;
        Attribute device = getDevice(copy.getSelf().getType());
        groups[{*place, *copy.getDtype(), device}].push_back(copy);
      }
      for (auto &[key, casts] : groups)
        if (casts.size() > 1)
          group(casts, std::get<0>(key), std::get<1>(key), entry);
    });
  }
};
} // namespace
} // namespace fxmlir
