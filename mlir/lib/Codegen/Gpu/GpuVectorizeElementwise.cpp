//===- GpuVectorizeElementwise.cpp - 16-byte accesses, several per thread -===//
//
// An elementwise linalg.generic on buffers becomes a gpu.launch in which each
// thread computes `width` consecutive elements of the last dim, reading and
// writing the contiguous operands with one aligned vector access each when
// the kernel finds the last dim divisible and the pointers aligned, and with
// a scalar loop otherwise. See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "LoopIndices.h"

#include "fxmlir/Codegen/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace fxmlir {
#define GEN_PASS_DEF_GPUVECTORIZEELEMENTWISE
#include "fxmlir/Codegen/Passes.h.inc"
} // namespace fxmlir

using namespace mlir;
using namespace fxmlir;

namespace {
/// How a thread reads or writes an operand along the last loop dim.
enum class Access {
  /// Does not depend on the last dim: one scalar access per thread.
  Broadcast,
  /// Contiguous along it: one vector access on the vector path.
  Vector,
  /// Otherwise (strided layout, transposed, i1): element by element.
  Element,
};

/// The bytes in memory of an element of `type` when vector accesses may
/// use it (vectors of i1 are bit-packed in LLVM, unlike memrefs of i1).
std::optional<int64_t> vectorElementBytes(Type type) {
  if (!type.isIntOrFloat())
    return std::nullopt;
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits < 8 || !llvm::isPowerOf2_32(bits))
    return std::nullopt;
  return bits / 8;
}

Access accessOf(OpOperand &operand, AffineMap map, unsigned lastDim) {
  if (!map.isFunctionOfDim(lastDim))
    return Access::Broadcast;
  auto type = cast<MemRefType>(operand.get().getType());
  bool contiguous =
      type.getLayout().isIdentity() &&
      map.getResult(map.getNumResults() - 1) ==
          getAffineDimExpr(lastDim, map.getContext()) &&
      llvm::count_if(map.getResults(), [&](AffineExpr expr) {
        return expr.isFunctionOfDim(lastDim);
      }) == 1 &&
      vectorElementBytes(type.getElementType());
  return contiguous ? Access::Vector : Access::Element;
}

/// Elementwise: all loops parallel, operands on buffers indexed by loop dims
/// and constants, a body without linalg.index.
bool isElementwise(linalg::GenericOp generic) {
  if (!generic.hasPureBufferSemantics() || generic.getNumLoops() == 0 ||
      generic.getNumReductionLoops() != 0)
    return false;
  for (AffineMap map : generic.getIndexingMapsArray())
    for (AffineExpr expr : map.getResults())
      if (!isa<AffineDimExpr, AffineConstantExpr>(expr))
        return false;
  return generic.getBody()->getOps<linalg::IndexOp>().empty();
}

class Vectorizer {
public:
  Vectorizer(linalg::GenericOp generic, int64_t width)
      : generic(generic), maps(generic.getIndexingMapsArray()),
        lastDim(generic.getNumLoops() - 1), width(width) {
    for (OpOperand &operand : generic->getOpOperands())
      accesses.push_back(
          accessOf(operand, maps[operand.getOperandNumber()], lastDim));
  }

  /// Replaces the generic by its gpu.launch.
  void rewrite(int64_t blockSize, StringRef kernelName);

private:
  /// Whether the thread's operands take the vector path: the last dim a
  /// multiple of `width`, every vector operand's pointer aligned.
  Value vectorPathTaken(OpBuilder &b, Location loc, Value lastSize);
  /// Clones the body for one element, its block arguments bound to
  /// `arguments` (null for those it does not read); returns the yielded
  /// values.
  SmallVector<Value> cloneBody(OpBuilder &b, ArrayRef<Value> arguments);
  /// The vector path: vector loads and stores, the body per element.
  void emitVectorPath(OpBuilder &b, Location loc, ArrayRef<Value> loops);
  /// The scalar path: the thread's elements that exist, one at a time.
  void emitScalarPath(OpBuilder &b, Location loc, ArrayRef<Value> loops,
                      Value lastSize);
  bool isRead(OpOperand &operand) {
    return generic.payloadUsesValueFromOperand(&operand);
  }
  int64_t alignment(OpOperand &operand) {
    auto type = cast<MemRefType>(operand.get().getType());
    return width * *vectorElementBytes(type.getElementType());
  }

  linalg::GenericOp generic;
  SmallVector<AffineMap> maps;
  unsigned lastDim;
  int64_t width;
  SmallVector<Access> accesses;
};
} // namespace

