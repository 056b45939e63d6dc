"""Feedback on slow compiles: a step still running after SLOW_STEP_S logs
what it is doing at INFO on `fxmlir` (TORCH_LOGS=fxmlir), and once the
process has spent SLOW_TOTAL_S in round trips one WARNING says how to see
those lines. Without it a long first step looks like a hang."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from typing import Iterator

from fxmlir.logs import log

SLOW_STEP_S = 1.0
SLOW_TOTAL_S = 10.0

_state = threading.local()
_total = {"seconds": 0.0, "warned": False}
_lock = threading.Lock()


class _Watchdog:
    """One daemon thread for every step in flight: it logs each step still
    running at its deadline (a Timer per step cost a thread per round trip)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._steps: dict[int, tuple[float, str]] = {}  # token -> (deadline, what)
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    def start(self, what: str) -> int:
        with self._changed:
            token = next(self._tokens)
            self._steps[token] = (time.monotonic() + SLOW_STEP_S, what)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fxmlir-progress",
                                                daemon=True)
                self._thread.start()
            self._changed.notify()
        return token

    def stop(self, token: int) -> None:
        with self._changed:
            self._steps.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._changed:
                due = self._due()
                while not due:
                    deadlines = [deadline for deadline, _ in self._steps.values()]
                    self._changed.wait(min(deadlines) - time.monotonic() if deadlines else None)
                    due = self._due()
                late = [self._steps.pop(token)[1] for token in due]
            for what in late:  # outside the lock: a slow handler delays no step
                log.info("fxmlir: %s (over %.0f s so far)", what, SLOW_STEP_S)

    def _due(self) -> list[int]:
        now = time.monotonic()
        return [token for token, (deadline, _) in self._steps.items() if deadline <= now]


_watchdog = _Watchdog()
# A forked child has no watchdog thread: it starts its own.
os.register_at_fork(after_in_child=lambda: globals().update(_watchdog=_Watchdog()))


@contextlib.contextmanager
def timed(what: str) -> Iterator[None]:
    """Logs `what` if it is still running after SLOW_STEP_S; the outermost
    step of a thread (a round trip, not the subgraph bodies or JIT compiles
    inside it) counts towards the process's total."""
    token = _watchdog.start(what)
    outermost = not getattr(_state, "depth", 0)
    _state.depth = getattr(_state, "depth", 0) + 1
    start = time.perf_counter()
    try:
        yield
    finally:
        _watchdog.stop(token)
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
