"""Timing: every implementation of a case warm, then timed in alternation
(A B C, C B A, ...) so that drifts (clocks, temperature, other processes)
hit all alike; medians and spreads of the per-call times."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch

from fxmlir.memory import step_peak


@dataclass(frozen=True)
class Timing:
    """Per-call milliseconds of one implementation."""

    samples: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """Interquartile range over the median, in percent."""
        if len(self.samples) < 4:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples, n=4)
        return 100 * (q3 - q1) / self.median

    def text(self) -> str:
        return f"{format_ms(self.median)} ±{self.spread:.0f}%"


def format_ms(ms: float) -> str:
    return f"{ms:.3f}" if ms < 10 else f"{ms:.1f}"


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _time_once(fn: Callable[[], Any], device: str) -> float:
    if device == "cuda":
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)
    begin = time.perf_counter()
    fn()
    return (time.perf_counter() - begin) * 1e3


class CallFailed(Exception):
    """One implementation's call raised: which one, and its error."""

    def __init__(self, name: str, error: Exception) -> None:
        self.name, self.reason = name, f"{type(error).__name__}: {error}"
        super().__init__(f"{name}: {self.reason}")


def measure(fns: dict[str, Callable[[], Any]], device: str, warmup: int,
            reps: int) -> dict[str, Timing]:
    """Each function warmed `warmup` times, then called `reps` times in
    alternating order, one timed call at a time. A call that raises is
    CallFailed, naming its function."""
    def checked(name: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as error:
            raise CallFailed(name, error) from error

    for name, fn in fns.items():
        for _ in range(warmup):
            checked(name, fn)
        synchronize(device)
    samples: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    for rep in range(reps):
        for name in names if rep % 2 == 0 else reversed(names):
            samples[name].append(checked(name, lambda: _time_once(fns[name], device)))
    return {name: Timing(tuple(values)) for name, values in samples.items()}


def first_call_seconds(fn: Callable[[], Any], device: str) -> float:
    """Wall-clock seconds of one call (a compiled function's first call:
    tracing, round trips, code generation, the run)."""
    synchronize(device)
    begin = time.perf_counter()
    fn()
    synchronize(device)
    return time.perf_counter() - begin


def peak_extra_mib(fn: Callable[[], Any], device: str) -> float:
    """Device memory a call needs beyond what was allocated before it (its
    activations, gradients, workspaces): CUDA's allocator counts it; on CPU,
    torch's memory profiler does, over a call after one more (see
    fxmlir.memory.step_peak), in this process."""
    if device != "cuda":
        return step_peak(fn, device).extra / 2**20
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 2**20


def saved_mib(fn: Callable[[], Any], held: Iterable[torch.Tensor] = ()) -> float:
    """What autograd saves for backward during a call, each storage once;
    not the storages of `held` (the parameters): a parameter or a view of
    one saved by reference takes no memory of its own."""
    storages: dict[int, int] = {}
    skipped = {t.untyped_storage().data_ptr() for t in held}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in skipped:
            storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return sum(storages.values()) / 2**20


def copy_gbps(device: str, nbytes: int, warmup: int, reps: int) -> float:
    """The device's copy bandwidth, bytes read plus written per second."""
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).normal_()
    dst = torch.empty_like(src)
    timing = measure({"copy": lambda: dst.copy_(src)}, device, warmup, reps)["copy"]
    return 2 * nbytes / (timing.median * 1e-3) / 1e9
