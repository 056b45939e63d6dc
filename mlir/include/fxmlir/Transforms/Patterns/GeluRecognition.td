//===- GeluRecognition.td - GELU written out becomes gelu --*- tablegen -*-===//
//
// Models write GELU as a formula (GPT-2's gelu_new, Megatron's bias_gelu,
// BERT's gelu_python): 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
// or 0.5 * x * (1 + erf(x / sqrt(2))). These patterns match the product
// around the activation in its common orders; the activation's argument is
// checked as a polynomial in x (RecognizeGelu.cpp), so `pow(x, 3)`,
// `x * x * x` and `x * (1 + 0.044715 * x * x)` are one case. The result is
// `aten.gelu`, which the bias fusions know.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_TRANSFORMS_PATTERNS_GELURECOGNITION_TD
#define FXMLIR_TRANSFORMS_PATTERNS_GELURECOGNITION_TD

include "mlir/IR/PatternBase.td"
include "fxmlir/Dialect/FxmlirOps.td"
include "fxmlir/Dialect/AtenOps.td"
include "fxmlir/Transforms/Patterns/Constraints.td"

def IsHalf : Constraint<CPred<"isScalarNear($0, 0.5)">,
                        "is 0.5">;
def IsTanhGeluArgument
    : Constraint<CPred<"isTanhGeluArgument($0, $1)">,
                 "is sqrt(2/pi) * ($1 + 0.044715 * $1^3)">;
def IsErfGeluArgument : Constraint<CPred<"isErfGeluArgument($0, $1)">,
                                   "is $1 / sqrt(2)">;
def IsWideningCast : Constraint<CPred<"isWideningCast($0, $1)">,
                                "casts $1 to a wider float type">;

class Approximate<string name>
    : NativeCodeCall<"$_builder.getStringAttr(\"" # name # "\")">;

// 0.5 * x * (1 + act(arg)) in the four orders Python's left-to-right
// products give: (0.5 * x) * (1 + a), (1 + a) * (x * 0.5), and the half
// applied last, (x * (1 + a)) * 0.5 and ((1 + a) * x) * 0.5.
multiclass GeluFormula<Op act, string approximate, Constraint isArgument> {
  def HalfFirst : Pat<
    (Aten_MulTensorOp:$root (Aten_MulScalarOp $x, $half),
                            (Aten_AddScalarOp (act $arg), $one, $alpha)),
    (Aten_GeluOp $x, (Approximate<approximate>)),
    [(IsHalf $half), (IsOne $one), (IsOne $alpha), (isArgument $arg, $x),
     (SameType $root, $x)]>;
  def HalfFirstSwapped : Pat<
    (Aten_MulTensorOp:$root (Aten_AddScalarOp (act $arg), $one, $alpha),
                            (Aten_MulScalarOp $x, $half)),
    (Aten_GeluOp $x, (Approximate<approximate>)),
    [(IsHalf $half), (IsOne $one), (IsOne $alpha), (isArgument $arg, $x),
     (SameType $root, $x)]>;
  def HalfLast : Pat<
    (Aten_MulScalarOp:$root
        (Aten_MulTensorOp $x, (Aten_AddScalarOp (act $arg), $one, $alpha)),
        $half),
    (Aten_GeluOp $x, (Approximate<approximate>)),
    [(IsHalf $half), (IsOne $one), (IsOne $alpha), (isArgument $arg, $x),
     (SameType $root, $x)]>;
  def HalfLastSwapped : Pat<
    (Aten_MulScalarOp:$root
        (Aten_MulTensorOp (Aten_AddScalarOp (act $arg), $one, $alpha), $x),
        $half),
    (Aten_GeluOp $x, (Approximate<approximate>)),
    [(IsHalf $half), (IsOne $one), (IsOne $alpha), (isArgument $arg, $x),
     (SameType $root, $x)]>;
}

defm TanhGelu : GeluFormula<Aten_TanhOp, "tanh", IsTanhGeluArgument>;
defm ErfGelu : GeluFormula<Aten_ErfOp, "none", IsErfGeluArgument>;

// to(gelu(to(y, f32)), y's type) -> gelu(y): torch computes a bf16/f16
// gelu in f32 and rounds once, which is what the casts spell (autocast
// graphs, and models that upcast around their activation).
def GeluThroughCasts : Pat<
  (Aten_UnderscoreToCopyOp:$down
      (Aten_GeluOp:$gelu
          (Aten_UnderscoreToCopyOp:$up $y, $dtype, $layout, $device, $pin,
                                       $nonBlocking, $format),
          $approximate),
      $dtype2, $layout2, $device2, $pin2, $nonBlocking2, $format2),
  (Aten_GeluOp $y, $approximate),
  [(SameType $down, $y), (IsWideningCast $up, $y), (HasOneUse $gelu),
   (HasOneUse $up)]>;

#endif // FXMLIR_TRANSFORMS_PATTERNS_GELURECOGNITION_TD
