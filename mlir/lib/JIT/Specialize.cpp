//===- Specialize.cpp - a JIT function for one input signature ------------===//
//
// Extracts the function, retypes its arguments, and works out its signature:
// the result dtypes, where each dynamic result dim comes from (by lowering a
// copy to linalg and folding `tensor.dim` of each result down to an argument
// dim), and whether rows can be computed independently.
//
//===----------------------------------------------------------------------===//

#include "Specialize.h"

#include "../Support/Diagnostics.h"

#include "fxmlir/Codegen/FxmlirToLinalg.h"
#include "fxmlir/Codegen/Passes.h"
#include "fxmlir/Dialect/FxmlirDialect.h"
#include "fxmlir/Support/Dims.h"

#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace fxmlir;
using namespace fxmlir::jit;

Type jit::elementType(MLIRContext &context, DType dtype) {
  Builder b(&context);
  switch (dtype) {
  case DType::Bool:
    return b.getI1Type();
  case DType::UInt8:
    return IntegerType::get(&context, 8, IntegerType::Unsigned);
  case DType::Int8:
    return IntegerType::get(&context, 8, IntegerType::Signed);
  case DType::Int16:
    return IntegerType::get(&context, 16, IntegerType::Signed);
  case DType::Int32:
    return IntegerType::get(&context, 32, IntegerType::Signed);
  case DType::Int64:
    return IntegerType::get(&context, 64, IntegerType::Signed);
  case DType::Float16:
    return b.getF16Type();
  case DType::BFloat16:
    return b.getBF16Type();
  case DType::Float32:
    return b.getF32Type();
  case DType::Float64:
    return b.getF64Type();
  }
  llvm_unreachable("unknown dtype");
}

static std::optional<DType> dtypeOf(Type type) {
  for (DType dtype :
       {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32,
        DType::Int64, DType::Float16, DType::BFloat16, DType::Float32,
        DType::Float64})
    if (elementType(*type.getContext(), dtype) == type)
      return dtype;
  return std::nullopt;
}

static std::string str(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static std::vector<int64_t> dimsOf(RankedTensorType type) {
  std::vector<int64_t> dims;
  for (int64_t size : type.getShape())
    dims.push_back(ShapedType::isDynamic(size) ? kDynamic : size);
  return dims;
}

/// The function's inputs as written; only tensors of supported dtypes.
static std::vector<TensorSpec> argumentSpecs(func::FuncOp func) {
  std::vector<TensorSpec> specs;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<DType> dtype =
        tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
    if (!dtype)
      throw Error("argument " + std::to_string(index) + " of @" +
                  func.getSymName().str() + " has type " + str(type) +
                  ", not a tensor of a dtype the JIT supports");
    specs.push_back({*dtype, dimsOf(tensor)});
  }
  return specs;
}

/// Throws Error unless `specs` agree with the arguments of `func` on dtype,
/// rank and every dim static in both.
static void checkFits(func::FuncOp func, const std::vector<TensorSpec> &specs) {
  std::vector<TensorSpec> own = argumentSpecs(func);
  std::string name = "@" + func.getSymName().str();
  if (specs.size() != own.size())
    throw Error(name + " takes " + std::to_string(own.size()) +
                " inputs, got " + std::to_string(specs.size()));
  for (auto [index, spec] : llvm::enumerate(specs)) {
    std::string what = "input " + std::to_string(index) + " of " + name;
    if (spec.dtype != own[index].dtype)
      throw Error(what + " has dtype " + dtypeName(own[index].dtype) +
                  ", got " + dtypeName(spec.dtype));
    if (spec.dims.size() != own[index].dims.size())
      throw Error(what + " has rank " + std::to_string(own[index].dims.size()) +
                  ", got rank " + std::to_string(spec.dims.size()));
    for (auto [dim, size] : llvm::enumerate(spec.dims)) {
      int64_t expected = own[index].dims[dim];
      if (size < kDynamic ||
          (size != kDynamic && expected != kDynamic && size != expected))
        throw Error(what + " has size " + std::to_string(expected) +
                    " in dim " + std::to_string(dim) + ", got " +
                    std::to_string(size));
    }
  }
}

/// Retypes the arguments to `specs`, which must fit them (checkFits).
static void retype(func::FuncOp func, const std::vector<TensorSpec> &specs) {
  checkFits(func, specs);
  Block &body = func.front();
  for (auto [index, spec] : llvm::enumerate(specs)) {
    SmallVector<int64_t> shape;
    for (int64_t size : spec.dims)
      shape.push_back(size == kDynamic ? ShapedType::kDynamic : size);
    BlockArgument arg = body.getArgument(index);
    auto type = cast<RankedTensorType>(arg.getType());
    arg.setType(RankedTensorType::get(shape, type.getElementType(),
                                      type.getEncoding()));
  }
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 func.getResultTypes()));
}

/// The JIT module `text`, parsed; throws Error with the diagnostics.
static OwningOpRef<ModuleOp> parseModule(MLIRContext &context, StringRef text) {
  DiagnosticCollector diagnostics(&context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context), "<jit module>");
  if (!module)
    diagnostics.fail("cannot parse the JIT module");
  return module;
}

/// Function `name` of `module`, defined in one block; throws Error if not.
static func::FuncOp findFunction(ModuleOp module, StringRef name) {
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!func || func.isExternal())
    throw Error("the JIT module has no function @" + name.str());
  if (!func.getBody().hasOneBlock())
    throw Error("@" + name.str() + " has more than one block");
  return func;
}

namespace {
struct RowAnalysis {
  bool splittable = true;
  /// Where the rows run, counted from the last dim (Signature::rowsFromEnd).
  int64_t rowsFromEnd = 0;
  std::vector<bool> rowInputs;
  std::vector<bool> summedResults;
  /// Results the rows do not reach (each slice computes them whole).
  std::vector<bool> wholeResults;
};
} // namespace

static int64_t rankOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

/// Whether `result` (of row use `use`) is a sum over the rows that only the
/// function returns: each slice of rows can return its part for the caller
/// to add up.
static bool isReturnedSum(OpResult result, RowUse use) {
  return use == RowUse::Sums &&
         llvm::all_of(result.getUsers(), [](Operation *user) {
           return isa<func::ReturnOp>(user);
         });
}

/// Where the rows of `func` run: in the body's values of the largest rank
/// `rank`, dim `rowDim`. That is dim 0 (a batch), or for a batch of one,
/// where each of them begins with dims of size 1 ([1, tokens, hidden]), the
/// first dim that is not 1 in one of them. A value of lower rank lines its
/// dims up with theirs from the last, as broadcasts do and the views that
/// add or drop leading 1s (a [tokens, hidden] product viewed as [1, tokens,
/// hidden]).
struct RowsPlace {
  int64_t rank = 0;
  int64_t rowDim = 0;
};

static RowsPlace rowsPlaceOf(func::FuncOp func) {
  Block &body = func.front();
  // Its tensors: a region may hold `fxmlir.none` for an absent argument.
  SmallVector<RankedTensorType> types;
  auto add = [&](ValueRange values) {
    for (Value value : values)
      if (auto type = dyn_cast<RankedTensorType>(value.getType()))
        types.push_back(type);
  };
  add(body.getArguments());
  for (Operation &op : body.without_terminator())
    add(op.getResults());
  RowsPlace place;
  for (RankedTensorType type : types)
    place.rank = std::max(place.rank, type.getRank());
  place.rowDim = place.rank;
  for (RankedTensorType type : types) {
    if (type.getRank() != place.rank)
      continue;
    int64_t first = 0;
    while (first < place.rank && type.getDimSize(first) == 1)
      ++first;
    place.rowDim = std::min(place.rowDim, first);
  }
  return place;
}

/// The dim `attr` (a dim attribute of `op`) names, counted from the end of
/// `op`'s first operand's dims: 0 for the last.
static std::optional<int64_t> dimFromEnd(Operation *op, StringRef attr) {
  auto dim = op->getAttrOfType<IntegerAttr>(attr);
  int64_t rank = rankOf(op->getOperand(0));
  if (!dim || rank == 0)
    return std::nullopt;
  int64_t d = dim.getInt() < 0 ? dim.getInt() + rank : dim.getInt();
  return rank - 1 - d;
}

/// Whether `op` moves elements along its first operand's dim `rowsFromEnd`
/// from the end (Signature::rowsFromEnd: dim rank - rowsFromEnd): slices
/// it, concatenates or places pieces along it, or permutes it elsewhere.
/// The JIT's other lowerings leave each dim where it is.
static bool movesAlongDim(Operation *op, int64_t rowsFromEnd) {
  int64_t fromLast = rowsFromEnd - 1; // as dimFromEnd counts
  int64_t rank = rankOf(op->getOperand(0));
  int64_t dim = rank - rowsFromEnd;
  if (dim < 0)
    return false;
  StringRef name = op->getName().getStringRef();
  if (name == "fxmlir.aten.slice.Tensor" || name == "fxmlir.aten.cat")
    return dimFromEnd(op, "dim").value_or(fromLast) == fromLast;
  if (name == "fxmlir.aten.transpose.int")
    return dimFromEnd(op, "dim0").value_or(fromLast) == fromLast ||
           dimFromEnd(op, "dim1").value_or(fromLast) == fromLast;
  if (name == "fxmlir.aten.permute") {
    auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dims");
    return !dims || static_cast<int64_t>(dims.size()) != rank ||
           normalizeDim(dims.asArrayRef()[dim], rank) != dim;
  }
  if (auto call = dyn_cast<CallOp>(op)) {
    // slice_backward(grad, input_sizes, dim, start, end, step).
    ArrayRef<Attribute> args = call.getArgs().getValue();
    auto at = args.size() > 2 ? dyn_cast<IntegerAttr>(args[2]) : nullptr;
    return !at || normalizeDim(at.getInt(), rank) == dim;
  }
  return false;
}

/// Rows split when everything that depends on the row inputs keeps its rows
/// in place (rowsPlaceOf, lined up from the last dim, with 1s before them),
/// no op moves elements along them, no other value varies along them, and
/// no reduction spans them except sums over the rows that are returned as
/// they are. A result the rows do not reach is computed whole by each slice
/// (GPT-2's additive attention mask, returned beside its first use, made
/// that region one thread's: 0.78x its ATen ops at two threads); the
/// runtime splits only where such results are small. Rows that were dim 0
/// only left a batch of one's [1, 256, 512] tensors one slice, one
/// thread's (LLaMA-style step, 1 x 256 tokens, two threads: JIT regions on
/// up to 10 % slower than off).
static RowAnalysis analyzeRows(func::FuncOp func) {
  Block &body = func.front();
  RowAnalysis analysis;
  RowsPlace place = rowsPlaceOf(func);
  int64_t fromEnd = analysis.rowsFromEnd = place.rank - place.rowDim;
  // A batch of one's rows must lie before the innermost dim, which row
  // reductions span; dim 0 of any rank may be rows (of 1-D values, a sum
  // over them is a reduction over dim 0).
  analysis.splittable =
      place.rowDim == 0 ? place.rank >= 1 : place.rowDim + 2 <= place.rank;
  // Whether `value` has rows: its row dim (the fromEnd-th from its last) is
  // not 1, and the dims before it are 1, so that a slice of rows is a
  // contiguous block.
  auto hasRows = [&](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return false;
    int64_t rowDim = type.getRank() - fromEnd;
    if (rowDim < 0 || type.getDimSize(rowDim) == 1)
      return false;
    for (int64_t d = 0; d < rowDim; ++d)
      if (type.getDimSize(d) != 1)
        return false;
    return true;
  };
  llvm::DenseSet<Value> rowDependent, summed;
  for (BlockArgument arg : body.getArguments()) {
    bool row = analysis.splittable && hasRows(arg);
    analysis.rowInputs.push_back(row);
    if (row)
      rowDependent.insert(arg);
  }
  // Whether `value`, which the rows do not reach, lines up a dim that is
  // not 1 with the rows (in a broadcast with row values).
  auto variesAlongRows = [&](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    int64_t rowDim = type ? type.getRank() - fromEnd : -1;
    return rowDim >= 0 && type.getDimSize(rowDim) != 1;
  };
  for (Operation &op : body.without_terminator()) {
    std::optional<JitOpKind> kind = getJitOpKind(&op);
    // Whatever its operands, such an op reads rows a split would not give.
    if (kind == JitOpKind::ElementwiseOverRows)
      analysis.splittable = false;
    if (llvm::none_of(op.getOperands(), [&](Value operand) {
          return rowDependent.contains(operand);
        }))
      continue;
    bool tensorData = isa<RankedTensorType>(op.getOperand(0).getType());
    if ((tensorData && movesAlongDim(&op, fromEnd)) ||
        llvm::any_of(op.getOperands(), [&](Value operand) {
          return !rowDependent.contains(operand) && variesAlongRows(operand);
        }))
      analysis.splittable = false;
    for (OpResult result : op.getResults()) {
      if (result.use_empty())
        continue;
      // Ops outside a region's lowerings have no kind and keep the rows.
      RowUse use = kind ? getRowUse(result, *kind) : RowUse::Keeps;
      if (use != RowUse::Keeps) {
        if (isReturnedSum(result, use))
          summed.insert(result);
        else
          analysis.splittable = false;
        continue;
      }
      if (!hasRows(result))
        analysis.splittable = false;
      rowDependent.insert(result);
    }
  }
  for (Value returned : body.getTerminator()->getOperands()) {
    analysis.summedResults.push_back(summed.contains(returned));
    analysis.wholeResults.push_back(!rowDependent.contains(returned) &&
                                    !summed.contains(returned));
  }
  return analysis;
}

