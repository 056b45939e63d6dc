//===- StridedCopiesToLinalg.cpp - copies between slices as loops ---------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace fxmlir {
#define GEN_PASS_DEF_STRIDEDCOPIESTOLINALG
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
struct StridedCopiesToLinalgPass
    : public fxmlir::impl::StridedCopiesToLinalgBase<
          StridedCopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> strided;
    getOperation().walk([&](memref::CopyOp copy) {
      auto contiguous = [](Value buffer) {
        auto type = dyn_cast<MemRefType>(buffer.getType());
        return type && type.getLayout().isIdentity();
      };
      if (!contiguous(copy.getSource()) || !contiguous(copy.getTarget()))
        strided.push_back(copy);
    });
    for (memref::CopyOp copy : strided) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
