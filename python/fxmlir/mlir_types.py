"""How torch values are typed in the core's JSON graph, and back.

A tensor is {"kind": "tensor", "shape": [...], "dtype": "bf16", "device":
"cuda:0"}, -1 for a symbolic dim (the core makes it a ranked tensor whose
encoding is the device); Python scalars and SymInts/SymFloats/SymBools are
i64/f64/i1 scalars and None is {"kind": "none"}. Element types are named as
the core names them ("f32", "si64").
"""

from __future__ import annotations

from typing import Any

import torch

_DTYPE_TO_MLIR: dict[torch.dtype, str] = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float8_e4m3fn: "f8E4M3FN",
    torch.float8_e5m2: "f8E5M2",
    torch.int8: "si8",
    torch.int16: "si16",
    torch.int32: "si32",
    torch.int64: "si64",
    torch.uint8: "ui8",
    torch.bool: "i1",
    torch.complex64: "complex<f32>",
    torch.complex128: "complex<f64>",
}
_MLIR_TO_DTYPE = {v: k for k, v in _DTYPE_TO_MLIR.items()}


class UnsupportedValue(ValueError):
    """A value that has no fxmlir type (e.g. a quantized tensor)."""


def dtype_to_mlir(dtype: torch.dtype) -> str:
    try:
        return _DTYPE_TO_MLIR[dtype]
    except KeyError:
        raise UnsupportedValue(f"dtype {dtype} has no fxmlir element type") from None


def mlir_to_dtype(name: str) -> torch.dtype:
    try:
        return _MLIR_TO_DTYPE[name]
    except KeyError:
        raise UnsupportedValue(f"element type {name} has no torch dtype") from None


def _dim(size: Any) -> int:
    # A SymInt that the shape environment has pinned to a constant is still a
    # symbol in the graph; only plain ints are static dims (-1: dynamic).
    return size if type(size) is int else -1


def tensor_type(tensor: torch.Tensor) -> dict[str, Any]:
    if tensor.layout != torch.strided or tensor.is_quantized:
        raise UnsupportedValue(f"{tensor.layout} tensors are not supported")
    return {"kind": "tensor", "shape": [_dim(s) for s in tensor.shape],
            "dtype": dtype_to_mlir(tensor.dtype), "device": str(tensor.device)}


NONE = {"kind": "none"}


def value_type(value: Any) -> dict[str, Any]:
    """The type of an FX node's `meta["val"]` (a single value), in the
    core's JSON form."""
    if isinstance(value, torch.Tensor):
        return tensor_type(value)
    if isinstance(value, (bool, torch.SymBool)):
        return {"kind": "scalar", "dtype": "i1"}
    if isinstance(value, (int, torch.SymInt)):
        return {"kind": "scalar", "dtype": "i64"}
    if isinstance(value, (float, torch.SymFloat)):
        return {"kind": "scalar", "dtype": "f64"}
    if value is None:
        return NONE
    raise UnsupportedValue(f"values of type {type(value).__name__} are not supported")


def is_tensor(type_: dict[str, Any]) -> bool:
    return type_["kind"] == "tensor"
