//===- FxmlirOps.td - hand-written fxmlir ops --------------*- tablegen -*-===//
//
// Ops that are not generated from ATen schemas: the plumbing that makes every
// FX graph representable (none, call, get_attr), the fused ops the fusion
// patterns produce (one torch op `torch.ops.fxmlir.<name>` each, with operand
// and attribute names equal to that op's schema argument names, so the
// exporter treats them like generated ATen ops), and the JIT region op.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_DIALECT_FXMLIROPS_TD
#define FXMLIR_DIALECT_FXMLIROPS_TD

include "fxmlir/Dialect/FxmlirBase.td"
include "mlir/IR/SymbolInterfaces.td"

//===----------------------------------------------------------------------===//
// Graph plumbing
//===----------------------------------------------------------------------===//

def Fxmlir_NoneOp : Fxmlir_Op<"none", [Pure, ConstantLike]> {
  let summary = "Python None as a value";
  let description = [{
    Stands for a `None` passed to a `Tensor?` argument or returned from a
    graph (backward graphs return None for inputs that need no gradient).

    ```mlir
    %none = fxmlir.none
    ```
  }];
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
  let hasFolder = 1;
}

def Fxmlir_CallOp : Fxmlir_Op<"call"> {
  let summary = "call of any op or function by its qualified name";
  let description = [{
    Carries an FX `call_function` node that has no typed op: an ATen overload
    outside the generated set, a custom `torch.library` op, a Python operator
    on symbolic sizes, or a typed op whose arguments are not all constants.
    `target` is the qualified name (`aten::foo.overload`, `mylib::op`,
    `_operator.mul`); `args` and `kwargs` keep the call's arguments in their
    original structure, with `#fxmlir.operand<N>` standing for operand N and
    `#fxmlir.none` for None. The op has unknown side effects, so no pass moves,
    merges or deletes it.

    ```mlir
    %r = fxmlir.call "mylib::scale"(%x) {args = [#fxmlir.operand<0>, 2.0 : f64],
                                        kwargs = {}} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins StrAttr:$target, Variadic<AnyType>:$operands,
                       ArrayAttr:$args, DictionaryAttr:$kwargs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $target `(` $operands `)` attr-dict `:` functional-type($operands, $results)
  }];
  let hasVerifier = 1;
}

def Fxmlir_GetAttrOp : Fxmlir_Op<"get_attr", [Pure]> {
  let summary = "a tensor attribute of the graph's module";
  let description = [{
    An FX `get_attr` node: a constant or buffer held by the GraphModule under
    the dotted name `name`. The exporter fetches it from the original module.

    ```mlir
    %c = fxmlir.get_attr "_tensor_constant0" : tensor<4xf32, #fxmlir.device<"cpu">>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Fused ops
//===----------------------------------------------------------------------===//

// Shared by the fused ops: x and bias share an element type, bias is 1-D and
// matches dim `axis` of x, and the result is shaped like x.
class Fxmlir_BiasOp<string mnemonic, list<Trait> traits = []>
    : Fxmlir_Op<mnemonic, traits # [Pure]> {
  let hasVerifier = 1;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Fxmlir_BiasAddOp : Fxmlir_BiasOp<"bias_add"> {
  let summary = "x + bias broadcast along one axis";
  let description = [{
    Adds the 1-D `bias` to `x` along dim `axis` (negative counts from the
    end). It is the canonical form that `addmm` and broadcast `add` decompose
    to, so fusion patterns need to match only one spelling.

    ```mlir
    %y = fxmlir.bias_add %x, %b {axis = 1 : i64}
        : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Fxmlir_Tensor:$x, Fxmlir_Tensor:$bias, I64Attr:$axis);
  let results = (outs Fxmlir_Tensor:$result);
}

def Fxmlir_FusedBiasAddGeluOp : Fxmlir_BiasOp<"fused_bias_add_gelu"> {
  let summary = "gelu(x + bias) in one kernel";
  let description = [{
    `approximate` is torch's: "none" (erf) or "tanh".

    ```mlir
    %y = fxmlir.fused_bias_add_gelu %x, %b {approximate = "none", axis = 1 : i64}
        : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Fxmlir_Tensor:$x, Fxmlir_Tensor:$bias, I64Attr:$axis,
                       StrAttr:$approximate);
  let results = (outs Fxmlir_Tensor:$result);
}

def Fxmlir_FusedBiasAddGeluGradOp : Fxmlir_BiasOp<"fused_bias_add_gelu_grad"> {
  let summary = "gelu_backward(grad, x + bias) in one kernel";
  let description = [{
    The gradient of `fused_bias_add_gelu` with respect to `x`; `grad` is
    shaped like `x`. The bias gradient is its sum over the other dims.

    ```mlir
    %dx = fxmlir.fused_bias_add_gelu_grad %g, %x, %b {approximate = "tanh", axis = 1 : i64}
        : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Fxmlir_Tensor:$grad, Fxmlir_Tensor:$x,
                       Fxmlir_Tensor:$bias, I64Attr:$axis, StrAttr:$approximate);
  let results = (outs Fxmlir_Tensor:$result);
}

def Fxmlir_FusedBiasAddMaskScaleOp
    : Fxmlir_BiasOp<"fused_bias_add_mask_scale"> {
  let summary = "(x + bias) * mask * scale in one kernel";
  let description = [{
    Dropout applied to a bias add: `mask` is the boolean keep mask (from
    `random_mask_like`) shaped like `x`, `scale` is 1 / (1 - p).

    ```mlir
    %y = fxmlir.fused_bias_add_mask_scale %x, %b, %m {axis = 1 : i64, scale = 1.25 : f64}
        : (tensor<8x16xf32>, tensor<16xf32>, tensor<8x16xi1>) -> tensor<8x16xf32>
    ```
  }];
  let arguments = (ins Fxmlir_Tensor:$x, Fxmlir_Tensor:$bias,
                       Fxmlir_Tensor:$mask, I64Attr:$axis, F64Attr:$scale);
  let results = (outs Fxmlir_Tensor:$result);
}

def Fxmlir_RandomMaskLikeOp : Fxmlir_Op<"random_mask_like"> {
  let summary = "a random boolean keep mask shaped like a tensor";
  let description = [{
    True with probability 1 - `p`. The random stream is torch's generator for
    the tensor's device (its seed and Philox offset are read when the kernel
    runs), so `torch.manual_seed` reproduces a run. The op is not Pure: two
    masks must never be merged.

    ```mlir
    %m = fxmlir.random_mask_like %x {p = 1.000000e-01 : f64}
        : (tensor<8x16xf32>) -> tensor<8x16xi1>
    ```
  }];
  let arguments = (ins Fxmlir_Tensor:$like, F64Attr:$p);
  let results = (outs Fxmlir_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// JIT regions
//===----------------------------------------------------------------------===//

def Fxmlir_MlirJitOp : Fxmlir_Op<"mlir_jit",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "call of an outlined region that is JIT-compiled";
  let description = [{
    Like OneFlow's MlirJitOp: a region of the graph outlined into the
    `func.func` named by `callee`, which the runtime lowers and compiles.
    Operand and result types match the callee's signature.

    ```mlir
    %r = fxmlir.mlir_jit @fused_0(%x, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$operands);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)
  }];
}

#endif // FXMLIR_DIALECT_FXMLIROPS_TD
