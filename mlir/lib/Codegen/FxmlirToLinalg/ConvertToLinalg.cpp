//===- ConvertToLinalg.cpp - JIT functions from fxmlir to linalg ----------===//
//
// Rewrites each function op by op, in order: every lowering builds its
// result from the already lowered operands, so shapes follow the function's
// (possibly re-specialized) argument types rather than the types the graph
// recorded.
//
//===----------------------------------------------------------------------===//

#include "OpLowerings.h"
#include "ScalarMath.h"

#include "fxmlir/Codegen/Passes.h"
#include "fxmlir/Dialect/FxmlirDialect.h"

#include "fxmlir/Support/Dims.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallString.h"

namespace fxmlir {
#define GEN_PASS_DEF_CONVERTFXMLIRTOLINALG
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::lowering;

const OpLowering *lowering::lookupLowering(Operation *op) {
  static const LoweringTable table = [] {
    LoweringTable entries;
    addElementwiseLowerings(entries);
    addReductionLowerings(entries);
    addReshapeLowerings(entries);
    addDataMovementLowerings(entries);
    addLossLowerings(entries);
    return entries;
  }();
  auto found = table.end();
  if (auto call = dyn_cast<CallOp>(op)) {
    llvm::SmallString<64> key("fxmlir.call:");
    key += call.getTarget();
    found = table.find(key);
  } else {
    found = table.find(op->getName().getStringRef());
  }
  return found == table.end() ? nullptr : &found->second;
}

Type lowering::torchElementType(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType();
}

int64_t lowering::rankOf(Value tensor) {
  return cast<RankedTensorType>(tensor.getType()).getRank();
}

std::optional<SmallVector<int64_t>>
lowering::normalizeDims(std::optional<ArrayRef<int64_t>> dims, int64_t rank) {
  if (!dims || dims->empty())
    return llvm::to_vector(llvm::seq<int64_t>(0, rank));
  SmallVector<int64_t> normalized;
  for (int64_t dim : *dims) {
    std::optional<int64_t> normalizedDim = normalizeDim(dim, rank);
    if (!normalizedDim)
      return std::nullopt;
    normalized.push_back(*normalizedDim);
  }
  llvm::sort(normalized);
  if (std::adjacent_find(normalized.begin(), normalized.end()) !=
      normalized.end())
    return std::nullopt;
  return normalized;
}

std::optional<JitOpKind> fxmlir::getJitOpKind(Operation *op) {
  const OpLowering *lowering = lookupLowering(op);
  if (!lowering || op->getNumResults() == 0)
    return std::nullopt;
  // Every tensor has a supported element type and lives on the same CPU or
  // CUDA device; None only fills optional operands. f64 is CPU only: its
  // math would need libdevice on GPUs.
  DeviceAttr device;
  auto supported = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !isSupportedElementType(tensor.getElementType()))
      return false;
    DeviceAttr own = getDevice(tensor);
    if (!own || (own.getType() != "cpu" && own.getType() != "cuda") ||
        (device && own != device) ||
        (own.getType() == "cuda" && tensor.getElementType().isF64()))
      return false;
    device = own;
    return true;
  };
  for (Value operand : op->getOperands())
    if (!isa<NoneType>(operand.getType()) && !supported(operand.getType()))
      return std::nullopt;
  if (!llvm::all_of(op->getResultTypes(), supported))
    return std::nullopt;
  return lowering->check(op);
}

/// Builtin tensors without device encoding, with signless elements.
static Type loweredType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return type;
  return RankedTensorType::get(tensor.getShape(),
                               storageType(tensor.getElementType()));
}

static LogicalResult lowerFunction(func::FuncOp func) {
  if (func.isExternal())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("has more than one block; JIT functions have one");
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator())
    if (!isa<NoneOp>(op) && !getJitOpKind(&op))
      return op.emitOpError("is not supported by the JIT lowering");

  // The arguments change type now; the old ops, which read torch types from
  // their operands, see them through casts until they are erased.
  MLIRContext *ctx = func.getContext();
  OpBuilder entry = OpBuilder::atBlockBegin(&body);
  IRMapping mapping;
  SmallVector<Operation *> replaced;
  for (BlockArgument arg : body.getArguments()) {
    Type original = arg.getType();
    arg.setType(loweredType(original));
    auto cast = UnrealizedConversionCastOp::create(entry, func.getLoc(),
                                                   original, Value(arg));
    arg.replaceAllUsesExcept(cast.getResult(0), cast);
    mapping.map(cast.getResult(0), arg);
    replaced.push_back(cast);
  }

  ImplicitLocOpBuilder b(func.getLoc(), ctx);
  for (Operation &op : body.without_terminator()) {
    if (isa<UnrealizedConversionCastOp>(op))
      continue;
    replaced.push_back(&op);
    if (isa<NoneOp>(op))
      continue;
    b.setInsertionPoint(&op);
    b.setLoc(op.getLoc());
    SmallVector<Value> operands;
    for (Value operand : op.getOperands())
      operands.push_back(isa<NoneType>(operand.getType())
                             ? Value()
                             : mapping.lookupOrDefault(operand));
    mapping.map(op.getResults(), lookupLowering(&op)->lower(b, &op, operands));
  }
  Operation *terminator = body.getTerminator();
  for (OpOperand &operand : terminator->getOpOperands())
    operand.set(mapping.lookupOrDefault(operand.get()));
  for (Operation *op : llvm::reverse(replaced)) {
    op->dropAllUses();
    op->erase();
  }
  func.setType(FunctionType::get(ctx, body.getArgumentTypes(),
                                 terminator->getOperandTypes()));
  return success();
}

namespace {
struct ConvertFxmlirToLinalgPass
    : public fxmlir::impl::ConvertFxmlirToLinalgBase<
          ConvertFxmlirToLinalgPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(lowerFunction(func)))
        return signalPassFailure();
  }
};
} // namespace
