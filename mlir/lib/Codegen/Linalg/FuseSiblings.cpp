//===- FuseSiblings.cpp - ops sharing an input in one loop ----------------===//
//
// Two elementwise ops over the same elements that read a common operand
// (SwiGLU's backward multiplies one gradient by two activations) become one
// linalg.generic with both results: one loop nest, the shared operand read
// once. Producer-consumer fusion cannot do it: neither op reads the other.
// So do two reductions over the same loops (layer norm's backward sums two
// products over each row, and two over the rows for the weight and bias
// gradients).
//
//===----------------------------------------------------------------------===//

#include "FuseSiblings.h"
#include "SplitAtConcat.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace fxmlir;

/// Pointwise, every result written at its own element.
static bool isPointwiseWithIdentityResults(linalg::GenericOp op) {
  return isPointwise(op) && op.getNumDpsInits() > 0 &&
         llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
           return op.getMatchingIndexingMap(&init).isIdentity();
         });
}

/// Whether both ops iterate over the same elements: equal result types,
/// and dynamic sizes taken from the same values.
static bool sameIterationSpace(linalg::GenericOp a, linalg::GenericOp b) {
  Value initA = a.getDpsInits().front(), initB = b.getDpsInits().front();
  if (initA.getType() != initB.getType())
    return false;
  if (cast<RankedTensorType>(initA.getType()).hasStaticShape())
    return true;
  auto emptyA = initA.getDefiningOp<tensor::EmptyOp>();
  auto emptyB = initB.getDefiningOp<tensor::EmptyOp>();
  return initA == initB ||
         (emptyA && emptyB &&
          emptyA.getDynamicSizes() == emptyB.getDynamicSizes());
}

/// The widest element an op reads or writes, in bits: GPU kernels move 16
/// bytes of it per thread, so merging ops of different widths would narrow
/// the accesses of one.
static unsigned widestElement(linalg::GenericOp op) {
  unsigned bits = 0;
  for (Value operand : op->getOperands())
    if (auto type = dyn_cast<ShapedType>(operand.getType()))
      bits = std::max(bits, type.getElementTypeBitWidth());
  return bits;
}

/// Whether `map`, through which both ops read their shared operand, names
/// every loop: the operand's sizes are then both ops' loop sizes.
static bool namesEveryLoop(AffineMap map) {
  return map.isProjectedPermutation() &&
         llvm::all_of(llvm::seq(map.getNumDims()), [&](unsigned dim) {
           return map.isFunctionOfDim(dim);
         });
}

namespace {
/// The inputs of an op merged from two: one that both read through the
/// same map is read once.
struct MergedInputs {
  SmallVector<Value> values;
  SmallVector<AffineMap> maps;

  /// The index of `operand` of `op` among the merged inputs.
  unsigned add(linalg::GenericOp op, OpOperand *operand) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    for (auto [index, known] : llvm::enumerate(values))
      if (known == operand->get() && maps[index] == map)
        return index;
    values.push_back(operand->get());
    maps.push_back(map);
    return values.size() - 1;
  }
};

/// Which siblings a pattern merges: elementwise ops, or reductions.
enum class SiblingKind { Pointwise, Reduction };

struct FuseSiblings : OpRewritePattern<linalg::GenericOp> {
  FuseSiblings(MLIRContext *ctx, SiblingKind kind, unsigned maxOperands)
      : OpRewritePattern(ctx), kind(kind), maxOperands(maxOperands) {}

  LogicalResult matchAndRewrite(linalg::GenericOp first,
                                PatternRewriter &rewriter) const override {
    if (!isCandidate(first))
      return failure();
    for (OpOperand *input : first.getDpsInputOperands()) {
      if (!isa<RankedTensorType>(input->get().getType()))
        continue;
      for (OpOperand &use : input->get().getUses()) {
        auto second = dyn_cast<linalg::GenericOp>(use.getOwner());
        if (second && isSibling(first, input, second, use)) {
          moveFillsBefore(rewriter, second, first);
          merge(rewriter, first, second);
          return success();
        }
      }
    }
    return failure();
  }

  /// `second` comes after `first`, reads the shared value as `first` does,
  /// and needs nothing `first` does not have: the merged op can replace
  /// `first` where it is.
  bool isSibling(linalg::GenericOp first, OpOperand *input,
                 linalg::GenericOp second, OpOperand &use) const {
    AffineMap shared = first.getMatchingIndexingMap(input);
    return second != first && second->getBlock() == first->getBlock() &&
           first->isBeforeInBlock(second) && isCandidate(second) &&
           second.getNumLoops() == first.getNumLoops() &&
           second.getMatchingIndexingMap(&use) == shared &&
           sameLoops(first, shared, second) &&
           mergedOperands(first, second) <= maxOperands &&
           availableBefore(second, first);
  }

  /// The operands of the op merged from `first` and `second`: an input
  /// both read through the same map is read once.
  static unsigned mergedOperands(linalg::GenericOp first,
                                 linalg::GenericOp second) {
    MergedInputs inputs;
    for (linalg::GenericOp op : {first, second})
      for (OpOperand *input : op.getDpsInputOperands())
        inputs.add(op, input);
    return inputs.values.size() + first.getNumDpsInits() +
           second.getNumDpsInits();
  }

  bool isCandidate(linalg::GenericOp op) const {
    if (kind == SiblingKind::Pointwise)
      return isPointwiseWithIdentityResults(op);
    return op.getNumReductionLoops() > 0;
  }

  /// Whether `first` and `second`, which read a value through `shared`,
  /// run the same loops.
  bool sameLoops(linalg::GenericOp first, AffineMap shared,
                 linalg::GenericOp second) const {
    if (kind == SiblingKind::Pointwise)
      return sameIterationSpace(first, second) &&
             widestElement(first) == widestElement(second);
    return first.getIteratorTypesArray() == second.getIteratorTypesArray() &&
           namesEveryLoop(shared);
  }

  /// Whether the operands of `op` and the values its body reads from above
  /// (constants) are all available before `first`, or are fills of values
  /// that are (a reduction's zeroed init), which can move there.
  static bool availableBefore(linalg::GenericOp op, Operation *first) {
    SetVector<Value> used(op->getOperands().begin(), op->getOperands().end());
    getUsedValuesDefinedAbove(op.getRegion(), used);
    DominanceInfo dominance;
    auto available = [&](Value value) {
      return dominance.properlyDominates(value, first);
    };
    return llvm::all_of(used, [&](Value value) {
      auto fill = value.getDefiningOp<linalg::FillOp>();
      return available(value) ||
             (fill && llvm::all_of(fill->getOperands(), available));
    });
  }

  /// Moves the fills `op` reads that come after `first` before it.
  static void moveFillsBefore(PatternRewriter &rewriter, linalg::GenericOp op,
                              Operation *first) {
    for (Value operand : op->getOperands())
      if (auto fill = operand.getDefiningOp<linalg::FillOp>();
          fill && fill->getBlock() == first->getBlock() &&
          first->isBeforeInBlock(fill))
        rewriter.moveOpBefore(fill, first);
  }

  /// Where a block argument of `first` or `second` comes from in the
  /// merged op: its `index`th input or init.
  struct Source {
    bool init;
    unsigned index;
  };

  static void merge(PatternRewriter &rewriter, linalg::GenericOp first,
                    linalg::GenericOp second) {
    MergedInputs shared;
    SmallVector<Value> inits;
    SmallVector<AffineMap> initMaps;
    SmallVector<Source> firstArgs, secondArgs;
    for (OpOperand *operand : first.getDpsInputOperands())
      firstArgs.push_back(Source{false, shared.add(first, operand)});
    for (OpOperand *operand : second.getDpsInputOperands())
      secondArgs.push_back(Source{false, shared.add(second, operand)});
    SmallVector<Value> &inputs = shared.values;
    SmallVector<AffineMap> &inputMaps = shared.maps;
    for (auto [op, args] : {std::pair{first, &firstArgs},
                            std::pair{second, &secondArgs}})
      for (OpOperand &init : op.getDpsInitsMutable()) {
        args->push_back(Source{true, static_cast<unsigned>(inits.size())});
        // Two reductions into one zeroed tensor get a fill each: one
        // buffer written as two results would be copied to two.
        Value value = init.get();
        if (auto fill = value.getDefiningOp<linalg::FillOp>();
            fill && llvm::is_contained(inits, value))
          value = rewriter.clone(*fill)->getResult(0);
        inits.push_back(value);
        initMaps.push_back(op.getMatchingIndexingMap(&init));
      }
    auto argument = [&](ValueRange blockArgs, Source source) {
      return blockArgs[source.init ? inputs.size() + source.index
                                   : source.index];
    };

    SmallVector<AffineMap> maps(inputMaps);
    maps.append(initMaps);
    auto merged = linalg::GenericOp::create(
        rewriter, first.getLoc(), ValueRange(inits).getTypes(), inputs, inits,
        maps, first.getIteratorTypesArray(),
        [&](OpBuilder &b, Location, ValueRange blockArgs) {
          SmallVector<Value> yielded;
          for (auto [op, args] : {std::pair{first, &firstArgs},
                                  std::pair{second, &secondArgs}}) {
            IRMapping mapping;
            for (auto [arg, index] : llvm::zip(op.getBody()->getArguments(),
                                               *args))
              mapping.map(arg, argument(blockArgs, index));
            for (Operation &bodyOp : op.getBody()->without_terminator())
              b.clone(bodyOp, mapping);
            for (Value value :
                 op.getBody()->getTerminator()->getOperands())
              yielded.push_back(mapping.lookupOrDefault(value));
          }
          linalg::YieldOp::create(b, first.getLoc(), yielded);
        });
    unsigned firstResults = first.getNumResults();
    rewriter.replaceOp(first, merged.getResults().take_front(firstResults));
    rewriter.replaceOp(second, merged.getResults().drop_front(firstResults));
  }

  SiblingKind kind;
  unsigned maxOperands;
};
} // namespace

void fxmlir::populateFuseSiblingsPatterns(RewritePatternSet &patterns,
                                          unsigned maxOperands) {
  patterns.add<FuseSiblings>(patterns.getContext(), SiblingKind::Pointwise,
                             maxOperands);
}

void fxmlir::populateFuseSiblingReductionsPatterns(RewritePatternSet &patterns,
                                                   unsigned maxOperands) {
  patterns.add<FuseSiblings>(patterns.getContext(), SiblingKind::Reduction,
                             maxOperands);
}
