//===- TileParallelLoops.cpp - one flat loop in blocks of threads ---------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace fxmlir {
#define GEN_PASS_DEF_TILEPARALLELLOOPS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

/// The outermost scf.parallel loops without reductions: upstream tiling
/// leaves loops with scf.reduce alone, and so does this pass.
static SmallVector<scf::ParallelOp> outermostLoops(func::FuncOp function) {
  SmallVector<scf::ParallelOp> loops;
  function.walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>() &&
        loop.getNumReductions() == 0)
      loops.push_back(loop);
  });
  return loops;
}

namespace {
struct TileParallelLoopsPass
    : public fxmlir::impl::TileParallelLoopsBase<TileParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    // One dim, the last one fastest: a loop of any rank and sizes maps to
    // blocks along x alone. Tiled as it is, a rank-3 loop put its block's
    // threads on z (at most 64 there: cuLaunchKernel refuses 256) and a
    // last dim of 1 got a block of idle threads per element.
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : outermostLoops(getOperation())) {
      if (loop.getNumLoops() == 1)
        continue;
      std::vector<unsigned> dims(loop.getNumLoops());
      std::iota(dims.begin(), dims.end(), 0u);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {dims});
    }
    for (scf::ParallelOp loop : outermostLoops(getOperation()))
      scf::tileParallelLoop(loop, {blockSize}, /*noMinMaxBounds=*/true);
  }
};
} // namespace
