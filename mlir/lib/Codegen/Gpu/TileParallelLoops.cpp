//===- TileParallelLoops.cpp - thread blocks along the last dim -----------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/SCF/Transforms/Transforms.h"

namespace fxmlir {
#define GEN_PASS_DEF_TILEPARALLELLOOPS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
struct TileParallelLoopsPass
    : public fxmlir::impl::TileParallelLoopsBase<TileParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp loop) {
      // Like upstream tiling, loops with scf.reduce are left alone.
      if (!loop->getParentOfType<scf::ParallelOp>() &&
          loop.getNumReductions() == 0)
        outermost.push_back(loop);
    });
    for (scf::ParallelOp loop : outermost) {
      SmallVector<int64_t> sizes(loop.getNumLoops(), 1);
      sizes.back() = blockSize;
      scf::tileParallelLoop(loop, sizes, /*noMinMaxBounds=*/true);
    }
  }
};
} // namespace
