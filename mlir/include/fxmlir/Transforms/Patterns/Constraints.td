//===- Constraints.td - DRR constraints shared by patterns -*- tablegen -*-===//
//
// What DRR cannot say itself is C++ in fxmlir/Transforms/PatternUtils.h.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD

include "mlir/IR/PatternBase.td"

def HasOneUse : Constraint<CPred<"$0.hasOneUse()">, "has one use">;
def FusibleTensor : Constraint<CPred<"::mlir::fxmlir::isFusibleTensor($0)">,
                               "f32/f16/bf16 tensor on CPU or CUDA">;
def ActiveDropout : Constraint<CPred<"::mlir::fxmlir::isActiveDropout($0, $1)">,
                               "dropout in training mode with p > 0">;
def CudaTensor : Constraint<CPred<"::mlir::fxmlir::isCudaTensor($0)">,
                            "f32/f16/bf16 tensor on CUDA">;
def DropoutScale : NativeCodeCall<"::mlir::fxmlir::dropoutScale($_builder, $0)">;
def IsOne : Constraint<CPred<"::mlir::fxmlir::isScalar($0, 1)">, "is 1">;
def SameType : Constraint<CPred<"$0.getType() == $1.getType()">,
                          "has the same type">;
def PackedMaskType
    : NativeCodeCall<"::mlir::fxmlir::packedMaskType($0)">;
def NoneValue : NativeCodeCall<"::mlir::fxmlir::createNone($_builder, $_loc)">;

#endif // FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD
