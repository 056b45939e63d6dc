//===- FuseSiblingReductions.cpp - reductions sharing an input, CPU -------===//
//
// The CPU lowers each linalg op to its own loop nest, so every reduction of
// a region reads its rows again: a layer norm's backward made five passes
// over [tokens, dim] planes where ATen's kernels make two or three. Merging
// the reductions that share an operand makes one pass of each pair.
//
//===----------------------------------------------------------------------===//

#include "../Linalg/FuseSiblings.h"

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace fxmlir {
#define GEN_PASS_DEF_FUSESIBLINGREDUCTIONS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
struct FuseSiblingReductionsPass
    : public fxmlir::impl::FuseSiblingReductionsBase<
          FuseSiblingReductionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseSiblingReductionsPatterns(patterns, kMaxSiblingOperands);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
