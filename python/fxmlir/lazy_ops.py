"""`torch.ops.fxmlir` that loads fxmlir's op library on first use, and
AOTInductor packages that load it before they need it.

Installed by the startup hook when torch is imported: a program saved with
fxmlir's ops (`torch.export.save` after fxmlir.optimize) then loads in a
fresh process without `import fxmlir.ops`, and when the library cannot load
the error names fxmlir instead of a missing attribute. An AOTInductor
package calls its ops from C++ by name, never through `torch.ops`: its
loader looks for fxmlir's ops in the package's extern-kernel tables first.
"""

from __future__ import annotations

import importlib
import os
import sys
import zipfile
from types import ModuleType
from typing import Any

# How an AOTInductor package's extern-kernel table (a .json beside the
# model's .so) names an op of fxmlir.
_AOTI_TARGET = b'"target": "fxmlir::'


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
            if sys.modules.get(_library_module(op_name)) is None:
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
    _install_aoti_loader(torch)


def _install_aoti_loader(torch: ModuleType) -> None:
    """Wraps torch's AOTInductor package loader (every Python path to a
    package, aoti_load_package and torch._inductor.package, creates one)."""
    aoti = getattr(torch._C, "_aoti", None)
    loader = getattr(aoti, "AOTIModelPackageLoader", None)
    if loader is None or getattr(loader, "__fxmlir_loader__", False):
        return

    class FxmlirAwareLoader(loader):
        __fxmlir_loader__ = True

        def __init__(self, path: Any, *args: Any) -> None:
            target = _fxmlir_op_in_package(path)
            if target is not None and sys.modules.get(_library_module(target)) is None:
                _load_ops(target)
            super().__init__(path, *args)

    FxmlirAwareLoader.__name__ = FxmlirAwareLoader.__qualname__ = loader.__name__
    aoti.AOTIModelPackageLoader = FxmlirAwareLoader


def _fxmlir_op_in_package(path: Any) -> str | None:
    """The first fxmlir op an AOTInductor package's kernels call, if any."""
    try:
        with zipfile.ZipFile(os.fspath(path)) as archive:
            for name in archive.namelist():
                if not name.endswith(".json"):
                    continue
                data = archive.read(name)
                start = data.find(_AOTI_TARGET)
                if start >= 0:
                    start += len(_AOTI_TARGET)
                    return data[start:data.find(b'"', start)].decode()
    except (OSError, TypeError, zipfile.BadZipFile):
        pass  # torch's loader says what is wrong with the file
    return None


def _library_module(op_name: str) -> str:
    """The module that loads the op library of `op_name`: fxmlir.jit_ops for
    mlir_jit (it needs the compiler), fxmlir.ops for the fused kernels."""
    from fxmlir.fused_ops import Family, by_name

    op = by_name().get(op_name)
    return "fxmlir.jit_ops" if op is not None and op.family is Family.JIT else "fxmlir.ops"


def _load_ops(op_name: str) -> None:
    try:
        importlib.import_module(_library_module(op_name))  # registers the ops
    except ImportError as e:
        # Not an AttributeError: hasattr() (torch.export.load's op lookup)
        # must not turn this into a missing op.
        raise RuntimeError(f"torch.ops.fxmlir.{op_name} is an op of fxmlir, whose op library "
                           f"did not load: {e}") from e
