//===- FxmlirOps.td - hand-written fxmlir ops --------------*- tablegen -*-===//
//
// Ops written by hand: the plumbing that makes every FX graph representable
// (none, call, get_attr) and the JIT region op. The fused ops are generated
// (FusedOps.td) from the table in python/fxmlir/fused_ops.py.
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
