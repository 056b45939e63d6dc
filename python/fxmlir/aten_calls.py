"""Which typed op an OpOverload call becomes, its arguments bound to the
schema by name, and rebuilt from a typed op's operands and attributes
(schema.py holds the mapping rule)."""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import torch

from fxmlir import dynamo_calls, mlir_attrs, schema
from fxmlir.dynamo_calls import Call

_LIST_KINDS = (schema.ArgKind.TENSOR_LIST, schema.ArgKind.OPTIONAL_TENSOR_LIST)


@functools.cache
def typed_signature(op: torch._ops.OpOverload) -> schema.OpSignature | None:
    """The typed op an ATen or fxmlir overload maps to, if any."""
    if op.namespace not in ("aten", "fxmlir"):
        return None
    return schema.op_signature(op)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def typed_candidates(opcode: str, target: Any, args: tuple, kwargs: dict,
                     is_tensor: Callable[[Any], bool]) -> list[Call]:
    """The ATen calls an FX call may be spelled as, arguments normalized,
    most specific first. OpOverloads are themselves; `X.Tensor` with a number
    for `other` (AOTAutograd's `mul.Tensor(x, 0.5)`) is also tried as
    `X.Scalar`; the Python calls of Dynamo's graphs map to the ATen op they
    call (dynamo_calls.py)."""
    if opcode == "call_function" and isinstance(target, torch._ops.OpOverload):
        calls: list[Call] = [(target, args, kwargs)]
        if target._overloadname == "Tensor" and len(args) == 2 and _is_number(args[1]):
            scalar = getattr(target.overloadpacket, "Scalar", None)
            if scalar is not None:
                calls.append((scalar, args, kwargs))
        return calls
    return dynamo_calls.aten_calls(opcode, target, args, kwargs, is_tensor)


def _fits(rule: schema.ArgRule, value: Any, is_tensor: Callable[[Any], bool]) -> bool:
    """Whether `value` has the Python type the schema argument takes."""
    kind, attr = rule.kind, rule.attr
    if kind is schema.ArgKind.TENSOR:
        return is_tensor(value)
    if kind is schema.ArgKind.OPTIONAL_TENSOR:
        return value is None or is_tensor(value)
    if kind in _LIST_KINDS:
        return isinstance(value, (list, tuple)) and all(
            is_tensor(v) or (v is None and kind is schema.ArgKind.OPTIONAL_TENSOR_LIST)
            for v in value)
    if value is None:
        return rule.optional
    expected = _ATTR_TYPES.get(attr)
    if expected is not None:
        return isinstance(value, expected) and (attr is schema.AttrKind.BOOL or
                                                attr is schema.AttrKind.SCALAR or
                                                not isinstance(value, bool))
    element = _LIST_ELEMENT_TYPES[attr]
    return isinstance(value, (list, tuple)) and all(isinstance(v, element) for v in value)


# The Python types each attribute kind takes (bools only where said).
_ATTR_TYPES = {
    schema.AttrKind.INT: int, schema.AttrKind.FLOAT: (float, int),
    schema.AttrKind.BOOL: bool, schema.AttrKind.STR: str,
    schema.AttrKind.SCALAR: (int, float, bool), schema.AttrKind.DTYPE: torch.dtype,
    schema.AttrKind.DEVICE: (torch.device, str), schema.AttrKind.LAYOUT: torch.layout,
    schema.AttrKind.MEMORY_FORMAT: torch.memory_format,
}
_LIST_ELEMENT_TYPES = {schema.AttrKind.INT_LIST: int, schema.AttrKind.FLOAT_LIST: (float, int),
                       schema.AttrKind.BOOL_LIST: bool}


def fits(signature: schema.OpSignature, bound: dict[str, Any],
         is_tensor: Callable[[Any], bool]) -> bool:
    """Whether bound arguments have the types the signature takes."""
    return all(_fits(rule, bound[rule.name], is_tensor) for rule in signature.args)


def has_operand_segments(signature: schema.OpSignature) -> bool:
    """Whether the op carries operandSegmentSizes (several list operands)."""
    return sum(a.kind in _LIST_KINDS for a in signature.args) > 1


class _Binder(NamedTuple):
    """What binding a call to one overload needs of its schema, read once."""

    positional: tuple[str, ...]
    names: frozenset[str]
    # name -> default, in schema order; _REQUIRED where there is none.
    defaults: dict[str, Any]
    sized: tuple[tuple[str, int], ...]  # `int[N]` arguments and their N


_REQUIRED = object()


@functools.cache
def _binder(op: torch._ops.OpOverload) -> _Binder:
    arguments = op._schema.arguments
    defaults = {}
    for a in arguments:
        if a.has_default_value():
            defaults[a.name] = schema.default_value(a)
        elif str(a.type).startswith("Optional["):
            defaults[a.name] = None
        else:
            defaults[a.name] = _REQUIRED
    return _Binder(tuple(a.name for a in arguments if not a.kwarg_only),
                   frozenset(a.name for a in arguments), defaults,
                   tuple((a.name, a.N) for a in arguments if a.N))


def bind_arguments(op: torch._ops.OpOverload, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Schema argument name -> value, defaults filled in; TypeError if the
    call does not fit the schema."""
    binder = _binder(op)
    if len(args) > len(binder.positional):
        raise TypeError(f"{op} takes {len(binder.positional)} positional arguments")
    if not binder.names.issuperset(kwargs):
        raise TypeError(f"{op} has no argument {sorted(set(kwargs) - binder.names)}")
    bound = dict(zip(binder.positional, args))
    for name, default in binder.defaults.items():
        if name in bound:
            continue
        if name in kwargs:
            bound[name] = kwargs[name]
        elif default is _REQUIRED:
            raise TypeError(f"{op} misses argument {name}")
        else:  # a fresh list each call: callers may keep what they get
            bound[name] = list(default) if isinstance(default, list) else default
    # A sized int list (`int[1] dim`) takes one int for all its entries, as
    # torch's argument parser does: `x.mean(-1)` is mean.dim([-1]).
    for name, size in binder.sized:
        value = bound[name]
        if isinstance(value, int) and not isinstance(value, bool):
            bound[name] = [value] * size
    return bound


def unbind_arguments(op: torch._ops.OpOverload, operands: list[Any],
                     attributes: dict[str, dict]) -> tuple[tuple, dict[str, Any]]:
    """(args, kwargs) to call `op` with, from a typed op's operands (FX nodes
    or None) and its tagged JSON attributes."""
    signature = typed_signature(op)
    if signature is None:
        raise TypeError(f"{op} has no typed fxmlir op")
    lists = [a for a in signature.args if a.kind in _LIST_KINDS]
    if "operandSegmentSizes" in attributes:
        sizes = iter(mlir_attrs.decode(attributes["operandSegmentSizes"]))
    else:
        singles = sum(1 for a in signature.args if a.is_operand) - len(lists)
        sizes = iter([len(operands) - singles] * len(lists))
    values = iter(operands)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for rule in signature.args:
        if rule.kind in _LIST_KINDS:
            value = [next(values) for _ in range(next(sizes))]
        elif rule.is_operand:
            value = next(values)
        elif rule.ods_name in attributes:
            value = mlir_attrs.decode(attributes[rule.ods_name])
            if rule.attr in (schema.AttrKind.LAYOUT, schema.AttrKind.MEMORY_FORMAT):
                value = getattr(torch, value)
        else:
            value = None
        if rule.kwarg_only:
            kwargs[rule.name] = value
        else:
            args.append(value)
    return tuple(args), kwargs
