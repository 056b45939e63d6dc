//===- EagerRandom.cpp - fused random ops draw eager's random numbers -----===//
//
// Sets `eager_random` on every op that has the attribute (the fused ops that
// draw random numbers: python/fxmlir/fused_ops.py gives each such op the
// argument), so that their kernels draw eager's dropout masks from torch's
// generator. The fusion passes create those ops; this one runs after them.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace fxmlir {
#define GEN_PASS_DEF_EAGERRANDOM
#include "fxmlir/Transforms/Passes.h.inc"

namespace {
constexpr llvm::StringLiteral kEagerRandom = "eager_random";

struct EagerRandomPass : public impl::EagerRandomBase<EagerRandomPass> {
  void runOnOperation() override {
    BoolAttr on = BoolAttr::get(&getContext(), true);
    getOperation()->walk([&](Operation *op) {
      std::optional<RegisteredOperationName> info = op->getRegisteredInfo();
      if (!info)
        return;
      auto names = info->getAttributeNames();
      const StringAttr *name = llvm::find_if(
          names, [](StringAttr n) { return n.getValue() == kEagerRandom; });
      if (name != names.end())
        op->setInherentAttr(*name, on);
    });
  }
};
} // namespace
} // namespace fxmlir
