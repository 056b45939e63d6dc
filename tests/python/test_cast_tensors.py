"""fxmlir.cast_tensors (several casts in one call) and fxmlir-group-casts,
which makes it of autocast's casts: values and layouts against `_to_copy`,
and an autocast training step whose forward graph casts its weights through
it, against eager."""

from __future__ import annotations

import copy
import json

import pytest
import torch
import torch.nn as nn

import fxmlir
import fxmlir.ops  # noqa: F401  (loads torch.ops.fxmlir)

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(
        not torch.cuda.is_available(), reason="CUDA is not available")),
]
FLOATS = [torch.float32, torch.bfloat16, torch.float16]


def tensors(device: str, dtype: torch.dtype) -> list[torch.Tensor]:
    """Sizes across the CUDA kernel's blocks of 2048 elements, a permuted
    (dense) and a sliced (not dense) tensor, an empty one and a 0-d one."""
    torch.manual_seed(0)
    make = lambda *shape: torch.randn(*shape, device=device).to(dtype)  # noqa: E731
    return [make(512, 512), make(7), make(2049), make(3, 5, 8).permute(2, 0, 1),
            make(6, 10)[:, ::3], make(0, 4), make(()), make(33, 65).t()]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("source", FLOATS)
@pytest.mark.parametrize("target", FLOATS + [torch.float64])
def test_each_result_is_its_tensors_cast(device: str, source: torch.dtype,
                                         target: torch.dtype) -> None:
    inputs = tensors(device, source)
    results = torch.ops.fxmlir.cast_tensors(inputs, target)
    assert len(results) == len(inputs)
    for given, result in zip(inputs, results):
        expected = torch.ops.aten._to_copy(given, dtype=target)  # always a copy
        assert result.dtype == target and result.device == given.device
        assert result.shape == expected.shape and result.stride() == expected.stride()
        assert torch.equal(result, expected)  # the same rounding, bit for bit
        assert result.data_ptr() != given.data_ptr() or given.numel() == 0


@pytest.mark.parametrize("device", DEVICES)
def test_more_tensors_than_one_launch_takes(device: str) -> None:
    """The CUDA kernel takes 32 tensors a launch, per pair of types."""
    inputs = [torch.randn(100 + i, device=device) for i in range(70)]
    inputs += [torch.randn(9, device=device, dtype=torch.float16) for _ in range(35)]
    for given, result in zip(inputs, torch.ops.fxmlir.cast_tensors(inputs, torch.bfloat16)):
        assert torch.equal(result, given.to(torch.bfloat16))


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device: str) -> None:
    inputs = [torch.randn(3, 4, device=device), torch.randn(5, device=device).half()]
    torch.library.opcheck(torch.ops.fxmlir.cast_tensors.default, (inputs, torch.bfloat16))


def test_tensors_on_two_devices_are_an_error() -> None:
    with pytest.raises(RuntimeError, match="expected every tensor on cpu, got one on meta"):
        torch.ops.fxmlir.cast_tensors([torch.randn(2), torch.empty(2, device="meta")],
                                      torch.bfloat16)


class Block(nn.Module):
    """Two biased linears and a bias-free one: six weights cast per step."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(32, 64)
        self.gate = nn.Linear(32, 64)
        self.down = nn.Linear(64, 32, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)) * self.gate(x))


def graph_text(dump_dir, stage: str) -> str:
    (folder,) = dump_dir.glob(f"*/graph_*/{stage}")
    return (folder / "fx_after.py").read_text()


@pytest.mark.parametrize("device", DEVICES)
def test_autocast_step_groups_the_weight_casts(device: str, tmp_path) -> None:
    torch.manual_seed(0)
    model = Block().to(device)
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    x = torch.randn(4, 16, 32, device=device)
    for net in (model, eager):
        runner = compiled if net is model else eager
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = runner(x).float().square().mean()
        loss.backward()
    for (name, ours), theirs in zip(model.named_parameters(), eager.parameters()):
        assert ours.grad.dtype == torch.float32
        torch.testing.assert_close(ours.grad, theirs.grad, rtol=2e-2, atol=2e-3, msg=name)
    forward, backward = graph_text(tmp_path, "forward"), graph_text(tmp_path, "backward")
    grouped = [line for line in forward.splitlines() if "fxmlir.cast_tensors" in line]
    if device == "cpu":  # a CPU product reads its weight's cast while it is in cache
        assert not grouped
        return
    # The forward casts what it saves for backward (a weight, x) and the
    # biases in one call; a weight whose cast the backward makes again (the
    # partitioner's choice) keeps its cast beside its product.
    assert len(grouped) == 1 and grouped[0].count("primals_") >= 4
    # The backward's gradient casts stay beside their products: grouped at
    # the return, the 16-bit gradients would live to the end of the step,
    # where a step of few tokens has its peak.
    assert "cast_tensors" not in backward
    assert backward.count("aten._to_copy") >= 3


class Deep(nn.Module):
    """Eight bias-free square layers and a few tokens: the step's weight
    gradients, not its activations, are its peak."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(256, 256, bias=False) for _ in range(8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="CUDA is not available (the pass groups CUDA casts only)")
def test_grouping_costs_no_memory_at_the_peak() -> None:
    """The step's peak with the pass is the step's peak without it (grouped
    at the return, the backward's 16-bit gradients added 1 MiB: measured on
    the CPU when the pass grouped CPU casts too)."""
    def peak(passes: str) -> int:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = Deep().cuda()
        compiled = torch.compile(model, backend=fxmlir.backend(passes=passes))
        x = torch.randn(2, 4, 256, device="cuda")

        def step() -> None:
            for p in model.parameters():
                p.grad = None
            with torch.autocast("cuda", dtype=torch.bfloat16):
                compiled(x).float().sum().backward()

        step()
        step()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        step()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base

    grouped, ungrouped = peak("default"), peak("-fxmlir-group-casts")
    assert grouped <= ungrouped + 64 * 1024, (grouped, ungrouped)
