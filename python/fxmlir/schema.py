"""The one rule mapping a torch op schema to a typed `fxmlir.aten.*` op.

tools/gen_ops.py writes AtenOps.td from it, and the importer/exporter use
it to spell and read those ops, so the three cannot drift apart:

- op name: `fxmlir.aten.<name>` for the `default` overload,
  `fxmlir.aten.<name>.<overload>` otherwise;
- `Tensor` / `Tensor?` / `Tensor[]` / `Tensor?[]` arguments are operands, in
  schema order (`Tensor?` is a tensor or a `none` value from `fxmlir.none`,
  `Tensor?[]` a list of those);
- every other argument is an attribute named after it (see `AttrKind`); a
  `T?` argument is an optional attribute, absent when the value is None. No
  attribute has an ODS default: the importer fills omitted arguments from
  `ArgRule.default`;
- results: `Tensor`, `Tensor[]` (variadic), or a number (i64/f64/i1);
- names that would clash with ODS-generated C++ (accessors, builder
  parameters) or with C++ keywords get a trailing `_` (`name` -> `name_`);
- verification beyond types (`VerifyRule`): ops torch tags `pointwise` check
  that their results have the broadcast shape of their tensor operands; ops
  in FLOATING_POINT_OPS take floating-point tensors only; `str` arguments in
  STR_ENUMS (and layouts, memory formats) accept only torch's values; ops in
  HAND_VERIFIED (matmuls, views) have a C++ verifier of their own
  (mlir/lib/Dialect/AtenVerifiers.cpp).

Ops that mutate or alias-write their inputs, take a Generator/Stream/Storage
or a type without an attribute (complex, Dimname, str[], ...), or return
nothing or `Tensor?`, have no typed op: they go through `fxmlir.call`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import torch
from torch._ops import OpOverload

from fxmlir.fused_ops import ACTIVATIONS

__all__ = [
    "ArgKind",
    "ArgRule",
    "AttrKind",
    "OpSignature",
    "ResultKind",
    "ResultRule",
    "VerifyRule",
    "EXTRA_OPS",
    "FLOATING_POINT_OPS",
    "HAND_VERIFIED",
    "STR_ENUMS",
    "enum_ods_name",
    "enums",
    "aten_overloads",
    "default_value",
    "ods_accessor",
    "ods_def_name",
    "mlir_op_name",
    "ods_name",
    "op_from_mlir_name",
    "op_signature",
    "resolve",
    "schema_signature",
    "typed_aten_ops",
    "unsupported_reason",
]

MNEMONIC_PREFIX = "aten."
# Torch op namespace -> prefix of its ops' MLIR names, the longer first.
_NAMESPACES = {"aten": "fxmlir." + MNEMONIC_PREFIX, "fxmlir": "fxmlir."}


class ArgKind(enum.Enum):
    TENSOR = "tensor"
    OPTIONAL_TENSOR = "optional_tensor"
    TENSOR_LIST = "tensor_list"
    OPTIONAL_TENSOR_LIST = "optional_tensor_list"
    ATTRIBUTE = "attribute"


class AttrKind(enum.Enum):
    """What an attribute argument holds; `ods` is its ODS constraint."""

    INT = "int"  # int, SymInt
    FLOAT = "float"
    BOOL = "bool"
    STR = "str"
    LAYOUT = "layout"  # torch's name: "strided", "sparse_coo", ...
    MEMORY_FORMAT = "memory_format"  # "contiguous_format", "channels_last", ...
    SCALAR = "scalar"
    DTYPE = "dtype"
    DEVICE = "device"
    INT_LIST = "int_list"  # int[], SymInt[]
    FLOAT_LIST = "float_list"
    BOOL_LIST = "bool_list"

    @property
    def ods(self) -> str:
        return _ODS_ATTRS[self]


_ODS_ATTRS = {
    AttrKind.INT: "I64Attr",
    AttrKind.FLOAT: "F64Attr",
    AttrKind.BOOL: "BoolAttr",
    AttrKind.STR: "StrAttr",
    AttrKind.LAYOUT: "StrAttr",
    AttrKind.MEMORY_FORMAT: "StrAttr",
    AttrKind.SCALAR: "Fxmlir_ScalarAttr",
    AttrKind.DTYPE: "Fxmlir_DTypeAttr",
    AttrKind.DEVICE: "Fxmlir_DeviceAttr",
    AttrKind.INT_LIST: "DenseI64ArrayAttr",
    AttrKind.FLOAT_LIST: "DenseF64ArrayAttr",
    AttrKind.BOOL_LIST: "DenseBoolArrayAttr",
}


class ResultKind(enum.Enum):
    TENSOR = "Fxmlir_Tensor"
    TENSOR_LIST = "Variadic<Fxmlir_Tensor>"
    SCALAR = "Fxmlir_Scalar"


_NO_DEFAULT: Any = object()


@dataclass(frozen=True)
class ArgRule:
    name: str  # in the schema (and in FX kwargs)
    ods_name: str  # in ODS and in the MLIR generic form
    kind: ArgKind
    attr: AttrKind | None = None  # for ArgKind.ATTRIBUTE
    optional: bool = False  # `T?` attribute: absent when None
    default: Any = _NO_DEFAULT  # schema default, as a Python value
    kwarg_only: bool = False
    enum: str | None = None  # name in ENUMS, for str-like attributes taking a fixed set

    @property
    def is_operand(self) -> bool:
        return self.kind is not ArgKind.ATTRIBUTE

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT

    @property
    def ods_constraint(self) -> str:
        if self.kind is ArgKind.ATTRIBUTE:
            assert self.attr is not None
            ods = enum_ods_name(self.enum) if self.enum else self.attr.ods
            return f"OptionalAttr<{ods}>" if self.optional else ods
        return {
            ArgKind.TENSOR: "Fxmlir_Tensor",
            ArgKind.OPTIONAL_TENSOR: "Fxmlir_OptionalTensor",
            ArgKind.TENSOR_LIST: "Fxmlir_TensorList",
            ArgKind.OPTIONAL_TENSOR_LIST: "Fxmlir_OptionalTensorList",
        }[self.kind]


@dataclass(frozen=True)
class ResultRule:
    name: str  # in the schema; "" when unnamed
    ods_name: str
    kind: ResultKind


@dataclass(frozen=True)
class OpSignature:
    schema: torch._C.FunctionSchema
    tags: frozenset[torch.Tag]
    args: tuple[ArgRule, ...]  # schema order, operands and attributes mixed
    results: tuple[ResultRule, ...]

    @property
    def name(self) -> str:
        return mlir_op_name(self.schema)

    @property
    def operands(self) -> tuple[ArgRule, ...]:
        return tuple(a for a in self.args if a.is_operand)

    @property
    def attributes(self) -> tuple[ArgRule, ...]:
        return tuple(a for a in self.args if not a.is_operand)

    @property
    def is_pure(self) -> bool:
        return torch.Tag.nondeterministic_seeded not in self.tags

    @property
    def verify_rules(self) -> tuple[VerifyRule, ...]:
        qualified = _qualified(self.schema)
        rules = []
        if torch.Tag.pointwise in self.tags:
            rules.append(VerifyRule.BROADCAST_SHAPES)
        if qualified in FLOATING_POINT_OPS:
            rules.append(VerifyRule.FLOATING_POINT_OPERANDS)
        if qualified in HAND_VERIFIED:
            rules.append(VerifyRule.HAND_WRITTEN)
        return tuple(rules)


class VerifyRule(enum.Enum):
    """Checks a generated op makes beyond its operand and attribute types."""

    BROADCAST_SHAPES = "Fxmlir_BroadcastShapes"  # trait in FxmlirBase.td
    FLOATING_POINT_OPERANDS = "Fxmlir_FloatingPointOperands"  # trait too
    HAND_WRITTEN = "hasVerifier"  # C++ in mlir/lib/Dialect/AtenVerifiers.cpp


# `str` arguments, by name, that accept only these values (torch raises for
# others).
STR_ENUMS = {
    "approximate": ("none", "tanh"),
    # fxmlir's own: what the bias ops apply to x + bias (fused_ops.py's table).
    "activation": tuple(activation.name for activation in ACTIVATIONS),
    "rounding_mode": ("trunc", "floor"),
    "reduce": ("sum", "prod", "mean", "amax", "amin"),
}
# Ops whose kernels exist for floating-point tensors only (torch raises "not
# implemented for 'Int'"; tests/python/test_gen_ops.py checks it).
FLOATING_POINT_OPS = frozenset({
    "gelu", "gelu_backward", "elu", "silu", "silu_backward", "sigmoid_backward",
    "tanh_backward",
    "native_dropout", "native_layer_norm", "native_layer_norm_backward",
    "_softmax", "_log_softmax", "_softmax_backward_data",
    "_log_softmax_backward_data",
})
# Ops with a shape rule of their own, written in C++.
HAND_VERIFIED = frozenset({
    "mm", "addmm", "bmm", "linear", "view", "_unsafe_view", "t",
    "transpose.int", "permute", "expand", "unsqueeze",
})


class Unsupported(Exception):
    """Why a schema has no typed op."""


# Schema type kind -> attribute kind, for types an attribute can hold.
_ATTR_KINDS = {
    "IntType": AttrKind.INT,
    "SymIntType": AttrKind.INT,
    "FloatType": AttrKind.FLOAT,
    "SymFloatType": AttrKind.FLOAT,
    "BoolType": AttrKind.BOOL,
    "SymBoolType": AttrKind.BOOL,
    "StringType": AttrKind.STR,
    "LayoutType": AttrKind.LAYOUT,
    "MemoryFormatType": AttrKind.MEMORY_FORMAT,
    "NumberType": AttrKind.SCALAR,
    "ScalarTypeType": AttrKind.DTYPE,
    "DeviceObjType": AttrKind.DEVICE,
}
_LIST_ATTR_KINDS = {
    "IntType": AttrKind.INT_LIST,
    "SymIntType": AttrKind.INT_LIST,
    "FloatType": AttrKind.FLOAT_LIST,
    "BoolType": AttrKind.BOOL_LIST,
}
_SCALAR_RESULTS = {"IntType", "SymIntType", "FloatType", "SymFloatType",
                   "BoolType", "SymBoolType", "NumberType"}

# Names that ODS turns into C++ clashing with Op/OpState/adaptor members,
# builder parameters or the generic form, plus the C++ keywords a builder
# parameter cannot be named.
_RESERVED = frozenset("""
    attributes context loc location name operands operation properties region
    regions result results successors type odsBuilder odsState
    alignas alignof and asm auto bool break case catch char class const
    constexpr continue decltype default delete do double else enum explicit
    export extern false float for friend goto if inline int long mutable
    namespace new noexcept not nullptr operator or private protected public
    register return short signed sizeof static struct switch template this
    throw true try typedef typeid typename union unsigned using virtual void
    volatile while xor
