"""The ATen calls that the Python calls of Dynamo's graphs (before autodiff)
stand for: torch builtins, Python operators, Tensor methods, indexing and
torch.nn.functional wrappers, their arguments put the way the ATen schema
takes them. Each rule gives the op the Python call itself dispatches to, so
a typed op means exactly what the call did, views and aliases included
(`x.to(dtype)` is `to.dtype`, which returns x when it has that dtype)."""

from __future__ import annotations

import inspect
import operator
import types
from typing import Any, Callable

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch.nn import _reduction

from fxmlir.fake_values import fake_value
from fxmlir.fused_ops import ACTIVATIONS

Call = tuple[torch._ops.OpOverload, tuple, dict]
IsTensor = Callable[[Any], bool]

_aten = torch.ops.aten

# Modules whose builtins are direct bindings of ATen ops (Dynamo graphs call
# them before autodiff: torch._C._nn.linear, torch.relu, ...).
_ATEN_BINDING_MODULES = ("torch", "torch._C._nn", "torch._C._VariableFunctions",
                         "torch._C._special", "torch._C._linalg")

# Python operators Dynamo records before autodiff, by the ATen op they call
# on tensors (`x + b` is operator.add, `0.5 * x` operator.mul).
_OPERATOR_OPS = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul",
    operator.truediv: "div", operator.neg: "neg", operator.pow: "pow",
    operator.eq: "eq", operator.ne: "ne", operator.lt: "lt", operator.le: "le",
    operator.gt: "gt", operator.ge: "ge", operator.matmul: "matmul",
}
# Operators whose operands may swap: `0.5 * x` is `x * 0.5`, bit for bit.
_COMMUTATIVE = {"add", "mul"}
# torch.nn.functional wrappers that are one ATen op on their input when not
# in place (Dynamo records them as Python functions): importing them as the
# op lets patterns (bias_add + relu/silu/dropout) see them before autodiff.
_FUNCTIONAL_OPS = {F.relu: "relu", F.silu: "silu", F.dropout: "dropout"} | {
    getattr(F, a.aten_ops[0]): a.aten_ops[0] for a in ACTIVATIONS
    if a.aten_ops and isinstance(getattr(F, a.aten_ops[0], None), types.FunctionType)}
# Tensor methods that take sizes as varargs (`x.view(2, -1)`) where their
# ATen op takes one list.
_VARARG_SIZE_METHODS = {"view", "reshape", "expand", "permute", "repeat"}
# Tensor methods that are `to(dtype)`.
_DTYPE_METHODS = {
    "float": torch.float32, "double": torch.float64, "half": torch.float16,
    "bfloat16": torch.bfloat16, "int": torch.int32, "long": torch.int64,
    "short": torch.int16, "char": torch.int8, "byte": torch.uint8, "bool": torch.bool,
}


def aten_calls(opcode: str, target: Any, args: tuple, kwargs: dict,
               is_tensor: IsTensor) -> list[Call]:
    """The ATen calls a Dynamo call may be spelled as, most specific first;
    none when it is not one ATen op on these arguments."""
    if opcode == "call_function" and target in _OPERATOR_OPS:
        name = _OPERATOR_OPS[target]
        if name in _COMMUTATIVE and len(args) == 2 and not is_tensor(args[0]) \
                and is_tensor(args[1]):
            args = (args[1], args[0])
        return [(op, args, kwargs) for op in overloads(name)]
    if opcode == "call_function" and target in _FUNCTIONAL_OPS:
        bound = _bind(target, args, kwargs)
        if bound is None or bound.pop("inplace"):
            return []
        return [(op, tuple(bound.values()), {}) for op in overloads(_FUNCTIONAL_OPS[target])]
    if opcode == "call_function" and target in _SPECIAL_FUNCTIONS:
        return _SPECIAL_FUNCTIONS[target](args, kwargs, is_tensor)
    if opcode == "call_function":
        return [(op, args, kwargs) for op in builtin_overloads(target)]
    if opcode != "call_method" or not isinstance(target, str):
        return []
    if target == "to":
        return _to(args, kwargs, is_tensor)
    if target in _DTYPE_METHODS:
        return [(_aten.to.dtype, (args[0], _DTYPE_METHODS[target]), kwargs)] \
            if len(args) == 1 else []
    if target in _VARARG_SIZE_METHODS and len(args) > 1 and \
            all(isinstance(a, int) or _is_size(a) for a in args[1:]):
        args = (args[0], list(args[1:]))
    return [(op, args, kwargs) for op in overloads(target)]


def _is_size(value: Any) -> bool:
    """Whether `value` is a node of a symbolic size (a SymInt)."""
    return isinstance(value, fx.Node) and isinstance(fake_value(value), torch.SymInt)


def builtin_overloads(fn: Any) -> list[torch._ops.OpOverload]:
    """The ATen overloads a torch builtin function may dispatch to."""
    if not isinstance(fn, types.BuiltinFunctionType) or \
            getattr(fn, "__module__", None) not in _ATEN_BINDING_MODULES:
        return []
    return overloads(fn.__name__)


def overloads(name: str) -> list[torch._ops.OpOverload]:
    """Every overload of the ATen op `name`."""
    packet = getattr(_aten, name, None)
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        return []
    return [getattr(packet, overload) for overload in packet.overloads()]


def _bind(fn: Callable, args: tuple, kwargs: dict) -> dict[str, Any] | None:
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return dict(bound.arguments)


def _is_int(value: Any) -> bool:
    return type(value) is int


