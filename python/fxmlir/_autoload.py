"""The startup hook (fxmlir-autoload.pth, installed with the package).

It imports nothing but this module: an import hook acts when torch's own
modules finish importing, so processes that never import torch pay nothing.

- torch._logging: registers the `fxmlir` log and its artifacts before torch
  parses TORCH_LOGS (fxmlir.logs).
- torch: `torch.compile` reads FXMLIR_ROUND_TRIP at each call, so setting it
  inside a script (after `import torch`) routes the calls that follow; a call
  for fxmlir checks its options and the environment then, not at the first
  graph (torch itself hands them to the backend only there); and
  `torch.ops.fxmlir` loads fxmlir's op library on first use, so programs
  saved with fxmlir's ops load without `import fxmlir.ops`.
- torch._dynamo: `torch._dynamo.optimize` reads FXMLIR_ROUND_TRIP too.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (startup time)

if TYPE_CHECKING:  # imported lazily: this module runs in every interpreter
    import importlib.machinery
    from types import ModuleType
    from typing import Any, Callable


def _log() -> Any:
    import logging

    return logging.getLogger("fxmlir")


def _replace_backend(backend: Any, kwargs: dict[str, Any], via: str) -> None:
    """Routes a compile call's string backend to fxmlir when
    FXMLIR_ROUND_TRIP=1, and says so once per process."""
    from fxmlir.config import round_trip_enabled

    if not round_trip_enabled():  # a bad value is an error naming the variable
        return
    if not isinstance(backend, str):
        # torch.compile hands optimize() its backend wrapped, routed already.
        if via == "torch.compile" and not getattr(backend, "__fxmlir_backend__", False):
            _log().warning("fxmlir: FXMLIR_ROUND_TRIP=1: torch.compile with a custom "
                           "backend (%r) left as is", backend)
        return
    kwargs["backend"] = "fxmlir"
    if backend != "fxmlir":
        # Options and modes meant for another backend don't apply.
        kwargs.pop("options", None)
        kwargs.pop("mode", None)
    if (via, backend) not in _confirmed:
        _confirmed.add((via, backend))
        _log().warning("fxmlir: FXMLIR_ROUND_TRIP=1: %s(backend=%r) routed to fxmlir", via,
                       backend)


# The routings already confirmed: one line each per process.
_confirmed: set[tuple[str, str]] = set()


def _routed(original: Callable[..., Any], via: str) -> Callable[..., Any]:
    import functools

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        if via == "torch._dynamo.optimize" and args:
            # optimize(backend, ...): the backend may come positionally.
            kwargs["backend"], args = args[0], args[1:]
        _replace_backend(kwargs.get("backend", "inductor"), kwargs, via)
        if via == "torch.compile" and kwargs.get("backend") == "fxmlir":
            # A bad setting is an error here, not inside Dynamo's
            # BackendCompilerFailed at the first call.
            from fxmlir.config import Options

            Options.from_env().updated(kwargs.get("options"))
        return original(*args, **kwargs)

    call.__fxmlir_routed__ = True  # type: ignore[attr-defined]
    return call


def _on_torch(torch: ModuleType) -> None:
    if not getattr(torch.compile, "__fxmlir_routed__", False):
        torch.compile = _routed(torch.compile, "torch.compile")
    from fxmlir.lazy_ops import install_lazy_namespace

    install_lazy_namespace(torch)


def _on_dynamo(dynamo: ModuleType) -> None:
    if not getattr(dynamo.optimize, "__fxmlir_routed__", False):
        dynamo.optimize = _routed(dynamo.optimize, "torch._dynamo.optimize")


def _on_logging(_: ModuleType) -> None:
    from fxmlir.logs import register

    register()


_HOOKS: dict[str, Callable[[ModuleType], None]] = {
    "torch._logging._registrations": _on_logging,
    "torch": _on_torch,
    "torch._dynamo": _on_dynamo,
}


class _Loader:
    """Runs a hook after the wrapped loader executed its module (a loader
    by protocol: importlib.abc costs startup time)."""

    def __init__(self, loader: Any, hook: Callable[[ModuleType], None]) -> None:
        self.loader = loader
        self.hook = hook

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.hook(module)

    def __getattr__(self, name: str) -> Any:  # resource readers and the like
        return getattr(self.loader, name)


class _Finder:
    """Wraps the loaders of the hooked torch modules (a meta path finder by
    protocol)."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        hook = _HOOKS.get(fullname)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _Loader(spec.loader, hook)
                return spec
        return None


def install() -> None:
    """Installs the hooks: at once for hooked modules already imported, at
    their import for the others (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    for name, hook in _HOOKS.items():
        if name in sys.modules:
            hook(sys.modules[name])