Value Vectorizer::vectorPathTaken(OpBuilder &b, Location loc, Value lastSize) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value remainder = arith::RemUIOp::create(
      b, loc, lastSize, arith::ConstantIndexOp::create(b, loc, width));
  Value taken = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      remainder, zero);
  for (OpOperand &operand : generic->getOpOperands()) {
    if (accesses[operand.getOperandNumber()] != Access::Vector)
      continue;
    Value pointer = memref::ExtractAlignedPointerAsIndexOp::create(
        b, loc, operand.get());
    Value misalignment = arith::RemUIOp::create(
        b, loc, pointer,
        arith::ConstantIndexOp::create(b, loc, alignment(operand)));
    Value aligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          misalignment, zero);
    taken = arith::AndIOp::create(b, loc, taken, aligned);
  }
  return taken;
}

SmallVector<Value> Vectorizer::cloneBody(OpBuilder &b,
                                         ArrayRef<Value> arguments) {
  Block *body = generic.getBody();
  IRMapping mapping;
  for (auto [argument, value] : llvm::zip(body->getArguments(), arguments))
    if (value)
      mapping.map(argument, value);
  for (Operation &op : body->without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> results;
  for (Value yielded : body->getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(yielded));
  return results;
}

void Vectorizer::emitVectorPath(OpBuilder &b, Location loc,
                                ArrayRef<Value> loops) {
  // Per operand: its vector or broadcast value, or its elements' indices.
  unsigned numOperands = generic->getNumOperands();
  SmallVector<Value> whole(numOperands);
  for (OpOperand &operand : generic->getOpOperands()) {
    unsigned index = operand.getOperandNumber();
    if (!isRead(operand) || accesses[index] == Access::Element)
      continue;
    SmallVector<Value> indices = indicesOf(b, loc, maps[index], loops);
    Type element = cast<MemRefType>(operand.get().getType()).getElementType();
    if (accesses[index] == Access::Broadcast)
      whole[index] = memref::LoadOp::create(b, loc, operand.get(), indices);
    else
      whole[index] = vector::LoadOp::create(
          b, loc, VectorType::get({width}, element), operand.get(), indices,
          /*nontemporal=*/false, llvm::MaybeAlign(alignment(operand)));
  }
  unsigned numInputs = generic.getNumDpsInputs();
  SmallVector<SmallVector<Value>> results(generic.getNumDpsInits());
  for (int64_t lane = 0; lane < width; ++lane) {
    SmallVector<Value> point(loops);
    point[lastDim] = arith::AddIOp::create(
        b, loc, loops[lastDim], arith::ConstantIndexOp::create(b, loc, lane));
    SmallVector<Value> arguments(numOperands);
    for (OpOperand &operand : generic->getOpOperands()) {
      unsigned index = operand.getOperandNumber();
      if (!isRead(operand))
        continue;
      if (accesses[index] == Access::Broadcast)
        arguments[index] = whole[index];
      else if (accesses[index] == Access::Vector)
        arguments[index] =
            vector::ExtractOp::create(b, loc, whole[index], lane);
      else
        arguments[index] = memref::LoadOp::create(
            b, loc, operand.get(), indicesOf(b, loc, maps[index], point));
    }
    SmallVector<Value> yielded = cloneBody(b, arguments);
    for (auto [output, value] : llvm::enumerate(yielded)) {
      unsigned index = numInputs + output;
      if (accesses[index] == Access::Vector)
        results[output].push_back(value);
      else
        memref::StoreOp::create(b, loc, value, generic->getOperand(index),
                                indicesOf(b, loc, maps[index], point));
    }
  }
  for (auto [output, values] : llvm::enumerate(results)) {
    if (values.empty())
      continue;
    OpOperand &operand = generic->getOpOperand(numInputs + output);
    Value packed = vector::FromElementsOp::create(
        b, loc, VectorType::get({width}, values.front().getType()), values);
    vector::StoreOp::create(
        b, loc, packed, operand.get(),
        indicesOf(b, loc, maps[operand.getOperandNumber()], loops),
        /*nontemporal=*/false, llvm::MaybeAlign(alignment(operand)));
  }
}

void Vectorizer::emitScalarPath(OpBuilder &b, Location loc,
                                ArrayRef<Value> loops, Value lastSize) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value left = arith::SubIOp::create(b, loc, lastSize, loops[lastDim]);
  Value count = arith::MinUIOp::create(
      b, loc, left, arith::ConstantIndexOp::create(b, loc, width));
  scf::ForOp::create(
      b, loc, zero, count, one, ValueRange(),
      [&](OpBuilder &nb, Location nloc, Value lane, ValueRange) {
        SmallVector<Value> point(loops);
        point[lastDim] = arith::AddIOp::create(nb, nloc, loops[lastDim], lane);
        SmallVector<Value> arguments(generic->getNumOperands());
        for (OpOperand &operand : generic->getOpOperands()) {
          unsigned index = operand.getOperandNumber();
          if (isRead(operand))
            arguments[index] = memref::LoadOp::create(
                nb, nloc, operand.get(),
                indicesOf(nb, nloc, maps[index], point));
        }
        SmallVector<Value> yielded = cloneBody(nb, arguments);
        for (auto [output, value] : llvm::enumerate(yielded)) {
          unsigned index = generic.getNumDpsInputs() + output;
          memref::StoreOp::create(nb, nloc, value, generic->getOperand(index),
                                  indicesOf(nb, nloc, maps[index], point));
        }
        scf::YieldOp::create(nb, nloc);
      });
}

