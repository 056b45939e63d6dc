"""Feedback on slow compiles: a step still running after SLOW_STEP_S logs
what it is doing at INFO on `fxmlir` (TORCH_LOGS=fxmlir), and once the
process has spent SLOW_TOTAL_S in round trips one WARNING says how to see
those lines, and what the time went to. Without it a long first step looks
like a hang. Dumps are timed apart (aside()): a slow disk is not blamed on
the round trips."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from typing import Iterator, Mapping

from fxmlir.logs import log

SLOW_STEP_S = 1.0
SLOW_TOTAL_S = 10.0

_state = threading.local()
_total = {"seconds": 0.0, "warned": False}
# Seconds by part: import, passes, jit, export (from the round trips'
# summaries) and dumps (aside(), not in _total).
_parts: dict[str, float] = {}
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
    if outermost:
        _state.aside = 0.0
    start = time.perf_counter()
    try:
        yield
    finally:
        _watchdog.stop(token)
        _state.depth -= 1
        if outermost:
            _count(time.perf_counter() - start - _state.aside)


@contextlib.contextmanager
def aside(part: str) -> Iterator[None]:
    """Time spent on `part` (dumps) inside a step: the warning names it
    apart, and the step's time leaves it out."""
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - start
        _state.aside = getattr(_state, "aside", 0.0) + seconds
        _add(part, seconds)


def round_trip_times(time_ms: Mapping[str, float]) -> None:
    """Adds a round trip's times (its summary's time_ms: import, each pass,
    jit, export) to the parts the warning names."""
    for name, ms in time_ms.items():
        _add(name if name in ("import", "jit", "export") else "passes", ms / 1e3)


def _add(part: str, seconds: float) -> None:
    with _lock:
        _parts[part] = _parts.get(part, 0.0) + seconds


def _count(seconds: float) -> None:
    with _lock:
        _total["seconds"] += seconds
        if _total["warned"] or _total["seconds"] <= SLOW_TOTAL_S:
            return
        _total["warned"] = True
        total, parts = _total["seconds"], dict(_parts)
    log.warning("fxmlir: round trips have taken %.1f s in this process so far (%s); "
                "TORCH_LOGS=fxmlir logs each one, and what takes long", total,
                _parts_text(total, parts))


def _parts_text(total: float, parts: dict[str, float]) -> str:
    """`passes 6.1 s, jit 2.0 s, other 0.9 s; dumps 0.3 s besides`: the
    round trips' parts, longest first; other is the rest of their time
    (Dynamo's graph, subgraph bodies, fallbacks)."""
    dumps = parts.pop("dumps", 0.0)
    parts["other"] = max(0.0, total - sum(parts.values()))
    text = ", ".join(f"{part} {seconds:.1f} s" for part, seconds
                     in sorted(parts.items(), key=lambda item: -item[1]))
    return text + (f"; dumps {dumps:.1f} s besides" if dumps else "")
