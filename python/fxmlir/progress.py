"""Feedback on slow compiles: a step still running after SLOW_STEP_S logs
what it is doing at INFO on `fxmlir` (TORCH_LOGS=fxmlir), and once the
process has spent SLOW_TOTAL_S in round trips one WARNING says how to see
those lines. Without it a long first step looks like a hang."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Iterator

from fxmlir.logs import log

SLOW_STEP_S = 1.0
SLOW_TOTAL_S = 10.0

_state = threading.local()
_total = {"seconds": 0.0, "warned": False}
_lock = threading.Lock()


@contextlib.contextmanager
def timed(what: str) -> Iterator[None]:
    """Logs `what` if it is still running after SLOW_STEP_S; the outermost
    step of a thread (a round trip, not the subgraph bodies or JIT compiles
    inside it) counts towards the process's total."""
    timer = threading.Timer(SLOW_STEP_S, log.info, ("fxmlir: %s (over %.0f s so far)", what,
                                                    SLOW_STEP_S))
    timer.daemon = True
    timer.start()
    outermost = not getattr(_state, "depth", 0)
    _state.depth = getattr(_state, "depth", 0) + 1
    start = time.perf_counter()
    try:
        yield
    finally:
        timer.cancel()
        _state.depth -= 1
        if outermost:
            _count(time.perf_counter() - start)


def _count(seconds: float) -> None:
    with _lock:
        _total["seconds"] += seconds
        if _total["warned"] or _total["seconds"] <= SLOW_TOTAL_S:
            return
        _total["warned"] = True
    log.warning("fxmlir: round trips have taken %.1f s in this process so far; "
                "TORCH_LOGS=fxmlir logs each one, and what takes long", _total["seconds"])
