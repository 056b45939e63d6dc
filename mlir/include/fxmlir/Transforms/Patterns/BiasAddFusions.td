//===- BiasAddFusions.td - bias_add fusion patterns (DRR) --*- tablegen -*-===//
//
// The seed fusions of OneFlow's round trip: a bias add followed by an
// activation (gelu, relu, silu; forward and backward) or by dropout becomes
// one fused op whose kernel reads x and bias once. populate...Patterns in
// lib/Transforms/BiasAddFusions.cpp hand them to the passes.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_BIASADDFUSIONS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_BIASADDFUSIONS_TD

include "mlir/IR/PatternBase.td"
include "fxmlir/Dialect/FusedOps.td"
include "fxmlir/Dialect/AtenOps.td"
include "fxmlir/Transforms/Patterns/Constraints.td"

def FusibleTensor : Constraint<CPred<"::mlir::fxmlir::isFusibleTensor($0)">,
                               "f32/f16/bf16 tensor on CPU or CUDA">;
def ActiveDropout : Constraint<CPred<"::mlir::fxmlir::isActiveDropout($0, $1)">,
                               "dropout in training mode with p > 0">;
def DropoutScale : NativeCodeCall<"::mlir::fxmlir::dropoutScale($_builder, $0)">;

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

// The dropout's second result, its mask, becomes the random_mask_like result
// (the seed's `replaceWithValue $mask`): the backward graph reads it.
def FuseBiasAddDropoutPattern : Pattern<
  (Aten_NativeDropoutOp:$dropout (Fxmlir_BiasAddOp:$sum $x, $bias, $axis),
                                 $p, $train),
  [(Fxmlir_FusedBiasAddMaskScaleOp $x, $bias,
       (Fxmlir_RandomMaskLikeOp:$mask $x, $p, (returnType $dropout__1)),
       $axis, (DropoutScale $p)),
   (replaceWithValue $mask)],
  [(HasOneUse $sum), (FusibleTensor $x), (ActiveDropout $train, $p)]>;

#endif // FXMLIR_TRANSFORMS_PATTERNS_BIASADDFUSIONS_TD
