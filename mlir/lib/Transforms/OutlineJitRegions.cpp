//===- OutlineJitRegions.cpp - outline lowerable regions into functions ---===//
//
// Regions grow in block order: an op joins the regions of the ops producing
// its operands (merging them) when that creates no cycle, i.e. when no op
// outside the merged region both depends on it and feeds it. Otherwise it
// joins the largest of them that allows it, else a region that reads one of
// its full-size operands too (a sibling), or starts a region of its own.
//
//===----------------------------------------------------------------------===//

#include "RegionCost.h"

#include "fxmlir/Codegen/FxmlirToLinalg.h"
#include "fxmlir/Transforms/FusionConfig.h"
#include "fxmlir/Transforms/Passes.h"
#include "fxmlir/Dialect/FxmlirDialect.h"

#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <utility>

#define DEBUG_TYPE "fxmlir-outline-jit-regions"

namespace fxmlir {
#define GEN_PASS_DEF_OUTLINEJITREGIONS
#include "fxmlir/Transforms/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
/// The regions of one block under construction.
///
/// Adding an op costs time in the ops it touches, not in the size of the
/// region it joins: each region keeps its first position and the outside
/// ops feeding it, so the cycle check never walks a region's members.
class RegionBuilder {
public:
  explicit RegionBuilder(Block &block) {
    for (auto [index, op] : llvm::enumerate(block))
      position[&op] = index;
  }

  void add(Operation *op) {
    llvm::SetVector<unsigned> producers;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (auto found = regionOf.find(def); found != regionOf.end())
          producers.insert(found->second);
    // All producer regions together, else the largest one that fits.
    SmallVector<unsigned> order(producers.begin(), producers.end());
    llvm::stable_sort(order, [&](unsigned a, unsigned b) {
      return regions[a].ops.size() > regions[b].ops.size();
    });
    if (producers.size() > 1 && !createsCycle(order, op))
      return merge(order, op);
    for (unsigned region : order)
      if (!createsCycle({region}, op))
        return merge({region}, op);
    for (unsigned region : siblingRegions(op))
      if (!createsCycle({region}, op))
        return merge({region}, op);
    regionOf[op] = regions.size();
    mergedInto.push_back(regions.size());
    regions.push_back({{op}, position[op], {}});
    addFeeders(regions.back(), op);
    addReader(op, regionOf[op]);
  }

  /// The non-empty regions, each in block order.
  SmallVector<SmallVector<Operation *>> takeRegions() {
    SmallVector<SmallVector<Operation *>> result;
    for (Region &region : regions) {
      if (region.ops.empty())
        continue;
      llvm::sort(region.ops, [&](Operation *a, Operation *b) {
        return position[a] < position[b];
      });
      result.push_back(std::move(region.ops));
    }
    return result;
  }

private:
  struct Region {
    SmallVector<Operation *> ops;
    /// The position of the earliest member.
    size_t first;
    /// Ops of the block feeding a member; some may have joined since.
    llvm::SetVector<Operation *> feeders;
  };

  /// Regions holding another reader of an operand of `op` as large as its
  /// result, largest first: in one region, one loop nest reads it once for
  /// both (a gradient feeding two products, as in SwiGLU's backward).
  /// Smaller operands (weights, row statistics) join nothing: any region
  /// may read those.
  SmallVector<unsigned> siblingRegions(Operation *op) {
    SmallVector<unsigned> found;
    if (op->getNumResults() == 0)
      return found;
    for (Value operand : op->getOperands()) {
      if (operand.getType() != op->getResult(0).getType())
        continue;
      if (auto it = readers.find(operand); it != readers.end())
        for (unsigned region : it->second)
          if (!llvm::is_contained(found, current(region)))
            found.push_back(current(region));
    }
    llvm::stable_sort(found, [&](unsigned a, unsigned b) {
      return regions[a].ops.size() > regions[b].ops.size();
    });
    return found;
  }

  /// Records `op`'s region as a reader of its operands. A value keeps the
  /// kMaxReaderRegions latest of them, so a value read by thousands of ops
  /// costs each reader a bounded lookup, not a walk over all the others;
  /// the latest, because a sibling far back in the block costs the cycle
  /// check a walk over everything in between (a weight or an input read by
  /// every layer would make that quadratic).
  void addReader(Operation *op, unsigned region) {
    for (Value operand : op->getOperands()) {
      SmallVector<unsigned, kMaxReaderRegions> &list = readers[operand];
      // Regions merged since may now be one: keep each once, in the order
      // they were recorded.
      SmallVector<unsigned, kMaxReaderRegions> seen;
      for (unsigned known : list)
        if (!llvm::is_contained(seen, current(known)))
          seen.push_back(current(known));
      list = std::move(seen);
      if (llvm::is_contained(list, region))
        continue;
      if (list.size() == kMaxReaderRegions)
        list.erase(list.begin());
      list.push_back(region);
    }
  }

