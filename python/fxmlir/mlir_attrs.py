"""How Python constants are spelled as MLIR attributes, and back.

The importer writes attributes as MLIR text; the exporter reads them back from
the core's JSON form, where every attribute is tagged with its kind
({"int": 1}, {"float": "0.1"}, {"list": [...]}, ...). Values without a
natural attribute travel as one-entry dictionaries: a tuple is
`{tuple = [...]}`, a slice `{slice = [start, stop, step]}`, a layout
`{layout = "strided"}`, a memory format `{memory_format = "channels_last"}`,
`...` is `{ellipsis = []}`, a complex number `{complex = [re, im]}` and an
operator overload `{op = "aten::add.Tensor"}`. Any other Python object
inside a `fxmlir.call` (a callable, an enum of some library) stays on the
Python side: the attribute is `{pyobject = N}`, an index into the import's
table of such objects.
"""

from __future__ import annotations

import math
import struct
from typing import Any, Callable

import torch

from fxmlir.mlir_types import UnsupportedValue, device_attr, dtype_to_mlir, mlir_to_dtype

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}


def string(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable() and ord(ch) < 128:
            out.append(ch)
        else:  # MLIR strings escape bytes as \XX
            out.extend(f"\\{b:02X}" for b in ch.encode())
    return '"' + "".join(out) + '"'


def float_literal(value: float) -> str:
    """A literal that parses back to exactly `value` (nan and inf as bits)."""
    if not math.isfinite(value):
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    text = repr(float(value))
    if "." not in text:  # MLIR needs a '.' in a float literal: 1e-05 -> 1.0e-05
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0" + (f"e{exponent}" if exponent else "")
    return text


def _enum_name(value: Any) -> str:
    return str(value).removeprefix("torch.")


def constant(value: Any, operand: Callable[[Any], int] | None = None,
             pyobject: Callable[[Any], int] | None = None) -> str:
    """An untyped constant (inside a fxmlir.call's args); `operand` maps an FX
    node to its operand index, `pyobject` a value without an attribute to its
    index in the import's object table (without it such values raise
    UnsupportedValue)."""
    if operand is not None and isinstance(value, torch.fx.Node):
        return f"#fxmlir.operand<{operand(value)}>"

    def rec(v: Any) -> str:
        return constant(v, operand, pyobject)

    if value is None:
        return "#fxmlir.none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{float_literal(value)} : f64"
    if isinstance(value, str):
        return string(value)
    if isinstance(value, torch.dtype):
        return dtype_to_mlir(value)
    if isinstance(value, torch.device):
        return device_attr(value)
    if isinstance(value, torch.layout):
        return f"{{layout = {string(_enum_name(value))}}}"
    if isinstance(value, torch.memory_format):
        return f"{{memory_format = {string(_enum_name(value))}}}"
    if isinstance(value, list):
        return "[" + ", ".join(map(rec, value)) + "]"
    if isinstance(value, tuple):
        return "{tuple = [" + ", ".join(map(rec, value)) + "]}"
    if isinstance(value, slice):
        return "{slice = [" + ", ".join(map(rec, (value.start, value.stop, value.step))) + "]}"
    if value is Ellipsis:
        return "{ellipsis = []}"
    if isinstance(value, complex):
        return f"{{complex = [{rec(value.real)}, {rec(value.imag)}]}}"
    if isinstance(value, torch._ops.OpOverload):
        return f"{{op = {string(value._schema.name + '.' + value._overloadname)}}}"
    if pyobject is not None:
        return f"{{pyobject = {pyobject(value)} : i64}}"
    raise UnsupportedValue(f"constant {value!r} of type {type(value).__name__} "
                           "has no fxmlir attribute")


def typed(value: Any, kind: str) -> str:
    """A constant for an attribute of a generated op, by its schema kind."""
    if kind == "int":
        return f"{int(value)} : i64"
    if kind == "float":
        return f"{float_literal(float(value))} : f64"
    if kind == "bool":
        return "true" if value else "false"
    if kind in ("str", "layout", "memory_format"):
        return string(value if isinstance(value, str) else _enum_name(value))
    if kind == "scalar":
        return constant(value)
    if kind == "dtype":
        return dtype_to_mlir(value)
    if kind == "device":
        return device_attr(value)
    if kind == "int_list":
        return "array<i64" + "".join(f"{', ' if i else ': '}{int(v)}" for i, v in enumerate(value)) + ">"
    if kind == "float_list":
        return "array<f64" + "".join(f"{', ' if i else ': '}{float_literal(float(v))}"
                                     for i, v in enumerate(value)) + ">"
    if kind == "bool_list":
        return "array<i1" + "".join(f"{', ' if i else ': '}{'true' if v else 'false'}"
                                    for i, v in enumerate(value)) + ">"
    raise UnsupportedValue(f"unknown attribute kind {kind!r}")


def _overload(qualified: str) -> torch._ops.OpOverload:
    """torch.ops.<ns>.<name>.<overload> from "ns::name.overload"."""
    namespace, _, name = qualified.partition("::")
    op_name, _, overload = name.rpartition(".")
    return getattr(getattr(getattr(torch.ops, namespace), op_name), overload)


def decode(attr: dict, operands: list[Any] | None = None,
           pyobjects: list[Any] | None = None) -> Any:
    """A Python value from the core's tagged JSON attribute; `operands` and
    `pyobjects` resolve operand references and object-table indices."""
    ((tag, value),) = attr.items()
    if tag in ("int", "bool", "str"):
        return value
    if tag == "float":
        return float(value)
    if tag == "none":
        return None
    if tag == "dtype":
        return mlir_to_dtype(value)
    if tag == "device":
        return torch.device(value)
    if tag == "ints" or tag == "bools":
        return list(value)
    if tag == "floats":
        return [float(v) for v in value]
    if tag == "operand":
        if operands is None:
            raise UnsupportedValue("operand reference outside a fxmlir.call")
        return operands[value]
    if tag == "list":
        return [decode(v, operands, pyobjects) for v in value]
    if tag == "dict":
        if len(value) == 1:
            ((key, inner),) = value.items()
            decoded = decode(inner, operands, pyobjects)
            if key == "tuple":
                return tuple(decoded)
            if key == "slice":
                return slice(*decoded)
            if key in ("layout", "memory_format"):
                return getattr(torch, decoded)
            if key == "ellipsis":
                return Ellipsis
            if key == "complex":
                return complex(*decoded)
            if key == "op":
                return _overload(decoded)
            if key == "pyobject":
                if pyobjects is None:
                    raise UnsupportedValue("object-table reference outside a fxmlir.call")
                return pyobjects[decoded]
        return {k: decode(v, operands, pyobjects) for k, v in value.items()}
    raise UnsupportedValue(f"attribute {attr} has no Python value")
