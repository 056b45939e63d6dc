"""Loading the op libraries built beside this package into torch:
``libfxmlir_ops.so`` (the fused kernels, fxmlir.ops) and
``libfxmlir_jit_ops.so`` (mlir_jit and the compiler, fxmlir.jit_ops)."""

from __future__ import annotations

from pathlib import Path

import torch


class OpsLibraryNotFoundError(ImportError):
    """An op library is missing: fxmlir was not built (or not installed)."""


def load(name: str) -> Path:
    """Loads the op library `name` of this package; its path."""
    path = Path(__file__).with_name(name)
    if not path.is_file():
        raise OpsLibraryNotFoundError(
            f"fxmlir op library not found at {path}; build fxmlir "
            "(pip install . or the CMake build) to create it",
            path=str(path),
        )
    torch.ops.load_library(str(path))
    return path
