"""What Dynamo graphs contain imports without falling back, trains like
eager (forward and backward), and fuses: autocast regions, checkpointed
bodies, higher-order ops, indexing with `...`, factories, complex constants,
custom autograd.Functions, dynamic shapes, GELU written out, a broadcast
bias add."""

from __future__ import annotations

import json
import math
import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Callable

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import fxmlir
from fxmlir.roundtrip import FallbackWarning


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def fused_ops(dump_dir: Path, stage: str) -> Counter:
    """Fused ops per kind over every graph (and body) of a stage."""
    total: Counter = Counter()
    for summary in dump_dir.glob(f"*/graph_*/{stage}/**/summary.json"):
        total.update(json.loads(summary.read_text())["fused_ops"])
    return total


def leaves(n: int, *shape: int) -> list[torch.Tensor]:
    return [torch.randn(*shape, requires_grad=True) for _ in range(n)]


def check_like_eager(fn: Callable, inputs: list[torch.Tensor], dump_dir: Path,
                     atol: float = 1e-5, rtol: float = 1e-4, **compile_kwargs) -> None:
    """fn through fxmlir (default pipeline) gives eager's output and input
    gradients, without a fallback."""
    eager_inputs = [t.detach().clone().requires_grad_(t.requires_grad) for t in inputs]
    compiled = torch.compile(fn, backend=fxmlir.backend(dump_dir=str(dump_dir)),
                             **compile_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        out = compiled(*inputs)
        out.float().pow(2).sum().backward()
    ref = fn(*eager_inputs)
    ref.float().pow(2).sum().backward()
    torch.testing.assert_close(out, ref, atol=atol, rtol=rtol)
    for t, ref_t in zip(inputs, eager_inputs):
        if t.requires_grad:
            torch.testing.assert_close(t.grad, ref_t.grad, atol=atol, rtol=rtol)


def test_broadcast_bias_add_fuses_in_training(tmp_path):
    # Dynamo spells `x + b` operator.add: imported as aten.add, it fuses
    # before autodiff, where the fused op carries its own backward.
    torch.manual_seed(0)
    x, w, b = leaves(1, 6, 8) + leaves(1, 8, 16) + leaves(1, 16)
    check_like_eager(lambda x, w, b: F.gelu(x @ w + b), [x, w, b], tmp_path)
    assert fused_ops(tmp_path, "before_autodiff") == {"fxmlir.fused_bias_act": 1}
    assert fused_ops(tmp_path, "backward") == {"fxmlir.fused_bias_act_grad": 1}


def test_bias_add_of_a_3d_input_fuses_in_training(tmp_path):
    torch.manual_seed(0)
    x, b = leaves(1, 2, 3, 8) + leaves(1, 8)
    check_like_eager(lambda x, b: F.gelu(x + b, approximate="tanh"), [x, b], tmp_path)
    assert fused_ops(tmp_path, "forward") == {"fxmlir.fused_bias_act": 1}


def gelu_new(x: torch.Tensor) -> torch.Tensor:
    """GPT-2's activation, as transformers writes it."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi)
                                       * (x + 0.044715 * torch.pow(x, 3.0))))


def fast_gelu(x: torch.Tensor) -> torch.Tensor:
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def erf_gelu(x: torch.Tensor) -> torch.Tensor:
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


@pytest.mark.parametrize("activation", [gelu_new, fast_gelu, erf_gelu])
def test_gelu_written_out_fuses_with_its_bias(tmp_path, activation):
    torch.manual_seed(0)
    linear = nn.Linear(8, 16)
    x = torch.randn(4, 8, requires_grad=True)
    check_like_eager(lambda x: activation(linear(x)), [x], tmp_path)
    assert fused_ops(tmp_path, "before_autodiff") == {"fxmlir.fused_bias_act": 1}
    assert fused_ops(tmp_path, "backward") == {"fxmlir.fused_bias_act_grad": 1}
    forward = next(tmp_path.glob("*/graph_*/forward/final.mlir")).read_text()
    assert "fxmlir.aten.tanh" not in forward and "fxmlir.aten.erf" not in forward


def test_a_formula_that_is_not_gelu_is_left_alone(tmp_path):
    torch.manual_seed(0)
    linear = nn.Linear(8, 16)
    x = torch.randn(4, 8, requires_grad=True)

    def not_gelu(x: torch.Tensor) -> torch.Tensor:
        y = linear(x)
        return 0.5 * y * (1.0 + torch.tanh(0.8 * (y + 0.044715 * torch.pow(y, 3.0))))

    check_like_eager(not_gelu, [x], tmp_path)
    assert fused_ops(tmp_path, "before_autodiff") == {}


def test_autocast_region_casts_are_explicit_and_fuse(tmp_path):
    torch.manual_seed(0)
    linear = nn.Linear(8, 16)

    def fn(x: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return gelu_new(linear(x))

    x = torch.randn(4, 8, requires_grad=True)
    check_like_eager(fn, [x], tmp_path, atol=2e-2, rtol=2e-2)
    assert fused_ops(tmp_path, "before_autodiff") == {"fxmlir.fused_bias_act": 1}
    before = next(tmp_path.glob("*/graph_*/before_autodiff/fx_after.py")).read_text()
    assert "_enter_autocast" not in before and "_to_copy" in before


def test_ambient_autocast_fuses(tmp_path):
    torch.manual_seed(0)
    linear = nn.Linear(8, 16)
    x = torch.randn(4, 8, requires_grad=True)

    def fn(x: torch.Tensor) -> torch.Tensor:
        return F.gelu(linear(x))

    with torch.autocast("cpu", dtype=torch.bfloat16):
        check_like_eager(fn, [x], tmp_path, atol=2e-2, rtol=2e-2)
    assert fused_ops(tmp_path, "before_autodiff") == {"fxmlir.fused_bias_act": 1}


def test_checkpointed_body_round_trips_and_fuses(tmp_path):
    torch.manual_seed(0)
    block = nn.Sequential(nn.Linear(8, 16), nn.GELU())
    x = torch.randn(4, 8, requires_grad=True)
    check_like_eager(lambda x: checkpoint(block, x, use_reentrant=False), [x], tmp_path)
    body = list(tmp_path.glob("*/graph_*/before_autodiff/*/summary.json"))
    assert len(body) == 1
    assert json.loads(body[0].read_text())["fused_ops"] == {"fxmlir.fused_bias_act": 1}


def test_checkpointed_dropout_recomputes_the_forward_mask(tmp_path):
    # AOTAutograd saves the RNG state of the body's dropout in forward and
    # replays it when backward recomputes the body: the HOPs round-trip.
    torch.manual_seed(0)
    block = nn.Sequential(nn.Linear(16, 64), nn.Dropout(0.5))
    x = torch.randn(8, 16, requires_grad=True)
    compiled = torch.compile(lambda x: checkpoint(block, x, use_reentrant=False),
                             backend=fxmlir.backend(dump_dir=str(tmp_path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        out = compiled(x)
        grad = torch.randn_like(out)
        out.backward(grad)
    kept = out != 0
    torch.testing.assert_close(x.grad, (grad * kept * 2.0) @ block[0].weight)
    forward = next(tmp_path.glob("*/graph_*/forward/fx_after.py")).read_text()
    assert "run_and_save_rng_state" in forward
    backward = next(tmp_path.glob("*/graph_*/backward/fx_after.py")).read_text()
    assert "run_with_rng_state" in backward


def test_ellipsis_and_slices(tmp_path):
    x = torch.randn(2, 3, 8, requires_grad=True)
    check_like_eager(lambda x: x[..., :4] * x[..., 4:] + x[:, None, 1, ::2].sum(), [x],
                     tmp_path)


def test_rms_norm_mean_over_one_dim_is_a_typed_op(tmp_path):
    # LLaMA's RMSNorm calls x.mean(-1, keepdim=True): one int where mean.dim
    # takes int[1], which torch's parser (and so the importer) broadcasts.
    x, w = leaves(2, 4, 16)
    check_like_eager(lambda x, w: w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)),
                     [x, w], tmp_path)
    imported = next(tmp_path.glob("*/graph_*/before_autodiff/input.mlir")).read_text()
    assert "fxmlir.aten.mean.dim" in imported
    assert "call_method:mean" not in imported


def imported_calls(dump_dir: Path) -> Counter:
    """The fxmlir.call targets of the graphs imported before autodiff."""
    calls: Counter = Counter()
    for imported in dump_dir.glob("*/graph_*/before_autodiff/input.mlir"):
        calls.update(re.findall(r'fxmlir\.call "([^"]+)"\(', imported.read_text()))
    return calls


@pytest.mark.parametrize("index", [
    (Ellipsis, slice(None, 4)), (Ellipsis, slice(4, None)), (slice(None), None),
    (Ellipsis, None), 1, (Ellipsis, -1), (slice(None), slice(1, 7, 2)), Ellipsis,
    (slice(None), slice(0, None), slice(None)), slice(None)],
    ids=lambda index: repr(index).replace(" ", ""))
def test_basic_indexing_is_the_view_op_it_calls(tmp_path, index):
    # x[..., :4] is slice(x, 2, None, 4), x[:, None] unsqueeze, x[1] select,
    # x[...] an alias: typed ops that patterns and regions see.
    x = torch.randn(2, 3, 8, requires_grad=True)
    check_like_eager(lambda x: x[index] * 2, [x], tmp_path)
    assert "_operator.getitem" not in imported_calls(tmp_path)


def test_indexing_with_several_steps_stays_a_call(tmp_path):
    x = torch.randn(2, 3, 8, requires_grad=True)
    check_like_eager(lambda x: x[:, None, 1, ::2] * 2, [x], tmp_path)
    assert imported_calls(tmp_path)["_operator.getitem"] == 1


def llama_calls(ids: torch.Tensor, table: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The Python calls a LLaMA forward of transformers makes around its
    GEMMs and attention, as Dynamo records them."""
    h = F.embedding(ids, table, padding_idx=-1)
    position = torch.arange(ids.shape[1], device=h.device)[None].float()
    h = (h.to(torch.float32) + position[..., None].to(dtype=h.dtype) * 0.01).half().float()
    h = h.to(device=h.device, dtype=torch.float32).to(h.device).to(h)
    q = (h @ w).reshape(2, 6, 2, 4).transpose(1, 2)
    q = torch.cat([torch.tensor([], dtype=q.dtype, device=q.device), q], dim=-2)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    logits = out.transpose(1, 2).contiguous().reshape(12, 8)
    labels = F.pad(ids, (0, 1), "constant", -100)[..., 1:].contiguous().reshape(-1)
    return F.cross_entropy(logits, labels.clamp(max=7), ignore_index=-100) \
        + logits.sum() * torch.tensor(0.5)


def test_llama_method_calls_are_typed_ops(tmp_path):
    # The calls the issue counted in the zoo LLaMA's Dynamo graph:
    # to, getitem, contiguous, reshape, float, tensor, embedding, pad,
    # arange, scaled_dot_product_attention and cross_entropy.
    ids = torch.randint(0, 10, (2, 6))
    table, w = leaves(1, 10, 8) + leaves(1, 8, 8)
    check_like_eager(lambda table, w: llama_calls(ids, table, w), [table, w], tmp_path)
    assert imported_calls(tmp_path) == {}, imported_calls(tmp_path)


def test_a_cast_to_its_own_dtype_returns_the_input_as_eager_does(tmp_path):
    # x.to(x.dtype) is x itself (to.dtype), not a copy (_to_copy).
    x = torch.randn(4, 8)
    compiled = torch.compile(lambda x: (x.to(torch.float32), x.float(), x.contiguous()),
                             backend=fxmlir.backend(dump_dir=str(tmp_path)))
    for out, ref in zip(compiled(x), (x.to(torch.float32), x.float(), x.contiguous())):
        assert (out.data_ptr() == x.data_ptr()) == (ref.data_ptr() == x.data_ptr())
    assert imported_calls(tmp_path) == {}


def test_factories_without_tensor_inputs(tmp_path):
    x = torch.randn(4, 8, requires_grad=True)
    check_like_eager(lambda x: x * torch.full((4, 8), 2.0) + torch.zeros(8)
                     + torch.ones(4, 1), [x], tmp_path)


def test_complex_constant(tmp_path):
    x = torch.randn(4, 8, requires_grad=True)
    check_like_eager(lambda x: (x * (1 + 2j)).abs(), [x], tmp_path)


def test_cond(tmp_path):
    x = torch.randn(4, 8, requires_grad=True)

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.cond(x.sum() > 0, lambda y: y.sin(), lambda y: y.cos(), (x,))

    check_like_eager(fn, [x], tmp_path)


class ScaledSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * scale

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (x,) = ctx.saved_tensors
        return grad * 2 * x * ctx.scale, None


def test_custom_autograd_function(tmp_path):
    x = torch.randn(4, 8, requires_grad=True)
    check_like_eager(lambda x: ScaledSquare.apply(x, 3.0).relu(), [x], tmp_path)


def test_dynamic_bias_of_size_five_then_one(tmp_path):
    # A size-1 addend broadcasts over the dynamic dim: not a bias to fuse.
    torch.manual_seed(0)
    fn = lambda x, b: F.gelu(x + b)  # noqa: E731
    check_like_eager(fn, leaves(1, 3, 5) + leaves(1, 5), tmp_path, dynamic=True)
    check_like_eager(fn, leaves(1, 3, 7) + leaves(1, 1), tmp_path, dynamic=True)