""".split())

# torch's integer encodings of enum defaults (c10 order), as the torch
# objects an FX graph holds.
_ENUM_DEFAULTS = {
    "LayoutType": ("strided", "sparse_coo", "sparse_csr", "sparse_csc",
                   "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"),
    "MemoryFormatType": ("contiguous_format", "preserve_format",
                         "channels_last", "channels_last_3d"),
    "ScalarTypeType": ("uint8", "int8", "int16", "int32", "int64", "float16",
                       "float32", "float64", "complex32", "complex64",
                       "complex128", "bool", "qint8", "quint8", "qint32",
                       "bfloat16"),
}


def enums() -> dict[str, tuple[str, ...]]:
    """Every string enum attributes may take, by name: STR_ENUMS plus torch's
    layout and memory format names."""
    return {**STR_ENUMS,
            AttrKind.LAYOUT.value: _ENUM_DEFAULTS["LayoutType"],
            AttrKind.MEMORY_FORMAT.value: _ENUM_DEFAULTS["MemoryFormatType"]}


def enum_ods_name(enum: str) -> str:
    """The ODS attribute constraint of an enum: `Fxmlir_ApproximateAttr`."""
    return f"Fxmlir_{_camel(enum)}Attr"


def ods_name(name: str) -> str:
    """The ODS/generic-form name of a schema argument or result name."""
    return name + "_" if name in _RESERVED else name


def mlir_op_name(op: OpOverload | torch._C.FunctionSchema) -> str:
    """`fxmlir.aten.add.Tensor` for aten::add.Tensor, `fxmlir.<name>` for the
    fused ops fxmlir::<name>; the `default` overload has no suffix."""
    namespace = _function_schema(op).name.split("::", 1)[0]
    if namespace not in _NAMESPACES:
        raise ValueError(f"{op} is neither an aten nor an fxmlir op")
    return _NAMESPACES[namespace] + _qualified(op)


def op_from_mlir_name(name: str) -> OpOverload | None:
    """The inverse of `mlir_op_name`; None for names no torch op has."""
    for namespace, prefix in _NAMESPACES.items():  # aten's prefix first
        if name.startswith(prefix):
            op_name, _, overload = name.removeprefix(prefix).partition(".")
            packet = getattr(getattr(torch.ops, namespace), op_name, None)
            return getattr(packet, overload or "default", None) if packet else None
    return None


def ods_def_name(op: OpOverload | torch._C.FunctionSchema) -> str:
    """`Aten_AddTensorOp`, `Fxmlir_FusedBiasActOp`; a leading `_` of the
    name is spelled `Underscore` (`_softmax` -> `Aten_UnderscoreSoftmaxOp`) so
    that the C++ class name is not a reserved identifier and differs from
    `softmax`'s."""
    schema = _function_schema(op)
    namespace, name = schema.name.split("::", 1)
    stripped = name.lstrip("_")
    camel = "Underscore" * (len(name) - len(stripped)) + _camel(stripped)
    if schema.overload_name:
        camel += _camel(schema.overload_name)
    return f"{_camel(namespace)}_{camel}Op"


