//===- FxmlirDialect.h - the fxmlir dialect ---------------------*- C++ -*-===//
//
// Declares the dialect, its attributes, the hand-written ops and the ops
// generated from ATen schemas.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_DIALECT_FXMLIRDIALECT_H
#define FXMLIR_DIALECT_FXMLIRDIALECT_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TensorEncoding.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fxmlir/Dialect/FxmlirTraits.h"

#include "fxmlir/Dialect/FxmlirDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fxmlir/Dialect/FxmlirAttrs.h.inc"

#define GET_OP_CLASSES
#include "fxmlir/Dialect/FxmlirOps.h.inc"

#define GET_OP_CLASSES
#include "fxmlir/Dialect/AtenOps.h.inc"

#define GET_OP_CLASSES
#include "fxmlir/Dialect/FusedOps.h.inc"

namespace fxmlir {
/// The device of a tensor type (its encoding), or null when it has none.
DeviceAttr getDevice(Type type);

/// Whether `copy` changes at most its input's element type: its result stays
/// on the input's device, strided and unpinned, in the input's strides or,
/// with `orContiguous`, made contiguous (non_blocking changes nothing on one
/// device).
bool isPlainCopy(UnderscoreToCopyOp copy, bool orContiguous = false);

/// Whether `copy` is a plain copy from one floating-point dtype to another:
/// autocast's casts.
bool isFloatCast(UnderscoreToCopyOp copy);

//===----------------------------------------------------------------------===//
// Verifier hooks of the fused op families (called by the generated verify()
// of each op in FusedOps.td)
//===----------------------------------------------------------------------===//

/// A tensor of a bias op other than x and bias, which has x's shape: an
/// operand (grad, mask) or a result; `isBool` when it holds torch.bool.
struct ShapedLikeX {
  StringRef name;
  Value value;
  bool isBool;
};

/// Bias family: `bias` is 1-D and matches dim `axis` of `x`, with x's
/// element type and device; `others` are shaped like x, with x's element
/// type unless bool.
LogicalResult verifyBiasOp(Operation *op, Value x, Value bias, int64_t axis,
                           ArrayRef<ShapedLikeX> others);

/// Mask family: a bool `result` shaped like `like`, kept with probability
/// 1 - p for p in [0, 1).
LogicalResult verifyMaskOp(Operation *op, Value like, Value result,
                           const APFloat &p);

/// Dropout family: x, bias, axis as for a bias op; `residual` (a tensor or
/// none) and `y` shaped like x with its element type; `mask` bool shaped
/// like x, or with `packed` a 1-D ui8 tensor of ceil(numel / 8) bytes.
LogicalResult verifyDropoutOp(Operation *op, Value x, Value bias, int64_t axis,
                              Value residual, Value y, Value mask,
                              const APFloat &p, bool packed);

/// cast_tensors: as many results as tensors, result i shaped like tensor i,
/// on its device, of element type `dtype`.
LogicalResult verifyCastsOp(Operation *op, ValueRange tensors,
                            ValueRange results, Type dtype);

/// Packed-mask family: `mask` is 1-D ui8 of ceil(numel(grad) / 8) bytes,
/// `result` has grad's type.
LogicalResult verifyPackedMaskOp(Operation *op, Value grad, Value mask,
                                 Value result);

/// A tensor of a linear-family op and its dims: "*" stands for x's leading
/// dims, letters for one dim each (K: x's last, N: the output features).
struct LinearDims {
  StringRef name;
  Value value;
  StringRef dims;
};

/// Linear family: every tensor has the rank and sizes its dims name, the
/// same name meaning the same size; all are floating point of one element
/// type and on one device.
LogicalResult verifyLinearOp(Operation *op, ArrayRef<LinearDims> tensors);

/// Linear-loss family: x [..., K] and weight [N, K] floating point of one
/// element type; bias [N], logits and gradLogits [..., N] (logits also
/// [0]: not returned) of that type where given (not none, not null);
/// integer target [M] and float32 lse [M] for the M rows of x; all on one
/// device.
LogicalResult verifyLinearLossOp(Operation *op, Value x, Value weight,
                                 Value bias, Value target, Value logits,
                                 Value gradLogits, Value lse);

/// Embedding-gradient family: floating-point grad [..., D], integer indices
/// of grad's leading dims, result [numWeights, D] of grad's element type;
/// all on one device.
LogicalResult verifyEmbeddingGradOp(Operation *op, Value grad, Value indices,
                                    int64_t numWeights, Value result);

/// A string attribute that takes one of `accepted` (schema.STR_ENUMS).
LogicalResult verifyStrEnum(Operation *op, StringRef name, StringRef value,
                            ArrayRef<StringRef> accepted);
} // namespace fxmlir

#endif // FXMLIR_DIALECT_FXMLIRDIALECT_H
