//===- ScalarMath.h - torch scalar semantics in arith/math ------*- C++ -*-===//
//
// Element-level helpers for the bodies of the linalg ops fxmlir lowers to.
// "Torch types" are fxmlir element types, which keep signedness (si64, ui8,
// i1 for bool); the tensors the lowering builds hold their signless storage
// types, and f16/bf16 values are computed in f32, as torch's kernels do.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_SCALARMATH_H
#define FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_SCALARMATH_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace fxmlir::lowering {

/// Whether the JIT handles tensors of this torch element type.
bool isSupportedElementType(Type torchType);
/// The signless type tensors of `torchType` are stored as.
Type storageType(Type torchType);
/// The type math on `torchType` runs in: f32 for f16/bf16, else storage.
Type computeType(Type torchType);

/// Converts `value` (stored as `from`) to torch type `to` as torch casts do:
/// rounding float conversions, truncation toward zero to integers, nonzero
/// to bool.
Value castTo(ImplicitLocOpBuilder &b, Value value, Type from, Type to);
/// Casts to the op's common torch type `common`, then widens to its compute
/// type: the operand as torch's kernel sees it.
Value toCompute(ImplicitLocOpBuilder &b, Value value, Type from, Type common);
/// Rounds a value of computeType(torchType) to its storage type.
Value fromCompute(ImplicitLocOpBuilder &b, Value value, Type torchType);

/// A constant of (scalar) type `type`.
Value constant(ImplicitLocOpBuilder &b, Type type, double value);
/// A torch Scalar attribute (integer, float or bool) as a value of `type`.
Value constant(ImplicitLocOpBuilder &b, Type type, Attribute scalar);

// Arithmetic on float or signless integer values of one type. Integer
// division and transcendental functions are float only.
Value add(ImplicitLocOpBuilder &b, Value x, Value y);
Value sub(ImplicitLocOpBuilder &b, Value x, Value y);
Value mul(ImplicitLocOpBuilder &b, Value x, Value y);
Value neg(ImplicitLocOpBuilder &b, Value x);
Value maximum(ImplicitLocOpBuilder &b, Value x, Value y);
/// 1 / (1 + exp(-x)).
Value sigmoid(ImplicitLocOpBuilder &b, Value x);
/// x^y with C's `pow` special cases, torch's definition for floats: signed
/// results for negative bases with odd integral exponents, NaN for finite
/// negative bases with non-integral ones, x^0 = 1^y = 1, 0^-y = inf.
Value pow(ImplicitLocOpBuilder &b, Value x, Value y);

/// Torch's comparison predicates, in the order of `compare`'s switch.
enum class Comparison { Eq, Ne, Lt, Le, Gt, Ge };
/// Compares as torch does: ordered float predicates except `ne`, signed or
/// unsigned integers per `torchType`.
Value compare(ImplicitLocOpBuilder &b, Comparison kind, Value x, Value y,
              Type torchType);

} // namespace fxmlir::lowering

#endif // FXMLIR_LIB_CODEGEN_FXMLIRTOLINALG_SCALARMATH_H
