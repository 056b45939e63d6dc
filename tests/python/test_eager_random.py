"""eager_random / FXMLIR_EAGER_RANDOM: fused dropouts draw eager's masks.

Without the setting the fused kernels draw their own Philox masks, so a
seeded training run differs from eager's (max |loss - eager| 3.6e-2 over 20
steps of a two-block transformer with dropout 0.1, issue 20). With it, the
masks are eager's, drawn by eager's own ATen calls, and the fusion stays.
"""

from __future__ import annotations

import copy
import json
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fxmlir
from fxmlir.config import Options
from fxmlir.roundtrip import FallbackWarning

ops = torch.ops.fxmlir

STEPS = 8
P = 0.1
DIM = 32


class Block(nn.Module):
    """A pre-norm transformer MLP block: x + drop(proj(drop(gelu(fc(ln(x))))))."""

    def __init__(self, dim: int, p: float) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.drop = nn.Dropout(p)
        self.proj = nn.Linear(4 * dim, dim)
        self.resid_drop = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.drop(self.act(self.fc(self.norm(x))))
        return x + self.resid_drop(self.proj(h))


class TwoBlocks(nn.Module):
    def __init__(self, dim: int = DIM, p: float = P) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Block(dim, p), Block(dim, p))
        self.head = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


def train(model: nn.Module, step_fn, device: str,
          steps: int = STEPS) -> tuple[list[float], float, list[torch.Tensor]]:
    """Losses of `steps` AdamW steps seeded alike, the generator's next draw
    after them (equal when the run drew exactly what eager drew), and the
    gradients of the first step."""
    torch.manual_seed(1)
    x = torch.randn(4, 8, DIM, device=device)
    target = torch.randn(4, 8, DIM, device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses, first_grads = [], []
    for _ in range(steps):
        loss = F.mse_loss(step_fn(x), target)
        optimizer.zero_grad()
        loss.backward()
        first_grads = first_grads or [p.grad.clone() for p in model.parameters()]
        optimizer.step()
        losses.append(loss.item())
    return losses, torch.rand((), device=device).item(), first_grads


def fused_and_eager(device: str, backend, steps: int = STEPS):
    """(losses, next draw, first gradients) trained through `backend`, then
    eagerly, from the same initial weights."""
    torch.manual_seed(0)
    model = TwoBlocks().to(device)
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # no silent fallback
        fused = train(model, compiled, device, steps)
    return fused, train(eager, eager, device, steps)


def stage(dump_dir, name: str) -> tuple[str, dict]:
    (folder,) = dump_dir.glob(f"*/graph_*/{name}")
    return ((folder / "final.mlir").read_text(),
            json.loads((folder / "summary.json").read_text()))


def max_diff(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b))


def assert_matches_eager(fused, eager) -> None:
    (losses, next_draw, grads), (eager_losses, eager_next_draw, eager_grads) = fused, eager
    # One mask element apart, a loss moves by ~1e-3.
    assert max_diff(losses, eager_losses) <= 1e-6, (losses, eager_losses)
    # The generator was left where eager leaves it: same calls, same sizes.
    assert next_draw == eager_next_draw
    for grad, eager_grad in zip(grads, eager_grads):
        torch.testing.assert_close(grad, eager_grad, rtol=1e-5, atol=1e-7)


# Dropout as Dynamo's graph has it (aten.dropout, fused before autodiff with
# a packed mask: both dropouts of each block, Linear -> GELU -> Dropout and
# the residual Linear -> Dropout + add) and as AOTAutograd's forward has it
# (aten.native_dropout, fused after autodiff with a bool mask, no round trip
# before autodiff: the residual ones; the GELU's value is saved for
# backward). Form: (stages, the stage that fuses, fused dropouts).
FORMS = {"before_autodiff": ("before_autodiff,forward,backward", "before_autodiff", 4),
         "after_autodiff": ("forward,backward", "forward", 2)}


def trains_like_eager_with_the_fusion(device, tmp_path, form) -> tuple[str, dict]:
    """Trains the block with eager_random on `device` in `form`; checks the
    losses and gradients against eager and the fused dropouts' count;
    returns the fusing stage's final module and summary."""
    stages, fused_in, fused_dropouts = FORMS[form]
    fused, eager = fused_and_eager(device, fxmlir.backend(
        eager_random=True, stages=stages, dump_dir=str(tmp_path)))
    assert_matches_eager(fused, eager)
    module, summary = stage(tmp_path, fused_in)
    assert summary["fused_ops"]["fxmlir.fused_bias_dropout_add"] == fused_dropouts
    return module, summary


