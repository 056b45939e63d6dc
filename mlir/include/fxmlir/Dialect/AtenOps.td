// Stand-in until tools/gen_aten_ods.py writes this file.
include "fxmlir/Dialect/FxmlirBase.td"
def Aten_GeluOp : Aten_Op<"gelu", [Pure]> {
  let arguments = (ins Fxmlir_Tensor:$self, StrAttr:$approximate);
  let results = (outs Fxmlir_Tensor:$result);
  let assemblyFormat = "$self attr-dict `:` functional-type(operands, results)";
}
