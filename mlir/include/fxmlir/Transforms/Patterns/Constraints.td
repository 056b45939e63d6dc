//===- Constraints.td - DRR constraints shared by patterns -*- tablegen -*-===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD

include "mlir/IR/PatternBase.td"

def HasOneUse : Constraint<CPred<"$0.hasOneUse()">, "has one use">;

#endif // FXMLIR_TRANSFORMS_PATTERNS_CONSTRAINTS_TD