@pytest.mark.parametrize("form", FORMS)
def test_eager_random_trains_like_eager_and_keeps_the_fusion(tmp_path, form):
    module, summary = trains_like_eager_with_the_fusion("cpu", tmp_path, form)
    assert module.count("eager_random = true") == FORMS[form][2]
    assert "fxmlir-eager-random" in summary["passes"]


@pytest.mark.parametrize("form", FORMS)
def test_without_eager_random_the_masks_are_fxmlirs_own(tmp_path, form):
    stages, fused_in, fused_dropouts = FORMS[form]
    (losses, *_), (eager_losses, *_) = fused_and_eager("cpu", fxmlir.backend(
        stages=stages, dump_dir=str(tmp_path)))
    assert max_diff(losses, eager_losses) > 1e-4  # the test above is not vacuous
    module, summary = stage(tmp_path, fused_in)
    assert summary["fused_ops"]["fxmlir.fused_bias_dropout_add"] == fused_dropouts
    assert "eager_random" not in module


@pytest.mark.parametrize("form", FORMS)
def test_the_seeds_two_kernel_form_trains_like_eager(tmp_path, form):
    # Without fxmlir-fuse-mask-draws the seed's rewrite stays as it wrote it
    # (random_mask_like draws, fused_bias_add_mask_scale applies, forward and
    # backward): each residual dropout of a bias add; the dropouts after
    # GELU have no two-kernel form and stay eager's.
    stages, fused_in, _ = FORMS[form]
    fused, eager = fused_and_eager("cpu", fxmlir.backend(
        eager_random=True, stages=stages, passes="-fxmlir-fuse-mask-draws",
        dump_dir=str(tmp_path)))
    assert_matches_eager(fused, eager)
    _, summary = stage(tmp_path, fused_in)
    assert summary["fused_ops"]["fxmlir.random_mask_like"] == 2
    assert summary["fused_ops"]["fxmlir.fused_bias_add_mask_scale"] == 2
    assert "fxmlir.fused_bias_dropout_add" not in summary["fused_ops"]


def test_the_dumps_show_the_seeds_rewrite_then_the_merged_kernel(tmp_path):
    fused_and_eager("cpu", fxmlir.backend(stages="before_autodiff", dump_dir=str(tmp_path)),
                    steps=1)
    (folder,) = tmp_path.glob("*/graph_*/before_autodiff")
    (seed,) = folder.glob("*-fxmlir-fuse-bias-add-dropout.mlir")
    (merged,) = folder.glob("*-fxmlir-fuse-mask-draws.mlir")
    assert seed.read_text().count("fxmlir.random_mask_like") == 2
    assert seed.read_text().count("fxmlir.fused_bias_add_mask_scale") == 2
    assert "fxmlir.random_mask_like" not in merged.read_text()
    assert merged.read_text().count("fxmlir.fused_bias_dropout_add") == 4


def test_the_environment_variable_turns_it_on(tmp_path, monkeypatch):
    monkeypatch.setenv("FXMLIR_EAGER_RANDOM", "1")
    fused, eager = fused_and_eager("cpu", fxmlir.backend(dump_dir=str(tmp_path)))
    assert_matches_eager(fused, eager)
    module, _ = stage(tmp_path, "before_autodiff")
    assert module.count("eager_random = true") == FORMS["before_autodiff"][2]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: the CUDA kernels "
                    "draw eager's masks through at::native_dropout")
