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


class CausalAttention(nn.Module):
    """Causal self-attention through SDPA (flash attention's CPU kernels),
    4 heads of 32."""

    def __init__(self, hidden: int = 128, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, c))


def _step_matches_eager(model: nn.Module, x: torch.Tensor, dtype: torch.dtype, widened: bool,
                        tmp_path, monkeypatch) -> dict[str, str]:
    """A compiled autocast step of `model` against eager's, with this
    machine's 16-bit products widened or not; the final MLIR of each stage."""
    name = {torch.bfloat16: "bf16", torch.float16: "f16"}[dtype]
    monkeypatch.setattr(cpu_products, "widened_dtypes", lambda: [name] if widened else [])
    eager = copy.deepcopy(model)
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
    finals = {}
    for stage in ("forward", "backward"):
        (final,) = tmp_path.glob(f"*/graph_*/{stage}/final.mlir")
        finals[stage] = final.read_text()
    return finals


def _lines_in_f32(text: str, op: str) -> list[str]:
    """The lines of `op` with a float32 CPU tensor among its results."""
    return [line for line in text.splitlines()
            if op in line and 'xf32, #fxmlir.device<"cpu">>' in line.rsplit("->", 1)[-1]]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("widened", [True, False])
def test_autocast_step_matches_eager(tmp_path, monkeypatch, dtype, widened):
    torch.manual_seed(0)
    finals = _step_matches_eager(SwiGLU(), torch.randn(2, 16, 512), dtype, widened, tmp_path,
                                 monkeypatch)
    for text in finals.values():
        assert bool(_lines_in_f32(text, "fxmlir.aten.mm ")) == widened, text


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("widened", [True, False])
def test_attention_backward_widened_matches_eager(tmp_path, monkeypatch, dtype, widened):
    # Flash attention's CPU backward makes its products in the 16-bit type;
    # widened, it runs in float32 and rounds its gradients once.
    torch.manual_seed(0)
    finals = _step_matches_eager(CausalAttention(), torch.randn(2, 64, 128), dtype, widened,
                                 tmp_path, monkeypatch)
    backward = "_scaled_dot_product_flash_attention_for_cpu_backward "
    assert backward in finals["backward"]
    assert bool(_lines_in_f32(finals["backward"], backward)) == widened, finals["backward"]


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
