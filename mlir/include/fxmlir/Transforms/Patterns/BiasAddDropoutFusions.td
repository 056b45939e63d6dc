//===- BiasAddDropoutFusions.td - bias_add + dropout -------*- tablegen -*-===//
//
// A bias add followed by dropout becomes random_mask_like and one fused
// mask-and-scale kernel (OneFlow's second seed fusion). Every pattern here
// runs in fxmlir-fuse-bias-add-dropout (populateWithGenerated).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD

include "mlir/IR/PatternBase.td"
include "fxmlir/Dialect/FusedOps.td"
include "fxmlir/Dialect/AtenOps.td"
include "fxmlir/Transforms/Patterns/Constraints.td"

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

#endif // FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD
