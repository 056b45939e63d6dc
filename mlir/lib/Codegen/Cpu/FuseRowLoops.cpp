//===- FuseRowLoops.cpp - a function's linalg ops row by row, CPU ---------===//
//
// Each linalg op lowers to a loop nest of its own over whole buffers, so a
// layer norm region walked its [tokens, dim] planes once per op: six times
// in its forward, from L2 or memory once they outgrow L1. Here consecutive
// ops over the same rows (the leading dims of the function's widest
// buffers) run in one loop nest over those rows, each op on its row's
// slices in turn: a row comes from memory once and from L1 after that.
//
// Ops A then B may run row by row when every buffer one of them writes is
// read and written by both only at the rows' own indices (B's row i reads
// what A's row i wrote, and no other row of A touches it), or is touched by
// one op alone (a sum over the rows accumulates in the op's own order).
// Buffers are told apart by where they come from: each allocation is its
// own; function arguments are distinct but for a pointwise region's single
// output, which mlir_jit_into may place in an input of its type.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

namespace fxmlir {
#define GEN_PASS_DEF_FUSEROWLOOPS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

/// Elements of a row (the ops' inner loops) below which a row leaves the
/// vectorized inner loops too little work to pay for their setup.
static constexpr int64_t kMinRowElements = 64;

/// Whether a reshape keeps the first `rows` dims of the side with more
/// dims (`expanded`, whose dims `groups` partition): each in a group of its
/// own but for dims of size 1.
static bool keepsRows(MemRefType expanded,
                      ArrayRef<ReassociationIndices> groups, unsigned rows) {
  if (groups.size() < rows)
    return false;
  for (unsigned dim = 0; dim < rows; ++dim) {
    if (!llvm::is_contained(groups[dim], dim))
      return false;
    for (int64_t other : groups[dim])
      if (other != dim && expanded.getDimSize(other) != 1)
        return false;
  }
  return true;
}

/// Whether a subview takes the first `rows` dims of its source whole.
static bool keepsRows(memref::SubViewOp view, unsigned rows) {
  MemRefType source = view.getSourceType();
  llvm::SmallBitVector dropped = view.getDroppedDims();
  for (unsigned dim = 0; dim < rows; ++dim) {
    if (dim >= source.getRank() || dropped.test(dim) ||
        !isConstantIntValue(view.getMixedOffsets()[dim], 0) ||
        !isConstantIntValue(view.getMixedStrides()[dim], 1))
      return false;
    OpFoldResult size = view.getMixedSizes()[dim];
    if (!source.isDynamicDim(dim)) {
      if (!isConstantIntValue(size, source.getDimSize(dim)))
        return false;
      continue;
    }
    auto whole = dyn_cast_if_present<Value>(size);
    auto dimOp = whole ? whole.getDefiningOp<memref::DimOp>() : nullptr;
    if (!dimOp || dimOp.getSource() != view.getSource() ||
        dimOp.getConstantIndex() != static_cast<int64_t>(dim))
      return false;
  }
  return true;
}

namespace {
/// A buffer an op reads or writes: the argument or allocation `buffer`
/// views, and whether it does so at its row's indices only.
struct Access {
  Operation *op;
  Value buffer;
  bool rowWise;
  bool writes;
};

/// A run of ops to fuse: `ops` into one loop nest over `ranges` (the sizes
/// of their first loops), `before` (views, allocations, other ops' fills)
/// moved above it.
struct Group {
  SmallVector<Operation *> ops;
  SmallVector<Operation *> before;
  SmallVector<int64_t> ranges;
  SmallVector<Access> accesses;
  int64_t rowElements = 0;
};

class RowFuser {
public:
  RowFuser(func::FuncOp func, unsigned rows) : rows(rows) {
    llvm::SmallDenseSet<Value> written;
    func.walk([&](Operation *op) {
      SmallVector<Access> accesses;
      if (accessesOf(op, accesses))
        for (const Access &access : accesses)
          if (access.writes && isa<BlockArgument>(access.buffer))
            written.insert(access.buffer);
    });
    singleOutput = written.size() == 1;
  }

  /// The groups of `block`, in order.
  std::vector<Group> groupsOf(Block &block) {
    std::vector<Group> groups;
    Group current;
    auto close = [&] {
      if (current.ops.size() >= 2 && current.rowElements >= kMinRowElements) {
        Operation *last = current.ops.back();
        llvm::erase_if(current.before, [&](Operation *op) {
          return last->isBeforeInBlock(op);
        });
        groups.push_back(std::move(current));
      }
      current = Group();
    };
    for (Operation &op : block.without_terminator()) {
      if (!current.ops.empty() && (join(current, &op) || hoist(current, &op)))
        continue;
      if (isMemoryEffectFree(&op) || isa<memref::AllocOp>(op)) {
        if (!current.ops.empty())
          current.before.push_back(&op);
        continue;
      }
      close();
      start(current, &op);
    }
    close();
    return groups;
  }

