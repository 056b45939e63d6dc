//===- GpuColumnReductions.cpp - a GPU block per group of columns ---------===//
//
// A reduction whose innermost loop is parallel (a column sum over the rows:
// a bias or norm weight gradient) read its column with one block's threads
// striding down it, each warp load touching 32 rows (32 sectors) where it
// could touch one: 300 us for a [4096, 512] weight gradient on an H200.
// Here a block takes kColumns adjacent columns, its threads a column each
// and a share of the reduced rows, so a warp reads two rows' contiguous
// column groups; the threads of a column then combine in shared memory.
//
//===----------------------------------------------------------------------===//

#include "Combiner.h"

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace fxmlir {
#define GEN_PASS_DEF_GPUCOLUMNREDUCTIONS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

/// Columns a block takes: 64 bytes of f32, one 32-byte sector of bf16.
static constexpr int64_t kColumns = 16;
/// Threads a column's reduced rows are shared among.
static constexpr int64_t kRowThreads = 32;

/// A reduction into one output indexed by its parallel loop dims in order,
/// whose innermost loop dim is parallel, reading inputs through dims and
/// constants.
static bool isColumnReduction(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() == 0)
    return false;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::parallel)
    return false;
  SmallVector<AffineExpr> parallel;
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::parallel)
      parallel.push_back(getAffineDimExpr(dim, generic.getContext()));
  if (!llvm::equal(generic.getIndexingMapsArray().back().getResults(),
                   parallel))
    return false;
  for (AffineMap map : generic.getIndexingMapsArray())
    for (AffineExpr expr : map.getResults())
      if (!isa<AffineDimExpr, AffineConstantExpr>(expr))
        return false;
  // Coalesced only where the inputs' columns are their innermost index: an
  // input read transposed (its rows innermost) is a row reduction's.
  AffineExpr columnDim =
      getAffineDimExpr(iterators.size() - 1, generic.getContext());
  bool readsColumns = false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!llvm::is_contained(map.getResults(), columnDim))
      continue;
    if (map.getResults().back() != columnDim)
      return false;
    readsColumns = true;
  }
  return readsColumns;
}

/// `flat` (below the product of `sizes`) split into indices of `sizes`,
/// row-major.
static SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                                      ArrayRef<Value> sizes) {
  SmallVector<Value> indices(sizes.size());
  for (size_t d = sizes.size(); d-- > 1;) {
    indices[d] = arith::RemUIOp::create(b, loc, flat, sizes[d]);
    flat = arith::DivUIOp::create(b, loc, flat, sizes[d]);
  }
  if (!sizes.empty())
    indices.front() = flat;
  return indices;
}

static Value product(OpBuilder &b, Location loc, ArrayRef<Value> sizes) {
  Value result = arith::ConstantIndexOp::create(b, loc, 1);
  for (Value size : sizes)
    result = b.createOrFold<arith::MulIOp>(loc, result, size);
  return result;
}