  /// The region that `region` was merged into, if any, else itself.
  unsigned current(unsigned region) {
    unsigned root = region;
    while (mergedInto[root] != root)
      root = mergedInto[root];
    while (mergedInto[region] != root)
      region = std::exchange(mergedInto[region], root);
    return root;
  }

  bool isMember(Operation *def, ArrayRef<unsigned> chosen) {
    auto found = regionOf.find(def);
    return found != regionOf.end() && llvm::is_contained(chosen, found->second);
  }

  void addFeeders(Region &region, Operation *op) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && position.count(def))
        region.feeders.insert(def);
  }

  /// Whether putting `op` and `chosen` in one region makes a path from one
  /// member to another through an op outside: an outside op that feeds a
  /// member and depends on one. Each chosen region is acyclic on its own,
  /// so with one region only the edges into `op` are new; merging several
  /// also joins the paths between them, which start at their feeders.
  bool createsCycle(ArrayRef<unsigned> chosen, Operation *op) {
    size_t first = position[op];
    for (unsigned region : chosen)
      first = std::min(first, regions[region].first);
    auto isInside = [&](Operation *def) {
      return def == op || isMember(def, chosen);
    };
    // Ops before the first member cannot depend on one; ops visited without
    // reaching a member do not either, so the walks share `visited`. A walk
    // longer than kMaxCycleWalk ops answers "cycle": a merge missed, never a
    // wrong one, and each op's cost stays bounded whatever the graph.
    llvm::SmallPtrSet<Operation *, 32> visited;
    auto dependsOnMembers = [&](Operation *start) {
      SmallVector<Operation *> stack = {start};
      while (!stack.empty()) {
        Operation *current = stack.pop_back_val();
        for (Value operand : current->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def || !position.count(def) || position[def] < first)
            continue;
          if (isInside(def) || visited.size() > kMaxCycleWalk)
            return true;
          if (visited.insert(def).second)
            stack.push_back(def);
        }
      }
      return false;
    };
    auto feedsThroughOutside = [&](Operation *def) {
      return def && position.count(def) && position[def] >= first &&
             !isInside(def) && visited.insert(def).second &&
             dependsOnMembers(def);
    };
    for (Value operand : op->getOperands())
      if (feedsThroughOutside(operand.getDefiningOp()))
        return true;
    if (chosen.size() > 1)
      for (unsigned region : chosen)
        for (Operation *feeder : regions[region].feeders)
          if (feedsThroughOutside(feeder))
            return true;
    return false;
  }

  /// Merges the chosen regions and `op` into the first (the largest): each
  /// op moves only into a region at least twice its old one's size.
  void merge(ArrayRef<unsigned> chosen, Operation *op) {
    Region &target = regions[chosen.front()];
    for (unsigned index : chosen.drop_front()) {
      Region &region = regions[index];
      for (Operation *member : region.ops)
        regionOf[member] = chosen.front();
      target.ops.append(region.ops);
      target.first = std::min(target.first, region.first);
      target.feeders.insert(region.feeders.begin(), region.feeders.end());
      region = Region{};
      mergedInto[index] = chosen.front();
    }
    regionOf[op] = chosen.front();
    target.ops.push_back(op);
    addFeeders(target, op);
    addReader(op, chosen.front());
  }

  static constexpr unsigned kMaxReaderRegions = 4;
  static constexpr unsigned kMaxCycleWalk = 4096;

  DenseMap<Operation *, size_t> position;
  DenseMap<Operation *, unsigned> regionOf;
  SmallVector<Region> regions;
  /// Per region, the region it was merged into (itself while it lives).
  SmallVector<unsigned> mergedInto;
  /// Per value, regions that read it (some possibly merged since).
  DenseMap<Value, SmallVector<unsigned, kMaxReaderRegions>> readers;
};
} // namespace

/// On each fxmlir.mlir_jit op: [FX node name, result index] of the op each
/// result replaced ("" where it had no name).
static constexpr llvm::StringLiteral kResultNodesAttr = "fxmlir.result_nodes";

