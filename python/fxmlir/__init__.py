"""fxmlir: round-trip PyTorch training graphs through MLIR and fuse them.

    torch.compile(model, backend="fxmlir")
    torch.compile(model, backend=fxmlir.backend(passes="none", dump_dir="dumps"))
    fxmlir.optimize(torch.export.export(model, args))

Importing this package is cheap (no torch import): the .pth startup hook
imports it in every interpreter.
"""

from __future__ import annotations

from fxmlir._version import SUPPORTED_TORCH, __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (startup time)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SUPPORTED_TORCH", "__version__", "backend", "optimize", "passes"]


def __getattr__(name: str) -> Any:
    # Lazy, so that `import fxmlir` does not import torch.
    if name == "backend":
        from fxmlir.dynamo_backend import backend

        return backend
    if name == "optimize":
        from fxmlir.programs import optimize

        return optimize
    if name == "passes":
        import fxmlir.passes as passes

        return passes
    raise AttributeError(f"module 'fxmlir' has no attribute {name!r}")
