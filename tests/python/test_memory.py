"""A training step through fxmlir needs no more memory than eager's: its
peak, measured by torch's memory profiler (every allocation and free of the
step, in order), against eager's on the same model and inputs."""

from __future__ import annotations

import pytest
import torch
from torch.profiler._memory_profiler import MemoryProfileTimeline

import fxmlir
from test_dynamic_shapes import _zoo

pytest.importorskip("transformers", reason="transformers is not installed "
                    "(scripts/setup.sh installs it)")

_ABOVE_EAGER = pytest.mark.xfail(strict=True, reason=(
    "open (issue 33): T5 still peaks 4 % above eager's on the zoo's tiny model"))


def _step_peak(step) -> int:
    """The most bytes `step` holds at once, of what it allocates."""
    with torch.profiler.profile(profile_memory=True, record_shapes=True, with_stack=True,
                                activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        step()
    _, sizes = MemoryProfileTimeline(profile._memory_profile())._coalesce_timeline(
        torch.device("cpu"))
    return max(sum(categories) for categories in sizes)


def _peak(name: str, compile_with) -> int:
    zoo = _zoo()
    entry = {m.name: m for m in zoo.MODELS}[name]
    torch.manual_seed(0)
    model = entry.build(0.0).train()
    net = compile_with(model)
    ids = torch.randint(0, zoo.VOCAB, (4, 32))

    def step() -> None:
        net(input_ids=ids, labels=ids).loss.backward()
        model.zero_grad(set_to_none=False)

    for _ in range(2):  # compiled, and the gradients allocated
        step()
    return _step_peak(step)


@pytest.mark.parametrize("name", ["gpt2", "bert", "llama", pytest.param("t5", marks=_ABOVE_EAGER)])
def test_a_training_step_peaks_no_higher_than_eagers(name):
    eager = _peak(name, lambda model: model)
    compiled = _peak(name, lambda model: torch.compile(
        model, backend=fxmlir.backend(strict=True)))
    # 1 % for what no layout decides: a scalar here, an alignment there.
    assert compiled <= eager * 1.01, f"fxmlir {compiled} bytes, eager {eager} bytes"
