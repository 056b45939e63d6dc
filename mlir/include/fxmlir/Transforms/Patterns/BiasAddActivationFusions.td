//===- BiasAddActivationFusions.td - bias_add + activation -*- tablegen -*-===//
//
// A bias add followed by an activation (forward and backward) becomes one
// fused_bias_act (fused_bias_act_grad) whose kernel reads x and bias once:
// the seed fusion of OneFlow's round trip. One pattern line per activation
// of python/fxmlir/fused_ops.py's ACTIVATIONS; every pattern here runs in
// fxmlir-fuse-bias-add-activation (populateWithGenerated).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_BIASADDACTIVATIONFUSIONS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_BIASADDACTIVATIONFUSIONS_TD

include "mlir/IR/PatternBase.td"
include "fxmlir/Dialect/FusedOps.td"
include "fxmlir/Dialect/AtenOps.td"
include "fxmlir/Transforms/Patterns/Constraints.td"

// fused_bias_act's `activation` (a row of ACTIVATIONS in
// python/fxmlir/fused_ops.py).
class ActivationNamed<string name> : ConstantStrAttr<Fxmlir_ActivationAttr, name>;
// gelu's approximate "none" is the "gelu" row, "tanh" the "gelu_tanh" row.
def GeluActivation : NativeCodeCall<
  "$_builder.getStringAttr($0.getValue() == \"tanh\" ? \"gelu_tanh\" : \"gelu\")">;

// act(bias_add(x, bias)) and act_backward(grad, bias_add(x, bias)), for an
// activation op that takes only its input.
class FuseBiasAddActivation<Op activation, string name> : Pat<
  (activation (Fxmlir_BiasAddOp:$sum $x, $bias, $axis)),
  (Fxmlir_FusedBiasActOp $x, $bias, $axis, ActivationNamed<name>),
  [(HasOneUse $sum), (FusibleTensor $x)]>;
class FuseBiasAddActivationGrad<Op gradient, string name> : Pat<
  (gradient $grad, (Fxmlir_BiasAddOp:$sum $x, $bias, $axis)),
  (Fxmlir_FusedBiasActGradOp $grad, $x, $bias, $axis, ActivationNamed<name>),
  [(HasOneUse $sum), (FusibleTensor $x)]>;

def FuseBiasAddGeluPattern : Pat<
  (Aten_GeluOp (Fxmlir_BiasAddOp:$sum $x, $bias, $axis), $approximate),
  (Fxmlir_FusedBiasActOp $x, $bias, $axis, (GeluActivation $approximate)),
  [(HasOneUse $sum), (FusibleTensor $x)]>;
def FuseBiasAddGeluGradPattern : Pat<
  (Aten_GeluBackwardOp $grad, (Fxmlir_BiasAddOp:$sum $x, $bias, $axis),
                       $approximate),
  (Fxmlir_FusedBiasActGradOp $grad, $x, $bias, $axis,
                             (GeluActivation $approximate)),
  [(HasOneUse $sum), (FusibleTensor $x)]>;

def FuseBiasAddReluPattern : FuseBiasAddActivation<Aten_ReluOp, "relu">;
def FuseBiasAddSiluPattern : FuseBiasAddActivation<Aten_SiluOp, "silu">;
def FuseBiasAddSiluGradPattern :
    FuseBiasAddActivationGrad<Aten_SiluBackwardOp, "silu">;
def FuseBiasAddTanhPattern : FuseBiasAddActivation<Aten_TanhOp, "tanh">;
def FuseBiasAddHardswishPattern :
    FuseBiasAddActivation<Aten_HardswishOp, "hardswish">;
def FuseBiasAddHardswishGradPattern :
    FuseBiasAddActivationGrad<Aten_HardswishBackwardOp, "hardswish">;

#endif // FXMLIR_TRANSFORMS_PATTERNS_BIASADDACTIVATIONFUSIONS_TD
