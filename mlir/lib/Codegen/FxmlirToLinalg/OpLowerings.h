//===- OpLowerings.h - the fxmlir ops the JIT lowers ------------*- C++ -*-===//
//
// One entry per supported op: a check (with the op's attributes and types,
// can it lower?) and the lowering itself, so that the outline pass takes
// exactly the ops the conversion handles. Entries are keyed by op name, and
// `fxmlir.call` entries by "fxmlir.call:<target>".
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_OPLOWERINGS_H
#define FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_OPLOWERINGS_H

#include "fxmlir/Codegen/FxmlirToLinalg.h"
#include "fxmlir/Support/MLIR.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/StringMap.h"

namespace fxmlir::lowering {

/// The kind of the op, or nothing when this instance cannot lower. Element
/// types and devices are checked before; checks look at the rest.
using CheckFn = std::optional<JitOpKind> (*)(Operation *op);
/// Emits the lowering of `op` at `b`'s insertion point. `operands` are the
/// lowered operands (null for None); the torch element types are those of
/// `op`'s own operands and results. Returns one value per result.
using LowerFn = SmallVector<Value> (*)(ImplicitLocOpBuilder &b, Operation *op,
                                       ValueRange operands);

struct OpLowering {
  CheckFn check;
  LowerFn lower;
};

using LoweringTable = llvm::StringMap<OpLowering>;

void addElementwiseLowerings(LoweringTable &table);
void addReductionLowerings(LoweringTable &table);
void addReshapeLowerings(LoweringTable &table);
void addDataMovementLowerings(LoweringTable &table);
void addLossLowerings(LoweringTable &table);

/// The entry for `op`, or null.
const OpLowering *lookupLowering(Operation *op);

/// The torch element type of a tensor value.
Type torchElementType(Value value);
/// The rank of a ranked tensor value.
int64_t rankOf(Value tensor);

/// The sorted, non-negative dims of a `dim` list attribute of an op on a
/// tensor of `rank`; an absent or empty list means all dims. Nothing when a
/// dim is out of range or repeated.
std::optional<SmallVector<int64_t>>
normalizeDims(std::optional<ArrayRef<int64_t>> dims, int64_t rank);

} // namespace fxmlir::lowering

#endif // FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_OPLOWERINGS_H
