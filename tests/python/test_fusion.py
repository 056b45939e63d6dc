"""The seed fusions end to end: a GPT-style MLP block trained through the
backend's default pipeline, checked against eager and in the dumps."""

from __future__ import annotations

import copy
import json
import warnings

import pytest
import torch
import torch.nn as nn

import fxmlir
from fxmlir.roundtrip import FallbackWarning

STEPS = 50


class GPTMLP(nn.Module):
    """GPT-2's MLP: c_fc -> GELU -> (dropout) -> c_proj -> residual dropout."""

    def __init__(self, hidden: int, p: float) -> None:
        super().__init__()
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.act = nn.GELU(approximate="tanh")
        self.drop = nn.Dropout(p)
        self.c_proj = nn.Linear(4 * hidden, hidden)
        self.resid_drop = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.resid_drop(self.c_proj(self.drop(self.act(self.c_fc(x)))))


def train(model: nn.Module, step_fn, steps: int = STEPS) -> list[float]:
    torch.manual_seed(1)
    x, target = torch.randn(4, 16, 32), torch.randn(4, 16, 32)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        loss = nn.functional.mse_loss(step_fn(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def stage_files(dump_dir, stage: str) -> tuple[str, dict]:
    (folder,) = dump_dir.glob(f"*/graph_*/{stage}")
    return ((folder / "final.mlir").read_text(),
            json.loads((folder / "summary.json").read_text()))


def train_fused_and_eager(p: float, dump_dir) -> tuple[list[float], list[float]]:
    """Loss curves of the same model trained through fxmlir and eagerly."""
    torch.manual_seed(0)
    fused = GPTMLP(32, p)
    eager = copy.deepcopy(fused)
    compiled = torch.compile(fused, backend=fxmlir.backend(dump_dir=str(dump_dir)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # no silent fallback
        fused_losses = train(fused, compiled)
    return fused_losses, train(eager, eager)


def test_without_dropout_the_loss_curve_matches_eager(tmp_path):
    fused_losses, eager_losses = train_fused_and_eager(0.0, tmp_path)
    torch.testing.assert_close(fused_losses, eager_losses, rtol=1e-4, atol=1e-5)
    forward, _ = stage_files(tmp_path, "forward")
    assert "fxmlir.fused_bias_act" in forward
    # p = 0 is not dropout: nothing to fuse into a mask.
    assert "fxmlir.fused_bias_dropout_add" not in forward


def test_with_dropout_the_fused_model_trains(tmp_path):
    losses, eager_losses = train_fused_and_eager(0.1, tmp_path)
    # Masks differ from eager's random stream; the loss falls all the same.
    mean = lambda values: sum(values) / len(values)  # noqa: E731
    assert mean(losses[-5:]) < 0.95 * mean(losses[:5])
    assert mean(losses[-5:]) == pytest.approx(mean(eager_losses[-5:]), rel=0.05)

    # Before autodiff the fused ops carry their own backward: the masks are
    # saved packed, 1 bit per element. The GELU joins the dropout after it.
    before, summary = stage_files(tmp_path, "before_autodiff")
    assert summary["fused_ops"] == {"fxmlir.fused_bias_dropout_add": 2}
    assert 'activation = "gelu_tanh"' in before and 'activation = "none"' in before
    assert "packed = true" in before
    forward, summary = stage_files(tmp_path, "forward")
    assert summary["fused_ops"] == {"fxmlir.fused_bias_dropout_add": 2}
    assert "fxmlir.aten.gelu " not in forward and "fxmlir.aten.gelu\"" not in forward
    assert "fxmlir.bias_add" not in forward
    assert "xui8" in forward  # the packed mask is what the forward hands on
    backward, summary = stage_files(tmp_path, "backward")
    assert summary["fused_ops"] == {"fxmlir.fused_bias_act_grad": 1,
                                    "fxmlir.packed_mask_scale": 2}
    assert "fxmlir.aten.gelu_backward" not in backward


def test_backward_uses_the_forward_mask(tmp_path):
    # The residual dropout's mask drawn in forward is what backward applies:
    # rows the forward zeroed get no gradient through it.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Dropout(0.5))
    x = torch.randn(8, 16, requires_grad=True)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    out = compiled(x)
    grad = torch.randn_like(out)
    out.backward(grad)
    kept = out != 0
    expected_x_grad = (grad * kept * 2.0) @ model[0].weight
    torch.testing.assert_close(x.grad, expected_x_grad)
    forward, _ = stage_files(tmp_path, "forward")
    assert "fxmlir.fused_bias_dropout_add" in forward


@pytest.mark.parametrize("activation", [nn.GELU(), nn.GELU(approximate="tanh"), nn.ReLU(),
                                        nn.SiLU(), nn.Hardswish()],
                         ids=["gelu", "gelu_tanh", "relu", "silu", "hardswish"])
def test_dropout_after_an_activation_joins_its_kernel(tmp_path, activation):
    # Linear -> activation -> Dropout (the example MLP's): one kernel adds the
    # bias, activates and drops; its gradients equal eager's given the mask
    # the kernel drew (the zeros of the output: no activation value here is
    # exactly 0 where kept but relu's, whose gradient is 0 there anyway).
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), activation, nn.Dropout(0.5))
    reference = copy.deepcopy(model[:2])
    x = torch.randn(8, 16, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        out = compiled(x)
    expected = reference(x_ref) * (out != 0) * 2.0
    torch.testing.assert_close(out, expected)
    grad = torch.randn_like(out)
    out.backward(grad)
    expected.backward(grad)
    torch.testing.assert_close(x.grad, x_ref.grad)
    for mine, theirs in zip(model[0].parameters(), reference[0].parameters()):
        torch.testing.assert_close(mine.grad, theirs.grad)
    before, summary = stage_files(tmp_path, "before_autodiff")
    assert summary["fused_ops"] == {"fxmlir.fused_bias_dropout_add": 1}
    assert "activation = \"none\"" not in before


def test_after_autodiff_the_residual_dropout_keeps_a_bool_mask(tmp_path):
    # Without the before-autodiff round trip, native_dropout's bool mask is
    # the forward output the backward graph reads: the fused kernel draws it,
    # and the residual add joins the kernel.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.5))
    x = torch.randn(8, 16, requires_grad=True)
    backend = fxmlir.backend(dump_dir=str(tmp_path), stages="forward,backward")
    compiled = torch.compile(lambda x: x + model(x), backend=backend)
    out = compiled(x)
    grad = torch.randn_like(out)
    out.backward(grad)
    kept = (out - x) != 0
    expected_x_grad = grad + (grad * kept * 2.0) @ model[0].weight
    torch.testing.assert_close(x.grad, expected_x_grad)
    forward, _ = stage_files(tmp_path, "forward")
    assert "packed = false" in forward and "fxmlir.aten.add.Tensor" not in forward


def test_autocast_residual_dropout_fuses_without_the_promoting_add(tmp_path):
    # Under bf16 autocast the dropout's output is bf16 and the residual f32:
    # the add promotes, so only the bias dropout fuses; nothing falls back.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.1))
    x = torch.randn(4, 16, requires_grad=True)
    compiled = torch.compile(lambda x: x + model(x),
                             backend=fxmlir.backend(dump_dir=str(tmp_path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = compiled(x)
        out.float().sum().backward()
    assert out.dtype == torch.float32 and x.grad is not None
    _, summary = stage_files(tmp_path, "before_autodiff")
    assert summary["fused_ops"] == {"fxmlir.fused_bias_dropout_add": 1}
