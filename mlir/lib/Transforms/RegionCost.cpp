//===- RegionCost.cpp - whether a JIT region beats eager's kernels --------===//

#include "RegionCost.h"

#include "fxmlir/Codegen/FxmlirToLinalg.h"
#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Support/Dims.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace fxmlir;

/// A kernel call's overhead (dispatch, allocation, loop setup), ~3 us on the
/// CPU, as the bytes a copy moves at ~10 GB/s in that time. One for each
/// eager op and one for the region's call.
static constexpr double kCallBytes = 32 * 1024;
/// A dynamic dim's assumed size: shapes stay comparable within a region.
static constexpr int64_t kDynamicDim = 64;
/// The JIT's row reductions against eager's hand-written kernels, time per
/// byte. Run row by row (fxmlir-fuse-row-loops), a lone layer norm forward
/// moves its bytes at the copy rate, as eager's does: 0.96x eager on
/// [4096, 1024] (benchmarks/bench_jit_cpu.py, one AMD EPYC thread; backward
/// 1.46x, softmax 1.22x/1.41x). The margin keeps such a lone op eager's and
/// takes the reductions with the ops around them, which save passes.
static constexpr double kRowReductionPenalty = 1.3;
/// Other reductions over dim 0 than sums over the rows run unsplit, which
/// costs where the rows are many: above this many bytes read. Below, the
/// calls dominate: a bias gradient's sum over 256 bf16 rows (of 512 to 2048)
/// and its cast ran 1.5-3.1x eager's two kernels as a region, one thread or
/// two (`python -m benchmarks.regions`).
static constexpr double kDim0ReductionPenalty = 1.6;
static constexpr double kUnsplitReductionBytes = 1 << 20;
/// A view that moves the innermost dim costs eager nothing (its elementwise
/// kernels keep their operand's strides) but makes the region write or read
/// across rows: its bytes count this many times more. Measured on the
/// suite's attention inputs (`python -m benchmarks.regions`: a key cache's
/// transpose and scale, [2, 8, 128, 64], 0.63x eager's kernels as a region).
static constexpr double kInnerTransposePenalty = 3;

static double bytesOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return 0;
  double elements = 1;
  for (int64_t dim : type.getShape())
    elements *= ShapedType::isDynamic(dim) ? kDynamicDim : dim;
  Type element = type.getElementType();
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 32;
  return elements * std::max(1u, bits / 8); // torch stores a bool in a byte
}

static double trafficOf(Operation *op) {
  double bytes = 0;
  for (Value operand : op->getOperands())
    bytes += bytesOf(operand);
  for (Value result : op->getResults())
    bytes += bytesOf(result);
  return bytes;
}

/// Whether `op` is a transpose or permute that moves a non-unit innermost
/// dim.
static bool movesInnermostDim(Operation *op) {
  auto source = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!source || source.getRank() < 2)
    return false;
  int64_t rank = source.getRank();
  int64_t inner = rank - 1;
  std::optional<int64_t> moved; // the source dim the result's innermost is
  if (auto transpose = dyn_cast<TransposeIntOp>(op)) {
    std::optional<int64_t> a = normalizeDim(transpose.getDim0(), rank);
    std::optional<int64_t> b = normalizeDim(transpose.getDim1(), rank);
    if (!a || !b)
      return false;
    moved = *a == inner ? *b : (*b == inner ? *a : inner);
  } else if (auto permute = dyn_cast<PermuteOp>(op)) {
    ArrayRef<int64_t> dims = permute.getDims();
    if (static_cast<int64_t>(dims.size()) != rank)
      return false;
    moved = normalizeDim(dims.back(), rank);
  }
  return moved && *moved != inner && source.getDimSize(inner) != 1 &&
         source.getDimSize(*moved) != 1;
}

static double penaltyOf(Operation *op, JitOpKind kind) {
  switch (kind) {
  case JitOpKind::Reduction:
    return kRowReductionPenalty;
  case JitOpKind::ReductionOverDim0:
    // Sums over the rows split as row reductions do (each slice sums its
    // rows); the runtime adds the slices' sums up.
    if (llvm::all_of(op->getResults(), [&](OpResult result) {
          return getRowUse(result, kind) != RowUse::Reduces;
        }))
      return kRowReductionPenalty;
    return bytesOf(op->getOperand(0)) > kUnsplitReductionBytes
               ? kDim0ReductionPenalty
               : 1;
  default:
    return 1;
  }
}

RegionCost fxmlir::estimateRegionCost(ArrayRef<Operation *> region) {
  llvm::SmallPtrSet<Operation *, 16> members(region.begin(), region.end());
  llvm::SetVector<Value> inputs, outputs;
  RegionCost cost;
  cost.region = kCallBytes;
  for (Operation *op : region) {
    std::optional<JitOpKind> kind = getJitOpKind(op);
    // Views and detach are free in eager: metadata only.
    if (!kind || *kind == JitOpKind::Identity) {
      if (kind && movesInnermostDim(op))
        cost.region += kInnerTransposePenalty * bytesOf(op->getResult(0));
      continue;
    }
    double traffic = trafficOf(op);
    cost.eager += traffic + kCallBytes;
    // The region moves the reduction's rows as eager does, only slower.
    cost.region += (penaltyOf(op, *kind) - 1) * traffic;
  }
  for (Operation *op : region) {
    for (Value operand : op->getOperands())
      if (!members.contains(operand.getDefiningOp()))
        inputs.insert(operand);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(user);
          }))
        outputs.insert(result);
  }
  for (Value value : inputs)
    cost.region += bytesOf(value);
  for (Value value : outputs)
    cost.region += bytesOf(value);
  return cost;
}
