//===- BiasAddDropoutFusions.td - bias_add + dropout -------*- tablegen -*-===//
//
// A bias add followed by dropout, and the residual add after it (Megatron's
// bias_dropout_add), becomes one fused_bias_dropout_add that draws its mask
// in the kernel (OneFlow's second seed fusion). Before autodiff (Dynamo's
// F.dropout, imported as aten.dropout) the mask is packed at 1 bit per
// element: the op's autograd formula saves it, 8x less than native_dropout's
// bool mask. After autodiff, native_dropout's bool mask is a forward output
// the backward graph reads, so it stays bool. These patterns fuse a dropout
// without a residual add; fxmlir-fuse-bias-add-dropout runs them
// (populateWithGenerated) after the C++ pattern that takes the residual add
// too (FuseBiasAddDropout.cpp: it replaces the add and the dropout, two
// roots, which DRR cannot).
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD
#define FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD

include "mlir/IR/PatternBase.td"
include "fxmlir/Dialect/FusedOps.td"
include "fxmlir/Dialect/AtenOps.td"
include "fxmlir/Transforms/Patterns/Constraints.td"

def Packed : NativeCodeCall<"$_builder.getBoolAttr(true)">;
def Unpacked : NativeCodeCall<"$_builder.getBoolAttr(false)">;

// Before autodiff, no residual add: dropout(x + bias).
def FuseBiasDropoutPattern : Pattern<
  (Aten_DropoutOp:$dropout (Fxmlir_BiasAddOp:$sum $x, $bias, $axis), $p,
                           $train),
  [(Fxmlir_FusedBiasDropoutAddOp:$fused $x, $bias, (NoneValue), $axis, $p,
       (Packed), (returnType $dropout, (PackedMaskType $x))),
   (replaceWithValue $fused__0)],
  [(HasOneUse $sum), (FusibleTensor $x), (ActiveDropout $train, $p)]>;

// After autodiff: native_dropout's output and bool mask (the backward
// graph's native_dropout_backward reads the mask the kernel drew).
def FuseBiasNativeDropoutPattern : Pattern<
  (Aten_NativeDropoutOp:$dropout (Fxmlir_BiasAddOp:$sum $x, $bias, $axis),
                                 $p, $train),
  [(Fxmlir_FusedBiasDropoutAddOp $x, $bias, (NoneValue), $axis, $p,
       (Unpacked))],
  [(HasOneUse $sum), (FusibleTensor $x), (ActiveDropout $train, $p)]>;

#endif // FXMLIR_TRANSFORMS_PATTERNS_BIASADDDROPOUTFUSIONS_TD