/// The result dtypes and dims of `func`, each dynamic dim traced back to an
/// argument dim on a copy lowered to linalg.
static std::vector<ResultSpec> inferResults(ModuleOp module,
                                            func::FuncOp func) {
  MLIRContext *ctx = module.getContext();
  DiagnosticCollector diagnostics(ctx);
  std::string name = "@" + func.getSymName().str();
  std::vector<ResultSpec> results;
  for (auto [index, type] : llvm::enumerate(func.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<DType> dtype =
        tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
    if (!dtype)
      throw Error("result " + std::to_string(index) + " of " + name +
                  " has type " + str(type) +
                  ", not a tensor of a dtype the JIT supports");
    results.push_back({*dtype, {}});
  }

  OwningOpRef<ModuleOp> copy = module.clone();
  PassManager lower(ctx);
  lower.addPass(createConvertFxmlirToLinalg());
  lower.addPass(createCanonicalizerPass());
  if (failed(lower.run(*copy)))
    diagnostics.fail("cannot lower " + name + " to linalg");
  auto lowered = copy->lookupSymbol<func::FuncOp>(func.getSymName());
  Operation *ret = lowered.front().getTerminator();
  OpBuilder b(ret);
  SmallVector<std::pair<size_t, int64_t>> dynamicDims;
  SmallVector<Value> sizes;
  for (auto [index, value] : llvm::enumerate(ret->getOperands())) {
    auto type = cast<RankedTensorType>(value.getType());
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      int64_t size = type.getDimSize(dim);
      results[index].dims.push_back({size, -1, -1});
      if (ShapedType::isDynamic(size)) {
        dynamicDims.push_back({index, dim});
        sizes.push_back(tensor::DimOp::create(b, ret->getLoc(), value, dim));
      }
    }
  }
  if (sizes.empty())
    return results;
  // Returning the sizes keeps them alive while they fold.
  ret->insertOperands(ret->getNumOperands(), sizes);
  lowered.setType(FunctionType::get(ctx, lowered.getArgumentTypes(),
                                    ret->getOperandTypes()));
  PassManager resolve(ctx);
  resolve.addPass(memref::createResolveShapedTypeResultDimsPass());
  resolve.addPass(createCanonicalizerPass());
  resolve.addPass(createCSEPass());
  if (failed(resolve.run(*copy)))
    diagnostics.fail("cannot infer the result shapes of " + name);
  ret = lowered.front().getTerminator();
  ValueRange folded = ret->getOperands().take_back(sizes.size());
  for (auto [where, size] : llvm::zip(dynamicDims, folded)) {
    DimSource &source = results[where.first].dims[where.second];
    if (std::optional<int64_t> constant = getConstantIntValue(size)) {
      source.size = *constant;
      continue;
    }
    auto dimOp = size.getDefiningOp<tensor::DimOp>();
    auto arg = dimOp ? dyn_cast<BlockArgument>(dimOp.getSource()) : nullptr;
    std::optional<int64_t> argDim =
        dimOp ? dimOp.getConstantIndex() : std::nullopt;
    if (!arg || !argDim)
      throw Error("cannot infer dim " + std::to_string(where.second) +
                  " of result " + std::to_string(where.first) + " of " +
                  name + " from its inputs");
    source.size = kDynamic;
    source.input = arg.getArgNumber();
    source.dim = *argDim;
  }
  return results;
}