/// On an fxmlir.mlir_jit op whose one result may be written into the memory
/// of an input of its shape and dtype that dies at the call (the exporter
/// decides which: fxmlir.inplace_sums).
static constexpr llvm::StringLiteral kPointwiseAttr = "fxmlir.pointwise";

/// Whether `region` computes one result elementwise from operands of its
/// shape (or 0-d), so that every op reads element i of an input no later
/// than the result's element i is written: the region's single result may
/// then share an input's buffer. Views (a transpose keeps a square shape
/// but not the element order), broadcasts and reductions do not qualify.
static bool isPointwise(ArrayRef<Operation *> region, ValueRange outputs) {
  if (outputs.size() != 1)
    return false;
  auto shape = cast<RankedTensorType>(outputs[0].getType()).getShape();
  auto fits = [&](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return !type || type.getRank() == 0 || type.getShape() == shape;
  };
  return llvm::all_of(region, [&](Operation *op) {
    return getJitOpKind(op) == JitOpKind::Elementwise &&
           llvm::all_of(op->getOperands(), fits) &&
           llvm::all_of(op->getResults(), fits);
  });
}


/// "add", "softmax", "silu": what a region's function name says of an op.
static std::string shortName(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (auto call = dyn_cast<CallOp>(op))
    name = call.getTarget().rsplit("::").second;
  else
    name.consume_front("fxmlir.aten.");
  return name.split('.').first.ltrim('_').str();
}

/// "jit_add_tanh_mul": the distinct ops of the region in order, at most six.
static std::string regionName(ArrayRef<Operation *> region) {
  constexpr size_t kMaxNames = 6;
  SmallVector<std::string> names;
  for (Operation *op : region) {
    std::string name = shortName(op);
    if (getJitOpKind(op) != JitOpKind::Identity &&
        !llvm::is_contained(names, name))
      names.push_back(name);
  }
  std::string result = "jit";
  for (const std::string &name : ArrayRef(names).take_front(kMaxNames))
    result += "_" + name;
  if (names.size() > kMaxNames)
    result += "_etc";
  return result;
}

/// The outlined functions of a module by their text under one name: a
/// region equal to an earlier one (the same layer again) calls its
/// function, so the JIT compiles it once.
class OutlinedFunctions {
public:
  explicit OutlinedFunctions(ModuleOp module) : symbols(module) {}

  /// `func`'s symbol: its own once inserted, or that of an equal function
  /// outlined before, in which case `func` is erased.
  StringAttr add(func::FuncOp func) {
    std::string key = keyOf(func);
    auto [found, inserted] = byKey.try_emplace(key, func);
    if (!inserted) {
      func.erase();
      return found->second.getSymNameAttr();
    }
    symbols.insert(func);
    return func.getSymNameAttr();
  }

private:
  static std::string keyOf(func::FuncOp func) {
    StringAttr name = func.getSymNameAttr();
    func.setSymName("jit");
    std::string text;
    llvm::raw_string_ostream os(text);
    func.print(os, OpPrintingFlags().useLocalScope());
    func.setSymNameAttr(name);
    return text;
  }

  SymbolTable symbols;
  llvm::StringMap<func::FuncOp> byKey;
};