  /// Runs `group`'s ops in one loop nest over its rows, where its first op
  /// was.
  void fuse(Group &group) {
    Operation *first = group.ops.front();
    for (Operation *op : group.before)
      op->moveBefore(first);
    OpBuilder b(first);
    Location loc = first->getLoc();
    SmallVector<Range> ranges =
        cast<linalg::LinalgOp>(first).createLoopRanges(b, loc);
    SmallVector<Value> ubs;
    for (unsigned dim = 0; dim < rows; ++dim)
      ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, ranges[dim].size));
    SmallVector<Value> lbs(rows, arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> steps(rows, arith::ConstantIndexOp::create(b, loc, 1));
    scf::buildLoopNest(b, loc, lbs, ubs, steps,
                       [&](OpBuilder &nested, Location, ValueRange ivs) {
                         for (Operation *op : group.ops)
                           cloneOnRow(nested, cast<linalg::LinalgOp>(op), ivs);
                       });
    for (Operation *op : group.ops)
      op->erase();
  }

private:
  /// Whether `map` reads the rows only through plain dims.
  bool slicesRows(AffineMap map) const {
    return llvm::all_of(map.getResults(), [&](AffineExpr expr) {
      return isa<AffineDimExpr>(expr) ||
             llvm::none_of(llvm::seq(rows),
                           [&](unsigned dim) { return expr.isFunctionOfDim(dim); });
    });
  }

  /// Whether `map` indexes a buffer's first dims by the row loops.
  bool leadsWithRows(AffineMap map) const {
    if (map.getNumResults() < rows)
      return false;
    for (unsigned dim = 0; dim < rows; ++dim) {
      auto expr = dyn_cast<AffineDimExpr>(map.getResult(dim));
      if (!expr || expr.getPosition() != dim)
        return false;
    }
    return true;
  }

