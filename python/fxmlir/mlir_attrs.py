"""Python constants as the core's tagged JSON attributes, and back: one
codec for the importer (encode: constant, typed) and the exporter (decode).

Every attribute is tagged with its kind ({"int": 1}, {"float": "0.1"},
{"list": [...]}, ...); the core alone spells them in MLIR. Values without a
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

from typing import Any, Callable

import torch

from fxmlir.mlir_types import UnsupportedValue, dtype_to_mlir, mlir_to_dtype

def _enum_name(value: Any) -> str:
    return str(value).removeprefix("torch.")


def _float(value: float) -> dict[str, str]:
    # As text, so that inf and nan travel too; repr round-trips exactly.
    return {"float": repr(float(value))}


def _wrapped(key: str, value: dict[str, Any]) -> dict[str, Any]:
    """A value without an attribute of its own: a one-entry dictionary."""
    return {"dict": {key: value}}


def constant(value: Any, operand: Callable[[Any], int] | None = None,
             pyobject: Callable[[Any], int] | None = None) -> dict[str, Any]:
    """An untyped constant (inside a fxmlir.call's args); `operand` maps an FX
    node to its operand index, `pyobject` a value without an attribute to its
    index in the import's object table (without it such values raise
    UnsupportedValue)."""
    if operand is not None and isinstance(value, torch.fx.Node):
        return {"operand": operand(value)}

    def rec(v: Any) -> dict[str, Any]:
        return constant(v, operand, pyobject)

    if value is None:
        return {"none": None}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, torch.dtype):
        return {"dtype": dtype_to_mlir(value)}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.layout):
        return _wrapped("layout", {"str": _enum_name(value)})
    if isinstance(value, torch.memory_format):
        return _wrapped("memory_format", {"str": _enum_name(value)})
    if isinstance(value, list):
        return {"list": [rec(v) for v in value]}
    if isinstance(value, tuple):
        return _wrapped("tuple", {"list": [rec(v) for v in value]})
    if isinstance(value, slice):
        return _wrapped("slice", {"list": [rec(value.start), rec(value.stop), rec(value.step)]})
    if value is Ellipsis:
        return _wrapped("ellipsis", {"list": []})
    if isinstance(value, complex):
        return _wrapped("complex", {"list": [rec(value.real), rec(value.imag)]})
    if isinstance(value, torch._ops.OpOverload):
        return _wrapped("op", {"str": value._schema.name + "." + value._overloadname})
    if pyobject is not None:
        return _wrapped("pyobject", {"int": pyobject(value)})
    raise UnsupportedValue(f"constant {value!r} of type {type(value).__name__} "
                           "has no fxmlir attribute")


def typed(value: Any, kind: str) -> dict[str, Any]:
    """A constant for an attribute of a generated op, by its schema kind."""
    if kind == "int":
        return {"int": int(value)}
    if kind == "float":
        return _float(value)
    if kind == "bool":
        return {"bool": bool(value)}
    if kind in ("str", "layout", "memory_format"):
        return {"str": value if isinstance(value, str) else _enum_name(value)}
    if kind == "scalar":
        return constant(value)
    if kind == "dtype":
        return {"dtype": dtype_to_mlir(value)}
    if kind == "device":
        return {"device": str(torch.device(value))}
    if kind == "int_list":
        return {"ints": [int(v) for v in value]}
    if kind == "float_list":
        return {"floats": [repr(float(v)) for v in value]}
    if kind == "bool_list":
        return {"bools": [bool(v) for v in value]}
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
    if tag in ("ints", "i32s", "bools"):
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
