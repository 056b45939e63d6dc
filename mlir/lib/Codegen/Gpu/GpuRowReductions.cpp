//===- GpuRowReductions.cpp - one GPU block per reduced row ---------------===//

#include "Combiner.h"

#include "fxmlir/Codegen/Passes.h"


namespace fxmlir {
#define GEN_PASS_DEF_GPUROWREDUCTIONS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

/// A reduction of the last loop dim into one output indexed by the other
/// loop dims in order, reading its inputs through dims and constants.
static bool isRowReduction(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1)
    return false;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  int64_t rows = iterators.size() - 1;
  if (rows < 0 || iterators.back() != utils::IteratorType::reduction ||
      llvm::is_contained(ArrayRef(iterators).drop_back(),
                         utils::IteratorType::reduction))
    return false;
  AffineMap rowIndices =
      AffineMap::getMultiDimIdentityMap(rows + 1, generic.getContext())
          .getMajorSubMap(rows);
  if (generic.getIndexingMapsArray().back() != rowIndices)
    return false;
  for (AffineMap map : generic.getIndexingMapsArray())
    for (AffineExpr expr : map.getResults())
      if (!isa<AffineDimExpr, AffineConstantExpr>(expr))
        return false;
  return true;
}

static void mapToBlocks(linalg::GenericOp generic, const Combiner &combiner,
                        int64_t blockSize) {
  linalg::FillOp fill = initialFill(generic);
  OpBuilder b(generic);
  Location loc = generic.getLoc();
  SmallVector<Value> sizes;
  auto linalgOp = cast<linalg::LinalgOp>(generic.getOperation());
  for (Range range : linalgOp.createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  Value rowLength = sizes.pop_back_val();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value rows = one;
  for (Value size : sizes)
    rows = arith::MulIOp::create(b, loc, rows, size);
  // Whole warps, no more than the row needs: a row of 16 takes one warp,
  // not `blockSize` threads that mostly idle through the shuffles.
  constexpr int64_t kWarp = 32;
  Value warp = arith::ConstantIndexOp::create(b, loc, kWarp);
  Value warps = b.createOrFold<arith::CeilDivUIOp>(
      loc, b.createOrFold<arith::MaxUIOp>(loc, rowLength, one), warp);
  Value threads = b.createOrFold<arith::MinUIOp>(
      loc, b.createOrFold<arith::MulIOp>(loc, warps, warp),
      arith::ConstantIndexOp::create(b, loc, blockSize));
  auto launch =
      gpu::LaunchOp::create(b, loc, rows, one, one, threads, one, one);
  auto function = generic->getParentOfType<func::FuncOp>();
  launch.setFunctionAttr(FlatSymbolRefAttr::get(
      b.getContext(), (function.getSymName() + "_row_reduction").str()));
  b.setInsertionPointToStart(&launch.getBody().front());
  Value thread = launch.getThreadIds().x;
  // The row's indices, row-major from the block id.
  SmallVector<Value> loops(sizes.size());
  Value rest = launch.getBlockIds().x;
  for (size_t d = sizes.size(); d-- > 0;) {
    loops[d] = arith::RemUIOp::create(b, loc, rest, sizes[d]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[d]);
  }

  Value identity = arith::ConstantOp::create(b, loc, combiner.identity);
  auto strided = scf::ForOp::create(
      b, loc, thread, rowLength, threads, ValueRange{identity},
      [&](OpBuilder &nb, Location nloc, Value column, ValueRange iter) {
        SmallVector<Value> point = loops;
        point.push_back(column);
        scf::YieldOp::create(
            nb, nloc, foldElement(nb, nloc, generic, point, iter.front()));
      });
  Value total =
      gpu::AllReduceOp::create(b, loc, strided.getResult(0),
                               gpu::AllReduceOperationAttr::get(
                                   b.getContext(), combiner.kind),
                               /*uniform=*/true);

  // Thread 0 folds the block's result into the output's initial value.
  Value output = generic.getDpsInitOperand(0)->get();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, zero);
  scf::IfOp::create(b, loc, first, [&](OpBuilder &tb, Location tloc) {
    Value folded =
        foldIntoOutput(tb, tloc, combiner, fill, output, loops, total);
    memref::StoreOp::create(tb, tloc, folded, output, loops);
    scf::YieldOp::create(tb, tloc);
  });
  gpu::TerminatorOp::create(b, loc);
  generic.erase();
  if (fill)
    fill.erase();
}

namespace {
struct GpuRowReductionsPass
    : public fxmlir::impl::GpuRowReductionsBase<GpuRowReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Combiner>> reductions;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (!isRowReduction(generic))
        return;
      if (std::optional<Combiner> combiner = findCombiner(generic))
        reductions.push_back({generic, *combiner});
    });
    for (auto &[generic, combiner] : reductions)
      mapToBlocks(generic, combiner, blockSize);
  }
};
} // namespace
