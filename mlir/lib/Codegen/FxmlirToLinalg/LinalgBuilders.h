//===- LinalgBuilders.h - torch broadcasting and reductions -----*- C++ -*-===//
//
// Builds the linalg.generic ops fxmlir ops lower to: elementwise ops over
// operands broadcast as torch broadcasts (trailing dims aligned, size-1 dims
// stretched), and reductions over a set of dims of such a broadcast space.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_LINALGBUILDERS_H
#define FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_LINALGBUILDERS_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace fxmlir::lowering {

/// Computes one element from the elements of the inputs (storage types).
using ElementFn =
    llvm::function_ref<Value(ImplicitLocOpBuilder &b, ValueRange elements)>;
/// Folds a mapped element into an accumulator.
using CombineFn =
    llvm::function_ref<Value(ImplicitLocOpBuilder &b, Value element,
                             Value accumulator)>;

/// The sizes of the broadcast of `inputs`: a dim is static if any input has
/// it static and not 1; a `?` dim is taken from the first input that has it.
SmallVector<OpFoldResult> broadcastSizes(ImplicitLocOpBuilder &b,
                                         ValueRange inputs);

/// A tensor of `elementType` whose elements are `body` of the broadcast
/// input elements.
Value buildElementwise(ImplicitLocOpBuilder &b, ValueRange inputs,
                       Type elementType, ElementFn body);

/// Reduces `map(inputs)` (an `accType` value per element of the broadcast
/// space) over the sorted `dims` of that space with `combine`, starting from
/// `init`. With `keepDims` the reduced dims stay as size 1.
Value buildReduction(ImplicitLocOpBuilder &b, ValueRange inputs,
                     ArrayRef<int64_t> dims, bool keepDims, Value init,
                     ElementFn map, CombineFn combine);

/// The reassociation that drops the dims of a rank-`rank` space for which
/// `dropped(d)` holds: each joins the group of the kept dim before it (leading
/// ones join the first group). One group per kept dim; none when all drop.
SmallVector<ReassociationIndices>
groupDims(int64_t rank, llvm::function_ref<bool(int64_t)> dropped);

/// `reduced` (the result of a reduction of a rank-`rank` space over `dims`)
/// with the reduced dims put back as size 1.
Value keepReducedDims(ImplicitLocOpBuilder &b, Value reduced,
                      ArrayRef<int64_t> dims, int64_t rank);

/// `kept` (a reduction result with its reduced `dims` as size 1) without
/// those dims: keepReducedDims' inverse.
Value dropReducedDims(ImplicitLocOpBuilder &b, Value kept,
                      ArrayRef<int64_t> dims);

/// The number of elements of `tensor` along `dims`, as a scalar of `type`.
Value countAlong(ImplicitLocOpBuilder &b, Value tensor, ArrayRef<int64_t> dims,
                 Type type);

} // namespace fxmlir::lowering

#endif // FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_LINALGBUILDERS_H
