//===- GpuDeviceBuffers.cpp - host temporaries to device memory -----------===//

#include "fxmlir/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace fxmlir {
#define GEN_PASS_DEF_GPUDEVICEBUFFERS
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
/// Replaces `op` by the async form `build` creates from a fresh token, and
/// waits for its token right away.
template <typename Build>
void replaceWithAsync(IRRewriter &rewriter, Operation *op, Build &&build) {
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  Type token = gpu::AsyncTokenType::get(op->getContext());
  Value start =
      gpu::WaitOp::create(rewriter, loc, token, ValueRange()).getAsyncToken();
  Operation *async = build(token, start);
  gpu::WaitOp::create(rewriter, loc, Type(),
                      ValueRange(async->getResults().back()));
  rewriter.replaceOp(op, async->getResults().drop_back());
}

/// Whether `op` reads or writes memory other than by allocating or freeing
/// (unknown ops might). Ops with regions are judged by their bodies.
bool accessesMemory(Operation *op) {
  if (op->getNumRegions())
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return !isMemoryEffectFree(op);
  return effects.hasEffect<MemoryEffects::Read>() ||
         effects.hasEffect<MemoryEffects::Write>();
}

struct GpuDeviceBuffersPass
    : public fxmlir::impl::GpuDeviceBuffersBase<GpuDeviceBuffersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    WalkResult result = getOperation().walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        replaceWithAsync(rewriter, op, [&](Type token, Value start) {
          return gpu::AllocOp::create(rewriter, op->getLoc(), alloc.getType(),
                                      token, start, alloc.getDynamicSizes(),
                                      alloc.getSymbolOperands());
        });
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        replaceWithAsync(rewriter, op, [&](Type token, Value start) {
          return gpu::DeallocOp::create(rewriter, op->getLoc(), token, start,
                                        dealloc.getMemref());
        });
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        replaceWithAsync(rewriter, op, [&](Type token, Value start) {
          return gpu::MemcpyOp::create(rewriter, op->getLoc(), token, start,
                                       copy.getTarget(), copy.getSource());
        });
      } else if (!isa<gpu::GPUDialect>(op->getDialect()) &&
                 accessesMemory(op)) {
        op->emitOpError("accesses device memory from the host");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
