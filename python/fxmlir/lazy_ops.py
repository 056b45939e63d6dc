"""`torch.ops.fxmlir` that loads fxmlir's op library on first use.

Installed by the startup hook when torch is imported: a program saved with
fxmlir's ops (`torch.export.save` after fxmlir.optimize) then loads in a
fresh process without `import fxmlir.ops`, and when the library cannot load
the error names fxmlir instead of a missing attribute.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


def install_lazy_namespace(torch: ModuleType) -> None:
    from torch._ops import _OpNamespace

    class LazyFxmlirNamespace(_OpNamespace):
        # _OpNamespace names its ops' module after its own class's module;
        # graph code and serialized programs spell them with it.
        __module__ = _OpNamespace.__module__

        def __getattr__(self, op_name: str) -> Any:
            try:
                return super().__getattr__(op_name)
            except AttributeError:
                if op_name.startswith("_"):
                    raise
            if sys.modules.get("fxmlir.ops") is None:
                _load_ops(op_name)
                try:
                    return super().__getattr__(op_name)
                except AttributeError:
                    pass
            from fxmlir import __version__

            raise AttributeError(f"torch.ops.fxmlir.{op_name}: fxmlir {__version__} has no "
                                 "such op (was the program made by another fxmlir version?)")

    if "fxmlir" not in vars(torch.ops):
        torch.ops.fxmlir = LazyFxmlirNamespace("fxmlir")
        torch.ops._dir.append("fxmlir")


def _load_ops(op_name: str) -> None:
    try:
        import fxmlir.ops  # noqa: F401 - loads libfxmlir_ops.so, registers the ops
    except ImportError as e:
        # Not an AttributeError: hasattr() (torch.export.load's op lookup)
        # must not turn this into a missing op.
        raise RuntimeError(f"torch.ops.fxmlir.{op_name} is an op of fxmlir, whose op library "
                           f"did not load: {e}") from e