static void outline(ArrayRef<Operation *> region, OutlinedFunctions &functions) {
  llvm::SmallPtrSet<Operation *, 16> members(region.begin(), region.end());
  // Inputs in order of first use; None comes from fxmlir.none, cloned in.
  llvm::SetVector<Value> inputs;
  for (Operation *op : region)
    for (Value operand : op->getOperands())
      if (!members.contains(operand.getDefiningOp()) &&
          !isa<NoneType>(operand.getType()))
        inputs.insert(operand);
  llvm::SetVector<Value> leaving;
  for (Operation *op : region)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          }))
        leaving.insert(result);
  // A view (detach, a reshape, a slice, a transpose) leaving the region is
  // taken after the call, of the region's result for its source, as eager
  // takes it: as a result of its own it would be a second buffer of the
  // same values (an RMSNorm's rsqrt and its detach, both saved for
  // backward), written contiguous. Its source leaves the region instead.
  SmallVector<Operation *> viewsAfter;
  for (size_t i = 0; i < leaving.size(); ++i) { // grows as sources join
    Operation *def = leaving[i].getDefiningOp();
    if (getJitOpKind(def) != JitOpKind::Identity || def->getNumOperands() != 1)
      continue;
    viewsAfter.push_back(def);
    if (members.contains(def->getOperand(0).getDefiningOp()))
      leaving.insert(def->getOperand(0));
  }
  SmallVector<Value> outputs;
  for (Value value : leaving)
    if (!llvm::is_contained(viewsAfter, value.getDefiningOp()))
      outputs.push_back(value);
  if (outputs.empty())
    return;

  Operation *last = region.back();
  MLIRContext *ctx = last->getContext();
  OpBuilder builder(ctx);
  auto types = [](auto values) {
    return llvm::to_vector(
        llvm::map_range(values, [](Value value) { return value.getType(); }));
  };
  auto func = func::FuncOp::create(
      builder, last->getLoc(), regionName(region),
      FunctionType::get(ctx, types(inputs), types(outputs)));
  func.setPrivate();
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  IRMapping mapping;
  mapping.map(inputs.getArrayRef(), body->getArguments());
  for (Operation *op : region) {
    for (Value operand : op->getOperands())
      if (isa<NoneType>(operand.getType()) && !mapping.contains(operand))
        mapping.map(operand,
                    builder.clone(*operand.getDefiningOp())->getResult(0));
    builder.clone(*op, mapping);
  }
  func::ReturnOp::create(
      builder, last->getLoc(),
      llvm::to_vector(llvm::map_range(
          outputs, [&](Value value) { return mapping.lookup(value); })));

  StringAttr callee = functions.add(func);
  builder.setInsertionPointAfter(last);
  auto jit = MlirJitOp::create(builder, last->getLoc(), types(outputs),
                               callee.getValue(), inputs.getArrayRef());
  // Which node each result stands for, at this call: regions sharing a
  // function may stand for nodes whose layouts differ, which the exporter
  // restores.
  SmallVector<Attribute> resultNodes;
  for (Value output : outputs) {
    auto name = dyn_cast<NameLoc>(output.getDefiningOp()->getLoc());
    resultNodes.push_back(builder.getArrayAttr(
        {name ? Attribute(name.getName()) : builder.getStringAttr(""),
         builder.getI64IntegerAttr(cast<OpResult>(output).getResultNumber())}));
  }
  jit->setAttr(kResultNodesAttr, builder.getArrayAttr(resultNodes));
  if (isPointwise(region, outputs))
    jit->setAttr(kPointwiseAttr, builder.getUnitAttr());
  // The views, in region order (a view of a view after its source), on the
  // call's results; uses outside the region take them.
  IRMapping after;
  after.map(outputs, jit.getResults());
  for (Operation *view : viewsAfter) {
    Operation *copy = builder.clone(*view, after);
    view->getResult(0).replaceUsesWithIf(
        copy->getResult(0),
        [&](OpOperand &use) { return !members.contains(use.getOwner()); });
  }
  for (auto [output, replacement] : llvm::zip(outputs, jit.getResults()))
    output.replaceAllUsesWith(replacement);
  llvm::SetVector<Operation *> nones;
  for (Operation *op : region)
    for (Value operand : op->getOperands())
      if (isa<NoneType>(operand.getType()))
        nones.insert(operand.getDefiningOp());
  for (Operation *op : llvm::reverse(region))
    op->erase();
  // The region's None operands now live in the function.
  for (Operation *none : nones)
    if (none->use_empty())
      none->erase();
}

LogicalResult fxmlir::inlineJitRegion(ModuleOp module, StringRef name) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func || !func.isPrivate() || !func.getBody().hasOneBlock())
    return failure();
  SmallVector<MlirJitOp> calls;
  module.walk([&](MlirJitOp call) {
    if (call.getCallee() == name)
      calls.push_back(call);
  });
  Block &body = func.front();
  for (MlirJitOp call : calls) {
    OpBuilder builder(call);
    IRMapping mapping;
    mapping.map(body.getArguments(), call.getOperands());
    for (Operation &op : body.without_terminator())
      builder.clone(op, mapping);
    for (auto [result, returned] :
         llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
      result.replaceAllUsesWith(mapping.lookup(returned));
    call.erase();
  }
  func.erase();
  return success();
}

