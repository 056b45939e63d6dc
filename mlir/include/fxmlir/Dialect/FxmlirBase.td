//===- FxmlirBase.td - fxmlir dialect, attributes, constraints -*- tablegen -*-===//
//
// The pieces every fxmlir op definition shares: the dialect, the device
// attribute carried as tensor encoding, and the type/attribute constraints
// that the schema-driven rule (python/fxmlir/schema.py) maps torch schema
// types to. AtenOps.td (generated) and FxmlirOps.td (hand-written) build on it.
//
//===----------------------------------------------------------------------===//

#ifndef FXMLIR_DIALECT_FXMLIRBASE_TD
#define FXMLIR_DIALECT_FXMLIRBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/TensorEncoding.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Fxmlir_Dialect : Dialect {
  let name = "fxmlir";
  let cppNamespace = "::fxmlir";
  let summary = "PyTorch FX graphs as MLIR: ATen ops, fused ops and JIT regions";
  let description = [{
    The fxmlir dialect holds PyTorch training graphs. `fxmlir.aten.*` ops are
    generated from torch's own op schemas (one op per ATen overload, the
    overload name kept as a suffix: `fxmlir.aten.add.Tensor`); `fxmlir.call`
    carries any other op by its qualified name so that every graph round-trips
    losslessly; the remaining ops are fused ops and JIT regions written by hand.
    Tensors are builtin ranked tensors whose encoding is `#fxmlir.device<...>`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// Adds the fused ops generated from their table (FusedOps.cpp).
    void registerFusedOps();
  }];
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Fxmlir_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Fxmlir_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Fxmlir_DeviceAttr : Fxmlir_Attr<"Device", "device",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "the torch device a tensor lives on";
  let description = [{
    Spelled as torch spells it: `#fxmlir.device<"cpu">`,
    `#fxmlir.device<"cuda:0">`. Used as the encoding of tensor types and as
    the value of `Device` arguments.
  }];
  let parameters = (ins StringRefParameter<"torch device string">:$name);
  let assemblyFormat = "`<` $name `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The device type without the index: "cpu", "cuda", "meta", ...
    ::llvm::StringRef getType() const;
  }];
}

def Fxmlir_OperandRefAttr : Fxmlir_Attr<"OperandRef", "operand"> {
  let summary = "a reference to operand N of a fxmlir.call";
  let parameters = (ins "int64_t":$index);
  let assemblyFormat = "`<` $index `>`";
}

def Fxmlir_NoneAttr : Fxmlir_Attr<"None", "none"> {
  let summary = "Python None inside a fxmlir.call argument";
}

//===----------------------------------------------------------------------===//
// Type and attribute constraints used by the generated ops
//===----------------------------------------------------------------------===//

// A torch Tensor: a ranked tensor (dynamic dims `?`); its encoding, when
// present, is the device.
def Fxmlir_Tensor : RankedTensorOf<[AnyType]>;
// `Tensor?`: a tensor, or a value of builtin type `none` (from fxmlir.none).
def Fxmlir_OptionalTensor : AnyTypeOf<[AnyRankedTensor, NoneType],
                                      "tensor or none">;
def Fxmlir_TensorList : Variadic<Fxmlir_Tensor>;
def Fxmlir_OptionalTensorList : Variadic<Fxmlir_OptionalTensor>;
// Non-tensor results: int/SymInt, float, bool, Scalar.
def Fxmlir_Scalar : AnyTypeOf<[I64, F64, I1], "int, float or bool">;

// `Scalar` arguments: an int, float or bool constant.
def Fxmlir_ScalarAttr : AnyAttrOf<[I64Attr, F64Attr, BoolAttr]>;
// `ScalarType` arguments: the element type, e.g. `f32` or `bf16`.
def Fxmlir_DTypeAttr : TypeAttrBase<"::mlir::Type", "dtype">;
// `Layout`, `MemoryFormat` and `str` arguments are StrAttr holding torch's
// names ("strided", "contiguous_format", "channels_last", ...); those that
// take a fixed set of names are a Fxmlir_StrEnumAttr.

// A string attribute taking one of `values` (the generator defines one per
// enum: Fxmlir_ApproximateAttr, Fxmlir_LayoutAttr, ...).
class Fxmlir_StrEnumAttr<list<string> values> : ConfinedAttr<StrAttr, [
  AttrConstraint<
    CPred<"::llvm::is_contained(::llvm::ArrayRef<::llvm::StringRef>{"
          # !interleave(!foreach(v, values, "\"" # v # "\""), ", ")
          # "}, ::llvm::cast<::mlir::StringAttr>($_self).getValue())">,
    "whose value is one of "
        # !interleave(!foreach(v, values, "\"" # v # "\""), ", ")>]>;

//===----------------------------------------------------------------------===//
// Verification rules of generated ops (picked by python/fxmlir/schema.py,
// implemented in FxmlirTraits.h)
//===----------------------------------------------------------------------===//

class Fxmlir_OpTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::fxmlir::OpTrait";
}
// Every tensor result has the broadcast shape of the tensor operands.
def Fxmlir_BroadcastShapes : Fxmlir_OpTrait<"BroadcastShapes">;
// Every tensor operand has a floating-point element type.
def Fxmlir_FloatingPointOperands : Fxmlir_OpTrait<"FloatingPointOperands">;

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

class Fxmlir_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fxmlir_Dialect, mnemonic, traits>;

// An op generated from an ATen schema: `fxmlir.aten.<name>[.<overload>]`.
class Aten_Op<string mnemonic, list<Trait> traits = []>
    : Fxmlir_Op<"aten." # mnemonic, traits>;

#endif // FXMLIR_DIALECT_FXMLIRBASE_TD
