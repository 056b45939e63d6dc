"""What a training step holds in memory: its peak, from torch's memory
profiler (CPU tensors have no allocator statistics to read), and what an
AOTAutograd forward graph saves for backward, from its fake tensors; and
release_reused_blocks(), which gives back the freed blocks that fxmlir's
large CPU results keep for the next step.

tests/python/test_memory.py, the benchmarks' step tables and the dumps'
summary.json (`fxmlir report`) all measure with these.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
from torch.multiprocessing.reductions import StorageWeakRef

from fxmlir.fake_values import fake_value


@dataclass(frozen=True)
class StepPeak:
    """A call's peak, in bytes, of the memory on one device."""

    # The most bytes held at once by the tensors the call allocates or
    # touches (parameters, gradients and inputs that existed before it too).
    held: int
    # The most bytes held at once beyond what was allocated before the call
    # (its activations, new gradients, workspaces; what it frees of the
    # memory allocated before counts against them): what
    # torch.cuda.max_memory_allocated() less the memory allocated before the
    # call says on CUDA.
    extra: int


# Marks the measured call in the profile.
_MEASURED = "fxmlir.memory.measured_call"


def step_peak(step: Callable[[], Any], device: str = "cpu") -> StepPeak:
    """Runs `step` twice under torch's memory profiler and reads the second
    call's peak from the profile's timeline (every allocation and free, in
    order). The profiler sees no free of memory allocated before it started:
    the first call allocates what the second frees (the gradients a step
    replaces, say), so that the second's frees count as CUDA's do."""
    from torch.profiler._memory_profiler import MemoryProfileTimeline

    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.device(device).type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    # The timeline needs all three: shapes and stacks categorize the tensors.
    with torch.profiler.profile(profile_memory=True, record_shapes=True, with_stack=True,
                                activities=activities) as profile:
        step()
        with torch.profiler.record_function(_MEASURED):
            step()
    memory = profile._memory_profile()
    start_ns = next(e.start_time_ns for e in memory._op_tree.dfs() if e.name == _MEASURED)
    # Bytes held after each microsecond of the timeline, by category.
    times, sizes = MemoryProfileTimeline(memory)._coalesce_timeline(device)
    first = next((i for i, t in enumerate(times) if t >= start_ns // 1000), len(times))
    before = sum(sizes[first - 1]) if first > 0 else 0
    held = max((sum(categories) for categories in sizes[first:]), default=before)
    return StepPeak(held=held, extra=max(held - before, 0))


def saved_for_backward(forward: fx.GraphModule) -> dict[str, int] | None:
    """The tensors the forward graph AOTAutograd is compiling returns for
    its backward, and their bytes (each storage once: a saved view shares
    its base's), at the sizes traced; None outside an AOTAutograd forward
    compile. The forward returns the user's outputs (and the inputs it
    mutates, AOTAutograd's effect tokens, ...) first, then what it saves."""
    context = torch._guards.TracingContext.try_get()
    metadata = getattr(context, "fw_metadata", None)
    if metadata is None:
        return None
    (output,) = forward.graph.find_nodes(op="output")
    first = metadata.num_forward
    if not torch._functorch.config.unlift_effect_tokens:
        first += len(metadata.tokens)  # left in the graph, before the outputs
    storages: dict[StorageWeakRef, int] = {}
    tensors = 0
    for node in output.args[0][first:]:
        value = fake_value(node)
        if not isinstance(value, torch.Tensor):  # a size saved for backward
            continue
        tensors += 1
        storage = value.untyped_storage()
        storages[StorageWeakRef(storage)] = _hint(storage.nbytes())
    return {"tensors": tensors, "bytes": sum(storages.values())}


def _hint(size: int | torch.SymInt) -> int:
    """A symbolic size's value at the sizes traced."""
    from torch.fx.experimental import symbolic_shapes

    # optimization_hint replaced size_hint after torch 2.11 (the GPU
    # machine's torch).
    hint = getattr(symbolic_shapes, "optimization_hint", None) or symbolic_shapes.size_hint
    return hint(size)


def release_reused_blocks() -> int:
    """Frees the blocks fxmlir keeps for its large CPU results (32 MiB or more:
    the fused LM loss's weight gradient, an embedding's gradient), which a
    freed result leaves for the next step's result of its size (at most 1
    GiB in all; docs/memory.md), as torch.cuda.empty_cache() does for
    CUDA's cached blocks; returns the bytes freed. Results still alive are
    not touched. The next such result takes a new block."""
    from fxmlir.ops import LIBRARY_PATH

    release = ctypes.CDLL(str(LIBRARY_PATH)).fxmlir_release_reused_blocks
    release.restype = ctypes.c_size_t
    return int(release())