def ods_accessor(ods_name: str) -> str:
    """The C++ accessor ODS generates for an operand, attribute or result:
    `grad_output` -> `getGradOutput`."""
    return "get" + _camel(ods_name)


def _camel(text: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in text.split("_") if p)


def _function_schema(op: OpOverload | torch._C.FunctionSchema) -> torch._C.FunctionSchema:
    return op._schema if isinstance(op, OpOverload) else op


def _qualified(op: OpOverload | torch._C.FunctionSchema) -> str:
    schema = _function_schema(op)
    name = schema.name.split("::", 1)[1]
    return f"{name}.{schema.overload_name}" if schema.overload_name else name


def _arg_rule(arg: torch._C.Argument) -> ArgRule:
    if arg.alias_info is not None and arg.alias_info.is_write:
        raise Unsupported(f"mutates '{arg.name}' ({arg.type})")
    ty = arg.real_type
    optional = isinstance(ty, torch.OptionalType)
    if optional:
        ty = ty.getElementType()
    kind = ty.kind()
    common = dict(name=arg.name, ods_name=ods_name(arg.name),
                  kwarg_only=arg.kwarg_only)
    if arg.has_default_value():
        common["default"] = default_value(arg)

    if kind == "TensorType":
        return ArgRule(kind=ArgKind.OPTIONAL_TENSOR if optional else ArgKind.TENSOR,
                       **common)
    if kind == "ListType":
        elem = ty.getElementType()
        if isinstance(elem, torch.OptionalType) and \
                elem.getElementType().kind() == "TensorType" and not optional:
            return ArgRule(kind=ArgKind.OPTIONAL_TENSOR_LIST, **common)
        if elem.kind() == "TensorType" and not optional:
            return ArgRule(kind=ArgKind.TENSOR_LIST, **common)
        if elem.kind() in _LIST_ATTR_KINDS:
            return ArgRule(kind=ArgKind.ATTRIBUTE, attr=_LIST_ATTR_KINDS[elem.kind()],
                           optional=optional, **common)
    elif kind in _ATTR_KINDS:
        attr = _ATTR_KINDS[kind]
        enum = attr.value if attr in (AttrKind.LAYOUT, AttrKind.MEMORY_FORMAT) else \
            arg.name if attr is AttrKind.STR and arg.name in STR_ENUMS else None
        return ArgRule(kind=ArgKind.ATTRIBUTE, attr=attr, optional=optional,
                       enum=enum, **common)
    raise Unsupported(f"argument '{arg.name}' of type {arg.real_type}")