static void mapToColumnBlocks(linalg::GenericOp generic,
                              const Combiner &combiner) {
  Value output = generic.getDpsInitOperand(0)->get();
  linalg::FillOp fill = initialFill(generic);
  OpBuilder b(generic);
  Location loc = generic.getLoc();
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  SmallVector<Value> sizes;
  for (Range range : cast<linalg::LinalgOp>(generic.getOperation())
                         .createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  // Loop dims: the outer parallel ones, the reduced ones, the column.
  SmallVector<unsigned> outerDims, reducedDims;
  for (unsigned dim = 0; dim + 1 < iterators.size(); ++dim)
    (iterators[dim] == utils::IteratorType::parallel ? outerDims : reducedDims)
        .push_back(dim);
  auto sizesOf = [&](ArrayRef<unsigned> dims) {
    return llvm::map_to_vector(dims, [&](unsigned d) { return sizes[d]; });
  };
  SmallVector<Value> outerSizes = sizesOf(outerDims);
  SmallVector<Value> reducedSizes = sizesOf(reducedDims);
  Value columns = sizes.back();

  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value width = arith::ConstantIndexOp::create(b, loc, kColumns);
  Value height = arith::ConstantIndexOp::create(b, loc, kRowThreads);
  Value columnBlocks = b.createOrFold<arith::CeilDivUIOp>(loc, columns, width);
  Value blocks = b.createOrFold<arith::MulIOp>(
      loc, columnBlocks, product(b, loc, outerSizes));
  Type accType = generic.getBody()->getArguments().back().getType();
  auto partialsType = MemRefType::get(
      {kRowThreads, kColumns}, accType, AffineMap(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, width, height,
                                      one, /*dynamicSharedMemorySize=*/nullptr,
                                      /*asyncTokenType=*/nullptr,
                                      /*asyncDependencies=*/{},
                                      /*workgroupAttributions=*/{partialsType});
  auto function = generic->getParentOfType<func::FuncOp>();
  launch.setFunctionAttr(FlatSymbolRefAttr::get(
      b.getContext(), (function.getSymName() + "_column_reduction").str()));
  Value partials = launch.getWorkgroupAttributions().front();
  b.setInsertionPointToStart(&launch.getBody().front());
  Value tx = launch.getThreadIds().x;
  Value ty = launch.getThreadIds().y;
  Value block = launch.getBlockIds().x;
  Value column = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, block, columnBlocks), width),
      tx);
  SmallVector<Value> outer = delinearize(
      b, loc, arith::DivUIOp::create(b, loc, block, columnBlocks), outerSizes);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, column, columns);

  // This thread's share of the column: reduced rows ty, ty + kRowThreads, ...
  Value identity = arith::ConstantOp::create(b, loc, combiner.identity);
  auto share = scf::IfOp::create(
      b, loc, inRange,
      [&](OpBuilder &tb, Location tloc) {
        auto strided = scf::ForOp::create(
            tb, tloc, ty, product(tb, tloc, reducedSizes), height,
            ValueRange{identity},
            [&](OpBuilder &nb, Location nloc, Value flat, ValueRange iter) {
              SmallVector<Value> point(sizes.size());
              for (auto [dim, index] : llvm::zip(outerDims, outer))
                point[dim] = index;
              for (auto [dim, index] : llvm::zip(
                       reducedDims, delinearize(nb, nloc, flat, reducedSizes)))
                point[dim] = index;
              point.back() = column;
              scf::YieldOp::create(nb, nloc,
                                   foldElement(nb, nloc, generic, point,
                                               iter.front()));
            });
        scf::YieldOp::create(tb, tloc, strided.getResults());
      },
      [&](OpBuilder &eb, Location eloc) {
        scf::YieldOp::create(eb, eloc, identity);
      });

  // Every thread of the block reaches the barrier; then the column's first
  // thread combines its kRowThreads partial results into the output.
  memref::StoreOp::create(b, loc, share.getResult(0), partials,
                          ValueRange{ty, tx});
  gpu::BarrierOp::create(b, loc);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first = arith::AndIOp::create(
      b, loc, inRange,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, ty, zero));
  scf::IfOp::create(b, loc, first, [&](OpBuilder &tb, Location tloc) {
    auto total = scf::ForOp::create(
        tb, tloc, zero, height, one, ValueRange{identity},
        [&](OpBuilder &nb, Location nloc, Value row, ValueRange iter) {
          Value partial = memref::LoadOp::create(nb, nloc, partials,
                                                 ValueRange{row, tx});
          scf::YieldOp::create(
              nb, nloc, combiner.combine(nb, iter.front(), partial));
        });
    SmallVector<Value> indices = outer;
    indices.push_back(column);
    memref::StoreOp::create(tb, tloc,
                            foldIntoOutput(tb, tloc, combiner, fill, output,
                                           indices, total.getResult(0)),
                            output, indices);
    scf::YieldOp::create(tb, tloc);
  });
  gpu::TerminatorOp::create(b, loc);
  generic.erase();
  if (fill)
    fill.erase();
}

namespace {
struct GpuColumnReductionsPass
    : public fxmlir::impl::GpuColumnReductionsBase<GpuColumnReductionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, Combiner>> reductions;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (!isColumnReduction(generic))
        return;
      if (std::optional<Combiner> combiner = findCombiner(generic))
        reductions.push_back({generic, *combiner});
    });
    for (auto &[generic, combiner] : reductions)
      mapToColumnBlocks(generic, combiner);
  }
};
} // namespace
