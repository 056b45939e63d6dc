//===- GeluApproximation.td - erf GELU as tanh GELU --------*- tablegen -*-===//
//
// The opt-in fxmlir-approximate-gelu: erf GELU and its gradient computed as
// the tanh approximation, the GELU that cuBLASLt's epilogues compute. Every
// pattern here runs in that pass (populateWithGenerated).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_GELUAPPROXIMATION_TD
#define FXMLIR_TRANSFORMS_PATTERNS_GELUAPPROXIMATION_TD

include "mlir/IR/PatternBase.td"
include "fxmlir/Dialect/AtenOps.td"

def IsErf : Constraint<CPred<"$0.getValue() == \"none\"">, "is erf GELU">;
def Tanh : NativeCodeCall<"$_builder.getStringAttr(\"tanh\")">;

def ApproximateGeluPattern : Pat<
  (Aten_GeluOp $x, $approximate), (Aten_GeluOp $x, (Tanh)),
  [(IsErf $approximate)]>;

def ApproximateGeluBackwardPattern : Pat<
  (Aten_GeluBackwardOp $grad, $x, $approximate),
  (Aten_GeluBackwardOp $grad, $x, (Tanh)), [(IsErf $approximate)]>;

#endif // FXMLIR_TRANSFORMS_PATTERNS_GELUAPPROXIMATION_TD