def _getitem(args: tuple, kwargs: dict, is_tensor: IsTensor) -> list[Call]:
    """`x[index]` with one slice, int or None besides full slices and an
    Ellipsis: the one view op it is (`x[..., :8]` is slice(x, -1, None, 8));
    `x[...]` and `x[:]` are an alias. Other indexing stays a Python call."""
    source, index = args
    value = fake_value(source)
    if not is_tensor(source) or not isinstance(value, torch.Tensor) or kwargs:
        return []
    items = list(index) if isinstance(index, tuple) else [index]

    def basic(item: Any) -> bool:
        if isinstance(item, slice):
            return all(v is None or _is_int(v) for v in (item.start, item.stop, item.step)) \
                and (item.step is None or item.step > 0)
        return item is None or item is Ellipsis or _is_int(item)

    if not all(basic(i) for i in items) or items.count(Ellipsis) > 1:
        return []
    indexed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if indexed > value.dim():
        return []
    full = slice(None, None, None)
    steps = [(position, i) for position, i in enumerate(items)
             if i is not Ellipsis and i != full]
    if not steps:
        return [(_aten.alias.default, (source,), {})]
    if len(steps) > 1:
        return []
    position, item = steps[0]
    before = items[:position]
    dim = sum(1 for i in before if i is not Ellipsis) + \
        (value.dim() - indexed if Ellipsis in before else 0)
    if item is None:
        return [(_aten.unsqueeze.default, (source, dim), {})]
    if _is_int(item):
        return [(_aten.select.int, (source, dim, item), {})]
    return [(_aten.slice.Tensor, (source, dim, item.start, item.stop, item.step or 1), {})]


def _to(args: tuple, kwargs: dict, is_tensor: IsTensor) -> list[Call]:
    """`x.to(...)` as the overload torch's argument parser picks:
    `to(other)`, `to(dtype)`, and `to(device[, dtype])` with the dtype
    defaulting to x's own."""
    source, *rest = args
    if rest and is_tensor(rest[0]):
        return [(_aten.to.other, args, kwargs)]
    kwargs = dict(kwargs)
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    if rest and isinstance(rest[0], (torch.device, str)):
        device = rest.pop(0)
    if rest and isinstance(rest[0], torch.dtype):
        dtype = rest.pop(0)
    if device is None:
        return [] if dtype is None else [(_aten.to.dtype, (source, dtype, *rest), kwargs)]
    value = fake_value(source)
    if dtype is None and isinstance(value, torch.Tensor):
        dtype = value.dtype
    return [(_aten.to.device, (source, device, dtype, *rest), kwargs)]


def _embedding(args: tuple, kwargs: dict, is_tensor: IsTensor) -> list[Call]:
    """F.embedding without max_norm (which renormalizes the weight in
    place) is aten.embedding, its padding index made non-negative."""
    bound = _bind(F.embedding, args, kwargs)
    weight = fake_value(bound["weight"]) if bound else None
    if bound is None or bound["max_norm"] is not None or not isinstance(weight, torch.Tensor):
        return []
    padding_idx = bound["padding_idx"]
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx += weight.size(0)
    return [(_aten.embedding.default, (bound["weight"], bound["input"], padding_idx,
                                       bound["scale_grad_by_freq"], bound["sparse"]), {})]


def _cross_entropy(args: tuple, kwargs: dict, is_tensor: IsTensor) -> list[Call]:
    """F.cross_entropy is aten.cross_entropy_loss with the reduction as
    its enum (legacy size_average/reduce folded in)."""
    bound = _bind(F.cross_entropy, args, kwargs)
    if bound is None:
        return []
    reduction = bound["reduction"]
    if bound["size_average"] is not None or bound["reduce"] is not None:
        reduction = _reduction.legacy_get_string(bound["size_average"], bound["reduce"])
    try:
        reduction = _reduction.get_enum(reduction)
    except ValueError:
        return []
    return [(_aten.cross_entropy_loss.default,
             (bound["input"], bound["target"], bound["weight"], reduction,
              bound["ignore_index"], bound["label_smoothing"]), {})]


def _tensor(args: tuple, kwargs: dict, is_tensor: IsTensor) -> list[Call]:
    """torch.tensor of a number is scalar_tensor and of an empty (nested)
    list an empty tensor, dtype and device as torch inferred them; other
    data stays a Python call."""
    if len(args) != 1 or set(kwargs) - {"dtype", "device"}:
        return []
    (data,) = args

    def empty(item: Any) -> bool:
        return isinstance(item, (list, tuple)) and all(empty(i) for i in item)

    if isinstance(data, (bool, int, float)):
        inferred = {bool: torch.bool, int: torch.int64}.get(type(data),
                                                           torch.get_default_dtype())
        return [(_aten.scalar_tensor.default, (data,),
                 {**kwargs, "dtype": kwargs.get("dtype") or inferred})]
    if empty(data):
        shape = []
        while isinstance(data, (list, tuple)):
            shape.append(len(data))
            data = data[0] if data else None
        dtype = kwargs.get("dtype") or torch.get_default_dtype()
        return [(_aten.empty.memory_format, (shape,), {**kwargs, "dtype": dtype})]
    return []


_SPECIAL_FUNCTIONS: dict[Any, Callable[[tuple, dict, IsTensor], list[Call]]] = {
    operator.getitem: _getitem,
    F.embedding: _embedding,
    F.cross_entropy: _cross_entropy,
    torch.tensor: _tensor,
}