def default_value(arg: torch._C.Argument) -> Any:
    """The Python value of a schema argument's default: torch's schemas
    give an enum's (layout, memory format, dtype) as its number."""
    ty = arg.real_type
    if isinstance(ty, torch.OptionalType):
        ty = ty.getElementType()
    value, kind = arg.default_value, ty.kind()
    if kind in _ENUM_DEFAULTS and isinstance(value, int):
        return getattr(torch, _ENUM_DEFAULTS[kind][value])
    return value


def _result_rules(schema: torch._C.FunctionSchema,
                  arg_names: set[str]) -> tuple[ResultRule, ...]:
    returns = schema.returns
    if not returns:
        raise Unsupported("returns nothing")
    rules = []
    for i, ret in enumerate(returns):
        if ret.alias_info is not None and ret.alias_info.is_write:
            raise Unsupported("returns a mutated input")
        ty = ret.real_type
        if ty.kind() == "TensorType":
            kind = ResultKind.TENSOR
        elif ty.kind() == "ListType" and ty.getElementType().kind() == "TensorType":
            kind = ResultKind.TENSOR_LIST
        elif ty.kind() in _SCALAR_RESULTS:
            kind = ResultKind.SCALAR
        else:
            raise Unsupported(f"result of type {ty}")
        if ret.name:
            name = ods_name(ret.name)
        else:
            name = "result" if len(returns) == 1 else f"result{i}"
        if name in arg_names:
            raise Unsupported(f"result '{name}' is named like an argument")
        rules.append(ResultRule(ret.name, name, kind))
    return tuple(rules)


