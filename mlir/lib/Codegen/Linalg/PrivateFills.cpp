//===- PrivateFills.cpp - a fill per op that accumulates into it ----------===//
//
// Two reductions of a region often start from one filled tensor (a layer
// norm backward's two row sums). Bufferized, the second then accumulates
// into a copy of the first's filled buffer: on a GPU a fill kernel and a
// device copy, where a fill of its own folds into its reduction
// (fxmlir-gpu-row-reductions, fxmlir-gpu-column-reductions).
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace fxmlir {
#define GEN_PASS_DEF_PRIVATEFILLS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;

namespace {
struct PrivateFillsPass
    : public fxmlir::impl::PrivateFillsBase<PrivateFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(fill);
    });
    OpBuilder b(&getContext());
    for (linalg::FillOp fill : fills) {
      // The ops writing into the filled tensor, the first of them keeping it.
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill->getResult(0).getUses())
        if (auto op = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
            op && op.isDpsInit(&use))
          inits.push_back(&use);
      if (inits.size() < 2)
        continue;
      // In program order (a use list runs newest first).
      if (!llvm::all_of(inits, [&](OpOperand *init) {
            return init->getOwner()->getBlock() == fill->getBlock();
          }))
        continue;
      llvm::sort(inits, [](OpOperand *a, OpOperand *b) {
        return a->getOwner()->isBeforeInBlock(b->getOwner());
      });
      auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
      for (OpOperand *init : ArrayRef(inits).drop_front()) {
        b.setInsertionPoint(init->getOwner());
        Operation *own = b.clone(*empty);
        auto filled = linalg::FillOp::create(b, fill.getLoc(), fill.getInputs(),
                                             own->getResults());
        init->set(filled.getResult(0));
      }
    }
  }
};
} // namespace
