//===- BiasAddActivationFusions.td - bias_add + activation -*- tablegen -*-===//
//
// A bias add followed by an activation (gelu, relu, silu; forward and
// backward) becomes one fused op whose kernel reads x and bias once: the
// seed fusion of OneFlow's round trip. Every pattern here runs in
// fxmlir-fuse-bias-add-activation (populateWithGenerated).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_BIASADDACTIVATIONFUSIONS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_BIASADDACTIVATIONFUSIONS_TD

include "mlir/IR/PatternBase.td"
include "fxmlir/Dialect/FusedOps.td"
include "fxmlir/Dialect/AtenOps.td"
include "fxmlir/Transforms/Patterns/Constraints.td"

def FuseBiasAddGeluPattern : Pat<
  (Aten_GeluOp (Fxmlir_BiasAddOp:$sum $x, $bias, $axis), $approximate),
  (Fxmlir_FusedBiasAddGeluOp $x, $bias, $axis, $approximate),
  [(HasOneUse $sum), (FusibleTensor $x)]>;

def FuseBiasAddGeluGradPattern : Pat<
  (Aten_GeluBackwardOp $grad, (Fxmlir_BiasAddOp:$sum $x, $bias, $axis),
                       $approximate),
  (Fxmlir_FusedBiasAddGeluGradOp $grad, $x, $bias, $axis, $approximate),
  [(HasOneUse $sum), (FusibleTensor $x)]>;

def FuseBiasAddReluPattern : Pat<
  (Aten_ReluOp (Fxmlir_BiasAddOp:$sum $x, $bias, $axis)),
  (Fxmlir_FusedBiasAddReluOp $x, $bias, $axis),
  [(HasOneUse $sum), (FusibleTensor $x)]>;

def FuseBiasAddSiluPattern : Pat<
  (Aten_SiluOp (Fxmlir_BiasAddOp:$sum $x, $bias, $axis)),
  (Fxmlir_FusedBiasAddSiluOp $x, $bias, $axis),
  [(HasOneUse $sum), (FusibleTensor $x)]>;

def FuseBiasAddSiluGradPattern : Pat<
  (Aten_SiluBackwardOp $grad, (Fxmlir_BiasAddOp:$sum $x, $bias, $axis)),
  (Fxmlir_FusedBiasAddSiluGradOp $grad, $x, $bias, $axis),
  [(HasOneUse $sum), (FusibleTensor $x)]>;

#endif // FXMLIR_TRANSFORMS_PATTERNS_BIASADDACTIVATIONFUSIONS_TD
