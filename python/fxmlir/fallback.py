"""The fallback policy: a graph, region or run fxmlir cannot handle is left
to eager with a FallbackWarning naming it and why; under the `strict`
setting (CI) the same message is raised as FallbackError."""

from __future__ import annotations

import warnings

_fallbacks = 0


class FallbackWarning(UserWarning):
    """fxmlir could not handle a graph and used the original one."""


class FallbackError(RuntimeError):
    """A fallback under the `strict` setting: the FallbackWarning's message,
    raised."""


def fall_back(message: str, strict: bool, cause: BaseException | None = None,
              stacklevel: int = 2) -> None:
    """Warns of a fallback, or raises it under `strict`. `stacklevel` counts
    from the caller, as in warnings.warn."""
    global _fallbacks
    _fallbacks += 1
    if strict:
        raise FallbackError(message) from cause
    warnings.warn(message, FallbackWarning, stacklevel=stacklevel + 1)


def count() -> int:
    """The fallbacks this process has had so far: a compile during which the
    count grew is not kept in the warm-start cache (fxmlir/stage_cache.py)."""
    return _fallbacks