@pytest.mark.parametrize("form", FORMS)
def test_eager_random_trains_like_eager_on_cuda(tmp_path, form):
    trains_like_eager_with_the_fusion("cuda", tmp_path, form)


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("shape", [(8, 16), (3, 5, 7), (1000, 33)])
def test_the_fused_ops_draw_eagers_mask_bit_for_bit(device, dtype, shape):
    torch.manual_seed(0)
    x = torch.randn(shape, device=device, dtype=dtype)
    bias = torch.randn(shape[-1], device=device, dtype=dtype)
    residual = torch.randn(shape, device=device, dtype=dtype)

    def after(draw):
        torch.manual_seed(7)
        result = draw()
        return result, torch.rand(3, device=device)

    (eager_y, eager_mask), eager_next = after(
        lambda: torch.ops.aten.native_dropout(F.gelu(x + bias), P, True))
    # F.dropout's (at::dropout's) draw is native_dropout's: the same mask.
    dropped, next_draw = after(lambda: F.dropout(F.gelu(x + bias), P, True))
    assert torch.equal(dropped, eager_y) and torch.equal(next_draw, eager_next)

    mask, next_draw = after(lambda: ops.random_mask_like(x, P, eager_random=True))
    assert torch.equal(mask, eager_mask) and torch.equal(next_draw, eager_next)

    (y, bools), next_draw = after(lambda: ops.fused_bias_dropout_add(
        x, bias, residual, -1, P, packed=False, activation="gelu", eager_random=True))
    assert torch.equal(bools, eager_mask) and torch.equal(next_draw, eager_next)
    # The kernel rounds once, where eager rounds after each op: compare with
    # the value at f32 precision (or f64's), rounded to the dtype.
    wide = torch.promote_types(dtype, torch.float32)
    value = residual.to(wide) + F.gelu(x.to(wide) + bias.to(wide)) * eager_mask / (1 - P)
    torch.testing.assert_close(y, value.to(dtype))

    (_, packed), next_draw = after(lambda: ops.fused_bias_dropout_add(
        x, bias, None, -1, P, packed=True, eager_random=True))
    assert torch.equal(next_draw, eager_next)
    bits = torch.tensor([1 << j for j in range(8)], dtype=torch.uint8, device=device)
    unpacked = (packed[:, None] & bits).ne(0).flatten()[:x.numel()]
    assert torch.equal(unpacked, eager_mask.flatten())


def test_p_zero_and_empty_tensors_draw_nothing():
    # As eager's dropout: the generator is not touched.
    x = torch.randn(4, 8)
    torch.manual_seed(3)
    expected = torch.rand(3)
    for like, p in ((x, 0.0), (x[:0], 0.5)):
        torch.manual_seed(3)
        assert ops.random_mask_like(like, p, eager_random=True).all()
        y, _ = ops.fused_bias_dropout_add(like, torch.zeros(8), None, 1, p, packed=False,
                                          eager_random=True)
        torch.testing.assert_close(y, like)
        assert torch.equal(torch.rand(3), expected)


def test_the_setting_is_checked_like_the_others():
    assert not Options.from_env({}).eager_random
    assert Options.from_env({"FXMLIR_EAGER_RANDOM": "on"}).eager_random
    assert not Options.from_env({"FXMLIR_EAGER_RANDOM": "1"}).updated(
        {"eager_random": False}).eager_random
    with pytest.raises(ValueError, match="FXMLIR_EAGER_RANDOM='maybe' is invalid; accepted "
                                         "values: 1, true"):
        Options.from_env({"FXMLIR_EAGER_RANDOM": "maybe"})
    with pytest.raises(TypeError, match="option 'eager_random' must be True or False, got int 2"):
        fxmlir.backend(eager_random=2)
    model = nn.Linear(4, 2)
    with pytest.raises(ValueError, match="option 'eager_random'='sometimes' is invalid"):
        torch.compile(model, backend="fxmlir", options={"eager_random": "sometimes"})
    with pytest.raises(ValueError, match=r"unknown fxmlir option 'eager_randm' \(did you mean "
                                         r"'eager_random'\?\)"):
        torch.compile(model, backend="fxmlir", options={"eager_randm": True})


class DropoutBeforeItsAdd(nn.Module):
    """A random op (an unfused dropout) between a fused dropout and its
    residual add: the fused op must still draw first, as eager does."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        self.drop = nn.Dropout(P)
        self.gate_drop = nn.Dropout(0.3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.drop(self.fc(x))
        gate = self.gate_drop(x * 2)
        return (x + h) * gate


@pytest.mark.parametrize("form", FORMS)
def test_draws_keep_eagers_order_around_a_residual_add(tmp_path, form):
    stages, fused_in, _ = FORMS[form]
    torch.manual_seed(0)
    model = DropoutBeforeItsAdd()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxmlir.backend(
        eager_random=True, stages=stages, dump_dir=str(tmp_path)))
    losses, next_draw, _ = train(model, compiled, "cpu")
    eager_losses, eager_next_draw, _ = train(eager, eager, "cpu")
    # Losses of ~20: float rounding is ~2e-6; one mask element apart, ~1e-2.
    torch.testing.assert_close(losses, eager_losses, rtol=1e-6, atol=1e-6)
    assert next_draw == eager_next_draw
    _, summary = stage(tmp_path, fused_in)
    assert summary["fused_ops"]["fxmlir.fused_bias_dropout_add"] == 1