/// Rows split when the analysis allows it, the row dim of every row input
/// is dynamic, and the row dim of every result but the sums is a row
/// input's exactly where the rows reach the result: Signature::isWholeResult
/// tells the whole results apart so.
static bool rowsSplit(const RowAnalysis &rows, const Signature &signature) {
  if (!rows.splittable ||
      llvm::none_of(rows.rowInputs, [](bool row) { return row; }))
    return false;
  for (auto [index, input] : llvm::enumerate(signature.inputs))
    if (rows.rowInputs[index] &&
        input.dims[signature.rowDimIn(input.dims.size())] != kDynamic)
      return false;
  for (auto [index, result] : llvm::enumerate(signature.results)) {
    if (rows.summedResults[index])
      continue;
    int64_t rowDim = signature.rowDimIn(result.dims.size());
    bool rowSized = false;
    if (rowDim >= 0) {
      const DimSource &source = result.dims[rowDim];
      rowSized = source.input >= 0 && rows.rowInputs[source.input] &&
                 source.dim == signature.rowDimIn(
                                   signature.inputs[source.input].dims.size());
    }
    // A whole result sized by the rows would be taken for a row result.
    if (rowSized == rows.wholeResults[index])
      return false;
  }
  return true;
}

/// Whether `op` computes the same for any sizes of its operands' dims but
/// the last: it reads no size from an attribute, and moves no element
/// across those dims.
static bool takesSizesFromOperands(Operation *op) {
  if (isa<NoneOp>(op))
    return true;
  std::optional<JitOpKind> kind = getJitOpKind(op);
  if (!kind || kind == JitOpKind::ElementwiseOverRows)
    return false;
  StringRef name = op->getName().getStringRef();
  if (name == "fxmlir.aten.slice.Tensor" || name == "fxmlir.aten.cat")
    return dimFromEnd(op, "dim") == 0;
  if (name == "fxmlir.aten.transpose.int")
    return dimFromEnd(op, "dim0") != 0 && dimFromEnd(op, "dim1") != 0;
  if (name == "fxmlir.aten.permute") {
    auto dims = op->getAttrOfType<DenseI64ArrayAttr>("dims");
    int64_t rank = rankOf(op->getOperand(0));
    if (!dims || rank == 0)
      return false;
    int64_t last = dims.asArrayRef().back();
    return last == rank - 1 || last == -1;
  }
  // slice_backward places its input by the sizes it names.
  auto target = op->getAttrOfType<StringAttr>("target");
  return !target || target.getValue() != "aten::slice_backward.default";
}

/// `type` with every dim but the last dynamic where it is static and not 1.
static Type generalizedType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0)
    return type;
  SmallVector<int64_t> shape(tensor.getShape());
  for (int64_t &size : llvm::drop_end(shape))
    if (size != 1)
      size = ShapedType::kDynamic;
  return RankedTensorType::get(shape, tensor.getElementType(),
                               tensor.getEncoding());
}

std::optional<GenericFunction>
jit::generalize(MLIRContext &context, StringRef text, StringRef function,
                const std::vector<TensorSpec> &inputs) {
  // Whatever does not parse, fit or generalize is left to specialize(),
  // which says why.
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  try {
    module = parseModule(context, text);
    func = findFunction(*module, function);
    checkFits(func, inputs);
  } catch (const Error &) {
    return std::nullopt;
  }
  if (!llvm::all_of(func.front().without_terminator(), [](Operation &op) {
        return takesSizesFromOperands(&op);
      }))
    return std::nullopt;
  bool changed = false;
  auto widen = [&](Value value) {
    Type type = generalizedType(value.getType());
    changed |= type != value.getType();
    value.setType(type);
  };
  for (BlockArgument arg : func.getArguments())
    widen(arg);
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      widen(result);
  });
  if (!changed)
    return std::nullopt;
  func.setType(FunctionType::get(
      &context, func.front().getArgumentTypes(),
      func.front().getTerminator()->getOperandTypes()));
  if (failed(verify(func)))
    return std::nullopt;
  GenericFunction generic;
  llvm::raw_string_ostream os(generic.text);
  func->print(os);
  generic.inputs = argumentSpecs(func);
  return generic;
}

