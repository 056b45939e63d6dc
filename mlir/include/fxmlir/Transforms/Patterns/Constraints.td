//===- Constraints.td - DRR constraints shared by patterns -*- tablegen -*-===//
//
// What DRR cannot say itself is C++ in fxmlir/Transforms/PatternUtils.h.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD

include "mlir/IR/PatternBase.td"

def HasOneUse : Constraint<CPred<"$0.hasOneUse()">, "has one use">;
def FusibleTensor : Constraint<CPred<"::fxmlir::isFusibleTensor($0)">,
                               "f32/f16/bf16 tensor on CPU or CUDA">;
def IsOne : Constraint<CPred<"::fxmlir::isScalar($0, 1)">, "is 1">;
def SameType : Constraint<CPred<"$0.getType() == $1.getType()">,
                          "has the same type">;

#endif // FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD
