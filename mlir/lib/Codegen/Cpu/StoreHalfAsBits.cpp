//===- StoreHalfAsBits.cpp - 16-bit floats stored as their bits -----------===//
//
// A bf16 truncation (fxmlir-expand-bf16-conversions) ends in a select of
// integer bits, then a bitcast to bf16 for the store. LLVM's InstCombine
// moves that bitcast above the select, and x86 without AVX512-BF16 has no
// vector bf16 select: the vectorized loop tested and stored each lane on
// its own. Storing the integer bits leaves no 16-bit float value to select.
//
//===----------------------------------------------------------------------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/TypeUtilities.h"

namespace fxmlir {
#define GEN_PASS_DEF_STOREHALFASBITS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
struct StoreHalfAsBitsPass
    : public fxmlir::impl::StoreHalfAsBitsBase<StoreHalfAsBitsPass> {
  void runOnOperation() override {
    getOperation()->walk([](LLVM::StoreOp store) {
      auto cast = store.getValue().getDefiningOp<LLVM::BitcastOp>();
      if (!cast ||
          !isa<Float16Type, BFloat16Type>(getElementTypeOrSelf(cast.getType())) ||
          !getElementTypeOrSelf(cast.getArg().getType()).isInteger(16))
        return;
      store.getValueMutable().assign(cast.getArg());
      if (cast->use_empty())
        cast->erase();
    });
  }
};
} // namespace
