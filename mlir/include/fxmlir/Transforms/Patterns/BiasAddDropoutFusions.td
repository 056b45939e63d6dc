//===- BiasAddDropoutFusions.td - bias_add + dropout -------*- tablegen -*-===//
//
// OneFlow's second seed fusion as its DRR pattern says it: a training
// dropout of a bias add draws its keep mask (random_mask_like) and applies
// the bias, the mask and the dropout's scale in one kernel
// (fused_bias_add_mask_scale). fxmlir-fuse-mask-draws then merges the draw
// into that kernel. Every pattern here runs in fxmlir-fuse-bias-add-dropout
// (populateWithGenerated).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD

include "mlir/IR/PatternBase.td"
include "fxmlir/Dialect/FusedOps.td"
include "fxmlir/Dialect/AtenOps.td"
include "fxmlir/Transforms/Patterns/Constraints.td"

def TrainingDropout : Constraint<
    CPred<"::fxmlir::isActiveDropout($0, $1)">,
    "is a training dropout (train, 0 < p < 1)">;
// 1 / (1 - p): what a kept element is scaled by.
def DropoutScale : NativeCodeCall<"::fxmlir::dropoutScale($_builder, $0)">;
// The bool keep mask's type: shaped like $0, on its device.
def MaskTypeOf : NativeCodeCall<"::fxmlir::boolMaskType($0)">;
// Masks draw from fxmlir's own stream (fxmlir-eager-random may change it).
def OwnRandomStream : NativeCodeCall<"::mlir::BoolAttr()">;

// Before autodiff: Dynamo's dropout.
def FuseBiasAddDropoutPattern : Pat<
  (Aten_DropoutOp (Fxmlir_BiasAddOp:$sum $x, $bias, $axis), $p, $train),
  (Fxmlir_FusedBiasAddMaskScaleOp $x, $bias,
      (Fxmlir_RandomMaskLikeOp $x, $p, (OwnRandomStream),
                               (returnType (MaskTypeOf $x))),
      $axis, (DropoutScale $p)),
  [(TrainingDropout $train, $p), (HasOneUse $sum), (FusibleTensor $x)]>;

// After autodiff: native_dropout's mask is a result too (the backward reads it).
def FuseBiasAddNativeDropoutPattern : Pattern<
  (Aten_NativeDropoutOp (Fxmlir_BiasAddOp:$sum $x, $bias, $axis), $p, $train),
  [(Fxmlir_RandomMaskLikeOp:$mask $x, $p, (OwnRandomStream),
                                  (returnType (MaskTypeOf $x))),
   (Fxmlir_FusedBiasAddMaskScaleOp $x, $bias, $mask, $axis, (DropoutScale $p)),
   (replaceWithValue $mask)],
  [(TrainingDropout $train, $p), (HasOneUse $sum), (FusibleTensor $x)]>;

#endif // FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD
