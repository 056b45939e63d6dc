//===- PatternUtils.h - constraints the rewrite patterns share --*- C++ -*-===//
//
// The C++ side of the DRR patterns' constraints: what DRR cannot say itself.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNUTILS_H
#define FXMLIR_TRANSFORMS_PATTERNUTILS_H

#include "fxmlir/Support/MLIR.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace fxmlir {

/// Whether the fused kernels handle `value`: a ranked f32/f16/bf16 tensor on
/// a CPU or CUDA device.
bool isFusibleTensor(Value value);

/// Whether `value` is a fusible tensor (isFusibleTensor) on a CUDA device:
/// where a fusion has a kernel only CUDA makes worth it (GEMM epilogues).
bool isCudaTensor(Value value);

/// Whether `value` is a ranked tensor (of any element type) on the CPU.
bool isCpuTensor(Value value);

/// The type of the packed mask (1 bit per element, ui8) of a tensor.
Type packedMaskType(Value like);

/// The type of the bool keep mask of a tensor: its shape, on its device.
Type boolMaskType(Value like);

/// 1 / (1 - p), the scale of the elements a dropout of rate `p` keeps.
FloatAttr dropoutScale(Builder &builder, FloatAttr p);

/// A new `fxmlir.none` value (an absent optional tensor).
Value createNone(OpBuilder &builder, Location loc);

/// Whether a native_dropout with this `train` attribute (absent = training)
/// and rate `p` drops anything.
bool isActiveDropout(Attribute train, FloatAttr p);

/// Whether a torch Scalar attribute (int, float or bool) equals `value`.
bool isScalar(Attribute scalar, double value);

} // namespace fxmlir

#endif // FXMLIR_TRANSFORMS_PATTERNUTILS_H
