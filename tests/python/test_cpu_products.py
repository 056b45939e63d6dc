"""16-bit CPU products as float32 GEMMs where ATen has no fast 16-bit GEMM
(fxmlir-widen-cpu-products and the fused ops' own products): the same
numbers as eager's, forward and backward, with the products widened or not
as this machine needs."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
import torch.nn as nn

import fxmlir
from fxmlir import cpu_products
from fxmlir.fallback import FallbackWarning


def test_without_onednn_every_16_bit_type_is_widened():
    # ATen's 16-bit GEMMs are oneDNN's: with it off, its fallback runs.
    with torch.backends.mkldnn.flags(enabled=False):
        assert cpu_products.widened_dtypes() == ["bf16", "f16"]


class SwiGLU(nn.Module):
    """LLaMA's MLP, its down projection GPT-2's Conv1D (addmm with an
    [in, out] weight: the weight's gradient is cast to float32 straight from
    its product), at the suite's LLaMA-style sizes: big enough for JIT
    regions to take the casts around the widened products."""

    def __init__(self, hidden: int = 512, inner: int = 1376) -> None:
        super().__init__()
        self.gate = nn.Linear(hidden, inner, bias=False)
        self.up = nn.Linear(hidden, inner, bias=False)
        self.down_weight = nn.Parameter(torch.randn(inner, hidden) * inner ** -0.5)
        self.down_bias = nn.Parameter(torch.zeros(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.silu(self.gate(x)) * self.up(x)
        rows = torch.addmm(self.down_bias, h.view(-1, h.shape[-1]), self.down_weight)
        return rows.view(*x.shape[:-1], -1)


def _step(model: nn.Module, fn, x: torch.Tensor, dtype: torch.dtype):
    for p in model.parameters():
        p.grad = None
    with torch.autocast("cpu", dtype=dtype):
        y = fn(x)
    y.float().square().mean().backward()
    return y, [p.grad for p in model.parameters()]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("widened", [True, False])
def test_autocast_step_matches_eager(tmp_path, monkeypatch, dtype, widened):
    name = {torch.bfloat16: "bf16", torch.float16: "f16"}[dtype]
    monkeypatch.setattr(cpu_products, "widened_dtypes", lambda: [name] if widened else [])
    torch.manual_seed(0)
    model = SwiGLU()
    eager = copy.deepcopy(model)
    x = torch.randn(2, 16, 512)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # no graph kept as it was
        y, grads = _step(model, compiled, x, dtype)
    y_ref, grads_ref = _step(eager, eager, x, dtype)
    assert y.dtype == y_ref.dtype == dtype
    # Sums in another order: a 16-bit rounding apart at most.
    torch.testing.assert_close(y, y_ref, atol=1e-2, rtol=1e-2)
    for g, g_ref in zip(grads, grads_ref):
        assert g.dtype == torch.float32
        torch.testing.assert_close(g, g_ref, atol=1e-2, rtol=2e-2)
    for stage in ("forward", "backward"):
        (final,) = tmp_path.glob(f"*/graph_*/{stage}/final.mlir")
        text = final.read_text()
        cpu_f32 = 'f32, #fxmlir.device<"cpu">>'
        wide = [line for line in text.splitlines()
                if "fxmlir.aten.mm" in line and line.rstrip().endswith(cpu_f32)]
        assert bool(wide) == widened, text


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_linear_cross_entropy_products_widened_or_not_agree(dtype):
    # oneDNN off: the op's block products are float32 GEMMs; on, they are
    # ATen's own wherever it has the GEMM.
    torch.manual_seed(0)
    x = torch.randn(48, 32).to(dtype)
    w = (torch.randn(300, 32) * 0.1).to(dtype)
    target = torch.randint(0, 300, (48,))
    ops = torch.ops.fxmlir

    def run():
        loss, lse, logits = ops.fused_linear_cross_entropy(x, w, None, target, 1, -100, True)
        grads = ops.fused_linear_cross_entropy_grad(torch.ones(()), None, x, w, None, target,
                                                    logits, lse, 1, -100)
        return loss, logits, grads[0], grads[1]

    with torch.backends.mkldnn.flags(enabled=False):
        widened = run()
    native = run()
    reference_logits = (x.float() @ w.float().t())
    torch.testing.assert_close(widened[1].float(), reference_logits, atol=2e-2, rtol=2e-2)
    for a, b in zip(widened, native):
        assert a.dtype == b.dtype
        torch.testing.assert_close(a.float(), b.float(), atol=2e-2, rtol=2e-2)