/// Whether `op` is a slice of a whole dim (start 0, step 1, its result's
/// type its operand's) or the gradient of one (slice_backward placing its
/// gradient in a tensor of the gradient's type).
static bool isWholeSlice(Operation *op) {
  if (op->getNumOperands() != 1 || op->getNumResults() != 1 ||
      op->getOperand(0).getType() != op->getResult(0).getType())
    return false;
  if (auto slice = dyn_cast<SliceTensorOp>(op))
    return slice.getStart().value_or(0) == 0 && slice.getStep() == 1;
  auto call = dyn_cast<CallOp>(op);
  auto target = op->getAttrOfType<StringAttr>("target");
  if (!call || !target || target.getValue() != "aten::slice_backward.default")
    return false;
  // slice_backward(grad, input_sizes, dim, start, end, step).
  ArrayRef<Attribute> args = call.getArgs().getValue();
  auto start = args.size() == 6 ? dyn_cast<IntegerAttr>(args[3]) : nullptr;
  auto step = args.size() == 6 ? dyn_cast<IntegerAttr>(args[5]) : nullptr;
  return start && step && start.getInt() == 0 && step.getInt() == 1;
}

SpecializedFunction jit::specialize(MLIRContext &context, StringRef text,
                                    StringRef function,
                                    const std::vector<TensorSpec> *inputs) {
  OwningOpRef<ModuleOp> parsed = parseModule(context, text);
  func::FuncOp original = findFunction(*parsed, function);

  OwningOpRef<ModuleOp> module = ModuleOp::create(original.getLoc());
  OpBuilder b(module->getBody(), module->getBody()->begin());
  // Private, so that bufferization may drop the results it writes into
  // output arguments.
  auto func = cast<func::FuncOp>(b.clone(*original));
  func.setPrivate();
  // A slice of a whole dim is its operand, and so is the gradient of one:
  // transformers' `hidden_states[:, 0:, :]` (logits_to_keep = 0) would keep
  // a batch of one's rows, which that dim holds, from splitting.
  SmallVector<Operation *> wholeSlices;
  func.walk([&](Operation *op) {
    if (isWholeSlice(op))
      wholeSlices.push_back(op);
  });
  for (Operation *op : wholeSlices) {
    op->getResult(0).replaceAllUsesWith(op->getOperand(0));
    op->erase();
  }
  // Ops nothing reads (a view of a returned sum the outline brought along)
  // neither run nor keep the rows from splitting.
  SmallVector<Operation *> ops;
  for (Operation &op : func.front().without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) // readers first
    if (isOpTriviallyDead(op))
      op->erase();
  for (Operation &op : func.front().without_terminator())
    if (!isa<NoneOp>(op) && !getJitOpKind(&op))
      throw Error("@" + function.str() + " holds an op the JIT cannot lower: " +
                  op.getName().getStringRef().str());

  std::vector<TensorSpec> specs = argumentSpecs(func);
  RowAnalysis rows = analyzeRows(func);
  if (inputs) {
    specs = *inputs;
  } else if (rows.splittable) {
    for (auto [index, spec] : llvm::enumerate(specs))
      if (rows.rowInputs[index])
        spec.dims[spec.dims.size() - rows.rowsFromEnd] = kDynamic;
  }
  retype(func, specs);

  Signature signature;
  signature.inputs = specs;
  signature.results = inferResults(*module, func);
  signature.rowInputs = rows.rowInputs;
  signature.rowsFromEnd = rows.rowsFromEnd;
  signature.rowsSplittable = rowsSplit(rows, signature);
  if (signature.rowsSplittable)
    signature.summedResults = rows.summedResults;
  else
    signature.summedResults.assign(signature.results.size(), false);
  return {std::move(module), std::move(signature)};
}