  /// The buffer `value` views, and whether every view on the way keeps the
  /// rows; null where a view is of a kind not followed here.
  std::pair<Value, bool> bufferOf(Value value) const {
    bool kept = true;
    while (Operation *def = value.getDefiningOp()) {
      if (isa<memref::AllocOp>(def))
        break;
      if (auto expand = dyn_cast<memref::ExpandShapeOp>(def)) {
        kept &= keepsRows(expand.getResultType(),
                          expand.getReassociationIndices(), rows);
        value = expand.getSrc();
      } else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def)) {
        kept &= keepsRows(collapse.getSrcType(),
                          collapse.getReassociationIndices(), rows);
        value = collapse.getSrc();
      } else if (auto view = dyn_cast<memref::SubViewOp>(def)) {
        kept &= keepsRows(view, rows);
        value = view.getSource();
      } else if (auto cast = dyn_cast<memref::CastOp>(def)) {
        value = cast.getSource();
      } else {
        return {nullptr, false};
      }
    }
    return {value, kept};
  }

  /// The buffers `op` reads and writes, if it is a linalg op on buffers or
  /// a copy and every buffer's origin is known.
  bool accessesOf(Operation *op, SmallVectorImpl<Access> &accesses) const {
    auto add = [&](Value value, bool rowWise, bool writes) {
      auto [buffer, kept] = bufferOf(value);
      accesses.push_back({op, buffer, rowWise && kept, writes});
      return static_cast<bool>(buffer);
    };
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      bool source = add(copy.getSource(), false, false);
      return add(copy.getTarget(), false, true) && source;
    }
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics())
      return false;
    // A body that loads from a buffer of its own choosing (a gather) reads
    // rows its operands do not say.
    WalkResult loads = op->walk([&](Operation *nested) {
      return nested == op || isMemoryEffectFree(nested)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    });
    if (loads.wasInterrupted())
      return false;
    bool known = true;
    for (OpOperand &operand : op->getOpOperands())
      if (isa<MemRefType>(operand.get().getType()))
        known &= add(operand.get(),
                     leadsWithRows(linalgOp.getMatchingIndexingMap(&operand)),
                     linalgOp.isDpsInit(&operand));
    return known;
  }

  bool mayAlias(Value a, Value b) const {
    return a == b || (singleOutput && isa<BlockArgument>(a) &&
                      isa<BlockArgument>(b) && a.getType() == b.getType());
  }

  /// Whether `accesses` may run row by row (see the file comment).
  bool rowByRow(ArrayRef<Access> accesses) const {
    for (const Access &write : accesses) {
      if (!write.writes)
        continue;
      bool rowWise = true, oneOp = true;
      for (const Access &other : accesses)
        if (mayAlias(other.buffer, write.buffer)) {
          rowWise &= other.rowWise;
          oneOp &= other.op == write.op;
        }
      if (!rowWise && !oneOp)
        return false;
    }
    return true;
  }

  /// `op` as a linalg op that may run on slices of the rows, and its loop
  /// ranges. Not one that reads a row's index (a causal mask): on a slice,
  /// the index would count from the slice.
  std::optional<SmallVector<int64_t>> rowRanges(Operation *op) const {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
        linalgOp.getNumLoops() < rows ||
        !llvm::all_of(linalgOp.getIndexingMapsArray(),
                      [&](AffineMap map) { return slicesRows(map); }))
      return std::nullopt;
    WalkResult indexed = op->walk([&](linalg::IndexOp index) {
      return index.getDim() < rows ? WalkResult::interrupt()
                                   : WalkResult::advance();
    });
    if (indexed.wasInterrupted())
      return std::nullopt;
    return linalgOp.getStaticLoopRanges();
  }

  static int64_t rowElementsOf(ArrayRef<int64_t> ranges, unsigned rows) {
    int64_t elements = 1;
    for (int64_t size : ranges.drop_front(rows)) {
      // A dynamic row is taken to be long enough.
      if (ShapedType::isDynamic(size))
        return kMinRowElements;
      elements *= size;
    }
    return elements;
  }

  void start(Group &group, Operation *op) const {
    std::optional<SmallVector<int64_t>> ranges = rowRanges(op);
    SmallVector<Access> accesses;
    if (!ranges || !accessesOf(op, accesses))
      return;
    group.ops.push_back(op);
    group.ranges.assign(ranges->begin(), ranges->begin() + rows);
    group.accesses = std::move(accesses);
    group.rowElements = rowElementsOf(*ranges, rows);
  }

  /// Adds `op` to `group` if it runs over the same rows and may run row by
  /// row with the group's ops.
  bool join(Group &group, Operation *op) const {
    std::optional<SmallVector<int64_t>> ranges = rowRanges(op);
    SmallVector<Access> accesses(group.accesses);
    // Dynamic sizes are all the rows' batch dim, as the JIT assumes.
    if (!ranges ||
        !llvm::equal(ArrayRef(*ranges).take_front(rows), group.ranges) ||
        !accessesOf(op, accesses) || !rowByRow(accesses))
      return false;
    group.ops.push_back(op);
    group.accesses = std::move(accesses);
    group.rowElements =
        std::max(group.rowElements, rowElementsOf(*ranges, rows));
    return true;
  }

  /// Moves `op` (not over the rows: a fill of a column sum's output) above
  /// `group` if it touches nothing the group's ops have written or read.
  bool hoist(Group &group, Operation *op) const {
    SmallVector<Access> accesses;
    if (!accessesOf(op, accesses))
      return false;
    for (const Access &mine : accesses)
      for (const Access &theirs : group.accesses)
        if ((mine.writes || theirs.writes) &&
            mayAlias(mine.buffer, theirs.buffer))
          return false;
    group.before.push_back(op);
    return true;
  }

  /// `op` on the slices of its buffers at row `ivs`.
  void cloneOnRow(OpBuilder &b, linalg::LinalgOp op, ValueRange ivs) const {
    Location loc = op.getLoc();
    SmallVector<Value> operands;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      auto type = dyn_cast<MemRefType>(value.getType());
      AffineMap map = type ? op.getMatchingIndexingMap(&operand) : AffineMap();
      if (!type || llvm::none_of(llvm::seq(rows), [&](unsigned dim) {
            return map.isFunctionOfDim(dim);
          })) {
        operands.push_back(value);
        continue;
      }
      SmallVector<OpFoldResult> offsets, sizes;
      SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
      SmallVector<OpFoldResult> whole = memref::getMixedSizes(b, loc, value);
      for (auto [position, expr] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        if (dim && dim.getPosition() < rows) {
          offsets.push_back(ivs[dim.getPosition()]);
          sizes.push_back(b.getIndexAttr(1));
        } else {
          offsets.push_back(b.getIndexAttr(0));
          sizes.push_back(whole[position]);
        }
      }
      operands.push_back(
          memref::SubViewOp::create(b, loc, value, offsets, sizes, strides));
    }
    Operation *clone = b.clone(*op);
    clone->setOperands(operands);
  }

  unsigned rows;
  bool singleOutput = false;
};

struct FuseRowLoopsPass
    : public fxmlir::impl::FuseRowLoopsBase<FuseRowLoopsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The rows: all dims of the widest arguments but the innermost.
    int64_t rank = 0;
    for (Type type : func.getArgumentTypes())
      if (auto memref = dyn_cast<MemRefType>(type))
        rank = std::max(rank, memref.getRank());
    if (rank < 2 || func.getBody().empty())
      return;
    RowFuser fuser(func, rank - 1);
    for (Group &group : fuser.groupsOf(func.getBody().front()))
      fuser.fuse(group);
  }
};
} // namespace