namespace {
struct OutlineJitRegionsPass
    : public fxmlir::impl::OutlineJitRegionsBase<OutlineJitRegionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OutlinedFunctions functions(module);
    // Graph functions are public; outlined functions are private and are
    // not outlined again.
    SmallVector<func::FuncOp> graphs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isPrivate() && !func.isExternal())
        graphs.push_back(func);
    for (func::FuncOp func : graphs)
      for (Block &block : func.getBody())
        outlineBlock(block, functions);
  }

  /// Whether the op lowers and lives on a device type regions may run on.
  bool isCandidate(Operation *op) {
    if (!getJitOpKind(op))
      return false;
    if (deviceTypes.empty())
      return true;
    for (Type type : op->getResultTypes())
      if (DeviceAttr device = getDevice(type);
          !device || !llvm::is_contained(deviceTypes, device.getType()))
        return false;
    return true;
  }

  /// With `explain`, marks the computing ops of a region left as it is.
  void leaveOut(ArrayRef<Operation *> region, const Twine &why) {
    if (!explain)
      return;
    for (Operation *op : region)
      if (getJitOpKind(op) != JitOpKind::Identity)
        op->setAttr(kLeftOutAttr, StringAttr::get(op->getContext(), why));
  }

  /// Whether `op` maps its operands to its result elementwise, broadcasting:
  /// an op a region could have held, unlike a GEMM or a gather.
  static bool isElementwiseShaped(Operation *op) {
    if (op->getNumResults() == 0)
      return false;
    auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!result)
      return false;
    bool readsTensor = false;
    for (Type type : op->getOperandTypes()) {
      auto operand = dyn_cast<RankedTensorType>(type);
      if (!operand || operand.getRank() > result.getRank())
        continue;
      readsTensor = true;
      ArrayRef<int64_t> dims = operand.getShape();
      ArrayRef<int64_t> wanted = result.getShape().take_back(dims.size());
      for (auto [dim, want] : llvm::zip_equal(dims, wanted))
        if (dim != want && dim != 1 && !ShapedType::isDynamic(dim) &&
            !ShapedType::isDynamic(want))
          return false;
    }
    return readsTensor;
  }

  /// With `explain`, marks the elementwise ops the JIT cannot lower that
  /// sit between candidates: they split what could have been one region.
  void markSplitters(Block &block) {
    if (!explain)
      return;
    for (Operation &op : block) {
      if (isCandidate(&op) || !isElementwiseShaped(&op))
        continue;
      auto isCandidateValue = [&](Value value) {
        Operation *def = value.getDefiningOp();
        return def && isCandidate(def);
      };
      bool fedByOne = llvm::any_of(op.getOperands(), isCandidateValue);
      bool feedsOne = llvm::any_of(op.getUsers(), [&](Operation *user) {
        return isCandidate(user);
      });
      if (fedByOne && feedsOne)
        op.setAttr(kLeftOutAttr,
                   StringAttr::get(&getContext(),
                                   "not lowerable by the JIT: it splits the "
                                   "ops around it into separate regions"));
    }
  }

  void outlineBlock(Block &block, OutlinedFunctions &functions) {
    RegionBuilder builder(block);
    for (Operation &op : block)
      if (isCandidate(&op))
        builder.add(&op);
    markSplitters(block);
    bool changed = false;
    for (SmallVector<Operation *> &region : builder.takeRegions()) {
      unsigned computing = llvm::count_if(region, [](Operation *op) {
        return getJitOpKind(op) != JitOpKind::Identity;
      });
      if (computing < minOps) {
        if (computing == 1)
          leaveOut(region, "a lone op: no lowerable op next to it to join "
                           "in a region");
        else
          leaveOut(region, "its region has " + Twine(computing) +
                               " ops that compute, fewer than min-ops (" +
                               Twine(minOps) + ")");
        continue;
      }
      if (costModel) {
        RegionCost cost = estimateRegionCost(region);
        LLVM_DEBUG(llvm::dbgs() << regionName(region) << ": eager "
                                << cost.eager << " B, region " << cost.region
                                << " B\n");
        if (!cost.pays()) {
          leaveOut(region, "the cost model: its region (" + regionName(region) +
                               ") would move " +
                               Twine(static_cast<int64_t>(cost.region)) +
                               " bytes, eager's kernels " +
                               Twine(static_cast<int64_t>(cost.eager)));
          continue;
        }
      }
      outline(region, functions);
      changed = true;
    }
    // Users of a region's results may precede its last op: move them below
    // the fxmlir.mlir_jit op. No cycles, so an order exists.
    if (changed && !sortTopologically(&block)) {
      emitError(block.getParentOp()->getLoc(),
                "outlined regions left a cycle in the graph");
      signalPassFailure();
    }
  }
};
} // namespace