def schema_signature(schema: torch._C.FunctionSchema,
                     tags: frozenset[torch.Tag] = frozenset()) -> OpSignature:
    """The typed op of a schema (e.g. a fused op's, parsed from its table
    row); raises Unsupported when it must go through `fxmlir.call`."""
    if any(a.is_out for a in schema.arguments):
        raise Unsupported("out= variant")
    args = tuple(_arg_rule(a) for a in schema.arguments)
    results = _result_rules(schema, {a.ods_name for a in args})
    return OpSignature(schema, frozenset(tags), args, results)


def _signature(op: OpOverload) -> OpSignature:
    return schema_signature(op._schema, frozenset(op.tags))


def unsupported_reason(op: OpOverload) -> str | None:
    """Why `op` has no typed op, or None when it has one."""
    try:
        _signature(op)
    except Unsupported as e:
        return str(e)
    return None


def op_signature(op: OpOverload) -> OpSignature | None:
    """The typed op of an ATen overload, or None when it must go through
    `fxmlir.call` (see `unsupported_reason`)."""
    try:
        return _signature(op)
    except Unsupported:
        return None


# Ops seen in AOTAutograd forward/backward graphs of MLPs, CNNs and
# transformers (and `linear`, from Dynamo graphs before autodiff), typed
# whether or not torch tags them core; `name` or `name.overload`.
EXTRA_OPS = (
    # linear algebra, shapes and views
    "addmm", "mm", "bmm", "matmul", "linear", "view", "_unsafe_view", "t",
    "transpose.int", "permute", "expand", "clone", "detach", "alias",
    "unsqueeze", "squeeze.dim", "squeeze.dims", "select.int", "slice.Tensor",
    "cat", "stack", "split.Tensor", "split_with_sizes", "_to_copy", "copy",
    # Dynamo's Tensor methods and torch functions before autodiff, kept as
    # the (maybe aliasing, composite) ops they call: `x.to(dtype)` returns x
    # itself when it has that dtype, where `_to_copy` would copy.
    "to.dtype", "to.device", "to.other", "contiguous", "reshape", "pad",
    "arange.default", "arange.start", "arange.start_step", "lift_fresh_copy",
    "scaled_dot_product_attention", "cross_entropy_loss",
    # pointwise
    "add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "mul.Tensor",
    "mul.Scalar", "div.Tensor", "div.Scalar", "neg", "pow.Tensor_Scalar",
    "pow.Tensor_Tensor", "pow.Scalar", "rsqrt", "exp", "log", "sqrt",
    "reciprocal", "sigmoid", "sigmoid_backward", "tanh", "tanh_backward",
    "relu", "threshold_backward", "gelu", "gelu_backward", "silu",
    "silu_backward", "where.self",
    "masked_fill.Scalar", "masked_fill.Tensor", "eq.Tensor", "eq.Scalar",
    "ne.Tensor", "ne.Scalar", "lt.Tensor", "lt.Scalar", "gt.Tensor",
    "gt.Scalar", "le.Tensor", "le.Scalar", "ge.Tensor", "ge.Scalar",
    # reductions and indexing
    "sum.dim_IntList", "sum.default", "mean.dim", "amax", "argmax",
    "var_mean.correction", "index.Tensor", "index_put", "gather",
    "scatter.src", "scatter.value",
    # normalization, softmax, losses
    "native_layer_norm", "native_layer_norm_backward", "native_batch_norm",
    "native_batch_norm_backward", "_native_batch_norm_legit_functional",
    "_native_batch_norm_legit_no_training", "_softmax",
    "_softmax_backward_data", "_log_softmax", "_log_softmax_backward_data",
    "nll_loss_forward", "nll_loss_backward",
    # convolution, pooling, embedding
    "convolution", "convolution_backward", "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward", "avg_pool2d", "avg_pool2d_backward",
    "adaptive_avg_pool2d", "_adaptive_avg_pool2d",
    "_adaptive_avg_pool2d_backward", "embedding", "embedding_dense_backward",
    # attention
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_efficient_attention_backward",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_backward",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_cudnn_attention_backward",
    "_scaled_dot_product_fused_attention_overrideable",
    "_scaled_dot_product_fused_attention_overrideable_backward",
    # factories and randomness
    "scalar_tensor", "full", "zeros", "ones", "empty.memory_format",
    "new_zeros", "full_like", "zeros_like", "ones_like", "empty_like",
    "dropout", "native_dropout", "native_dropout_backward", "bernoulli.p", "rand_like",
    "randn_like",
)
# The activations' own ATen ops (a row of fused_ops.ACTIVATIONS names them).
EXTRA_OPS += tuple(op for activation in ACTIVATIONS for op in activation.aten_ops)


def resolve(qualified: str) -> OpOverload | None:
    """`"add.Tensor"` -> torch.ops.aten.add.Tensor, None if torch lacks it."""
    return op_from_mlir_name(_NAMESPACES["aten"] + qualified)


def aten_overloads() -> list[OpOverload]:
    """Every registered aten overload, sorted by op name."""
    names = {s.name[len("aten::"):] for s in torch._C._jit_get_all_schemas()
             if s.name.startswith("aten::")}
    ops = []
    for name in names:
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            continue
        for overload in packet.overloads():
            ops.append(getattr(packet, overload))
    return sorted(ops, key=mlir_op_name)


def typed_aten_ops() -> list[OpOverload]:
    """The ATen overloads the dialect has typed ops for, sorted by op name:
    the core-tagged ones and EXTRA_OPS that have a signature."""
    wanted = {mlir_op_name(op): op for op in aten_overloads()
              if torch.Tag.core in op.tags}
    for qualified in EXTRA_OPS:
        op = resolve(qualified)
        if op is not None:
            wanted[mlir_op_name(op)] = op
    return [op for _, op in sorted(wanted.items())
            if op_signature(op) is not None]