void Vectorizer::rewrite(int64_t blockSize, StringRef kernelName) {
  OpBuilder b(generic);
  Location loc = generic.getLoc();
  SmallVector<Value> sizes;
  auto linalgOp = cast<linalg::LinalgOp>(generic.getOperation());
  for (Range range : linalgOp.createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value widthValue = arith::ConstantIndexOp::create(b, loc, width);
  Value threads = arith::ConstantIndexOp::create(b, loc, blockSize);
  // A thread per `width` elements of the last dim (the last one partial),
  // numbered row-major over the other dims.
  Value lastSize = sizes[lastDim];
  Value groups = arith::CeilDivUIOp::create(b, loc, lastSize, widthValue);
  Value total = groups;
  for (Value size : ArrayRef(sizes).drop_back())
    total = arith::MulIOp::create(b, loc, total, size);
  Value blocks = arith::CeilDivUIOp::create(b, loc, total, threads);
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one, one);
  launch.setFunctionAttr(FlatSymbolRefAttr::get(b.getContext(), kernelName));
  b.setInsertionPointToStart(&launch.getBody().front());
  Value thread = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  Value inside =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, thread, total);
  scf::IfOp::create(b, loc, inside, [&](OpBuilder &tb, Location tloc) {
    SmallVector<Value> loops(sizes.size());
    loops[lastDim] = arith::MulIOp::create(
        tb, tloc, arith::RemUIOp::create(tb, tloc, thread, groups), widthValue);
    Value rest = arith::DivUIOp::create(tb, tloc, thread, groups);
    for (unsigned d = lastDim; d-- > 0;) {
      loops[d] = arith::RemUIOp::create(tb, tloc, rest, sizes[d]);
      rest = arith::DivUIOp::create(tb, tloc, rest, sizes[d]);
    }
    scf::IfOp::create(
        tb, tloc, vectorPathTaken(tb, tloc, lastSize),
        [&](OpBuilder &vb, Location vloc) {
          emitVectorPath(vb, vloc, loops);
          scf::YieldOp::create(vb, vloc);
        },
        [&](OpBuilder &sb, Location sloc) {
          emitScalarPath(sb, sloc, loops, lastSize);
          scf::YieldOp::create(sb, sloc);
        });
    scf::YieldOp::create(tb, tloc);
  });
  gpu::TerminatorOp::create(b, loc);
  generic.erase();
}

namespace {
struct GpuVectorizeElementwisePass
    : public fxmlir::impl::GpuVectorizeElementwiseBase<
          GpuVectorizeElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::GenericOp, int64_t>> elementwise;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (!isElementwise(generic))
        return;
      // 16 bytes of the widest element accessed contiguously; nothing to
      // gain where no operand is.
      int64_t widest = 0;
      unsigned lastDim = generic.getNumLoops() - 1;
      for (OpOperand &operand : generic->getOpOperands()) {
        AffineMap map = generic.getMatchingIndexingMap(&operand);
        if (accessOf(operand, map, lastDim) == Access::Vector)
          widest = std::max(widest, *vectorElementBytes(getElementTypeOrSelf(
                                        operand.get().getType())));
      }
      if (!widest)
        return;
      // A static last dim that the width does not divide never takes the
      // vector path: left to the one-element-per-thread mapping.
      int64_t width = 16 / widest;
      int64_t lastSize = generic.getStaticLoopRanges().back();
      if (ShapedType::isDynamic(lastSize) || lastSize % width == 0)
        elementwise.push_back({generic, width});
    });
    std::string kernelName =
        (getOperation().getSymName() + "_elementwise").str();
    for (auto [generic, width] : elementwise)
      Vectorizer(generic, width).rewrite(blockSize, kernelName);
  }
};
} // namespace
