//===- GpuReductionsInnermost.cpp - reduction loops inside parallel ones --===//
//
// convert-linalg-to-parallel-loops keeps a linalg.generic's loop order, so
// a reduction over an outer dim (a column sum: a bias or LayerNorm weight
// gradient) became a host loop over the reduced index around one kernel
// launch each, thousands of launches a step. With the reduction loops
// innermost, one kernel computes every output (fxmlir-gpu-row-reductions
// maps a single one to a block per output).
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace fxmlir {
#define GEN_PASS_DEF_GPUREDUCTIONSINNERMOST
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;

namespace {
/// The loop order with the parallel loops first, each group in its order;
/// empty if the reductions are innermost already.
SmallVector<unsigned> parallelFirst(linalg::GenericOp generic) {
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::parallel)
      order.push_back(dim);
  for (auto [dim, iterator] : llvm::enumerate(iterators))
    if (iterator != utils::IteratorType::parallel)
      order.push_back(dim);
  if (llvm::equal(order, llvm::seq<unsigned>(0, iterators.size())))
    return {};
  return order;
}

struct GpuReductionsInnermostPass
    : public fxmlir::impl::GpuReductionsInnermostBase<
          GpuReductionsInnermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (!parallelFirst(generic).empty())
        generics.push_back(generic);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp generic : generics) {
      rewriter.setInsertionPoint(generic);
      if (failed(linalg::interchangeGenericOp(rewriter, generic,
                                              parallelFirst(generic))))
        return signalPassFailure();
    }
  }
};
} // namespace
