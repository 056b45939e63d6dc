"""The fused LM head + cross-entropy (fxmlir-fuse-linear-cross-entropy and
torch.ops.fxmlir.fused_linear_cross_entropy): numerics against eager's
F.linear + F.cross_entropy, forward and backward, as transformers and
F.cross_entropy spell the loss, and the memory it exists to save."""

from __future__ import annotations

import copy
import resource
from typing import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import fxmlir
from fxmlir import _C
from fxmlir.memory import step_peak

ops = torch.ops.fxmlir
MEAN, SUM = 1, 2


def _tolerance(dtype: torch.dtype) -> dict[str, float]:
    return dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1.6e-2, atol=5e-2)


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="CUDA is not available"))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype, weight_dtype", [
    (torch.float32, torch.float32), (torch.bfloat16, torch.bfloat16),
    # Autocast's cast of the weight folded in: float32 weight, bf16 products.
    (torch.bfloat16, torch.float32)], ids=["f32", "bf16", "bf16-f32-weight"])
@pytest.mark.parametrize("bias", [False, True], ids=["no-bias", "bias"])
@pytest.mark.parametrize("return_logits", [False, True], ids=["blocks", "returned"])
@pytest.mark.parametrize("reduction", [MEAN, SUM], ids=["mean", "sum"])
def test_the_op_and_its_gradient_equal_eagers(device, dtype, weight_dtype, bias, return_logits,
                                              reduction):
    torch.manual_seed(0)
    # 1024 rows: blocks of 1024 columns (2^20 logits) on a CPU, 8192 on a
    # GPU, the last one short. An odd vocabulary, as GPT-2's: rows of logits
    # not 16-byte aligned, which a GPU returns a block at a time.
    rows, hidden, vocab = (2, 512), 16, 9001
    options = dict(dtype=dtype, device=device)
    x = torch.randn(*rows, hidden, **options, requires_grad=True)
    w = torch.randn(vocab, hidden, dtype=weight_dtype, device=device, requires_grad=True)
    b = torch.randn(vocab, **options, requires_grad=True) if bias else None
    target = torch.randint(0, vocab, (rows[0] * rows[1],), device=device)
    target[::5] = -100  # ignored rows
    target[1::7] = vocab - 1  # in the last block
    # A gradient reaching the returned logits too, as a model's other use would.
    other = torch.randn(*rows, vocab, **options)
    inputs = [x, w] + ([b] if bias else [])

    logits = F.linear(x, w.to(dtype), b)  # as autocast casts the weight
    want = F.cross_entropy(logits.float().view(-1, vocab), target,
                           reduction="mean" if reduction == MEAN else "sum")
    extra = (logits.float() * other).sum() if return_logits else 0
    want_grads = torch.autograd.grad(want + extra, inputs)

    loss, lse, got_logits = ops.fused_linear_cross_entropy(x, w, b, target, reduction, -100,
                                                           return_logits)
    extra = (got_logits.float() * other).sum() if return_logits else 0
    got_grads = torch.autograd.grad(loss + extra, inputs)
    tolerance = _tolerance(dtype)
    assert loss.dtype == torch.float32 and lse.shape == (1024,)
    torch.testing.assert_close(loss, want, **tolerance)
    if return_logits:
        # Logits are products of one block of columns at a time, which cuBLAS
        # sums in another order than eager's one product: a bf16 logit may
        # round one step apart, and one near zero (16 products cancelling)
        # by a step of the products' own size (0.057 where eager has ~0, at
        # 9001 columns on the H200): error relative to the largest logit.
        torch.testing.assert_close(got_logits, logits, rtol=tolerance["rtol"],
                                   atol=tolerance["rtol"] * logits.abs().max().item())
    else:
        assert got_logits.shape == (0,)
    for got, expected in zip(got_grads, want_grads):
        # Sums over 9001 classes, a block at a time: error relative to the
        # largest element (bf16 rounds each block's product once).
        scale = expected.abs().max().item()
        torch.testing.assert_close(got, expected, rtol=tolerance["rtol"],
                                   atol=tolerance["rtol"] * scale)


def test_an_all_ignored_batch_is_nan_for_the_mean_and_has_zero_gradients():
    x = torch.randn(5, 4, requires_grad=True)
    w = torch.randn(300, 4, requires_grad=True)
    target = torch.full((5,), -100)
    for reduction, name in ((MEAN, "mean"), (SUM, "sum")):
        loss, _, _ = ops.fused_linear_cross_entropy(x, w, None, target, reduction, -100, False)
        want = F.cross_entropy(F.linear(x, w), target, reduction=name)
        torch.testing.assert_close(loss, want, equal_nan=True)
        got = torch.autograd.grad(loss, [x, w])
        expected = torch.autograd.grad(want, [x, w])
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e)
            assert not g.isnan().any()


def test_bad_input_is_an_error_naming_the_problem():
    x, w = torch.randn(5, 4), torch.randn(300, 4)
    with pytest.raises(RuntimeError, match=r"a target is out of bounds: not in \[0, 300\)"):
        ops.fused_linear_cross_entropy(x, w, None, torch.tensor([0, 1, 2, 3, 300]), MEAN, -100,
                                       False)
    with pytest.raises(RuntimeError, match="reduction must be 1 .mean. or 2 .sum., got 0"):
        ops.fused_linear_cross_entropy(x, w, None, torch.zeros(5, dtype=torch.long), 0, -100,
                                       False)
    with pytest.raises(RuntimeError, match="target must hold class indices"):
        ops.fused_linear_cross_entropy(x, w, None, torch.zeros(5), MEAN, -100, False)
    # A float32 weight goes with a 16-bit x only (autocast's cast folded in).
    with pytest.raises(RuntimeError, match=r"weight must be x's dtype \(BFloat16\) or, for a "
                                           r"16-bit x, float32, got Double"):
        ops.fused_linear_cross_entropy(x.bfloat16(), w.double(), None,
                                       torch.zeros(5, dtype=torch.long), MEAN, -100, False)
    with pytest.raises(RuntimeError, match=r"weight must be x's dtype \(Float\)"):
        ops.fused_linear_cross_entropy(x, w.bfloat16(), None, torch.zeros(5, dtype=torch.long),
                                       MEAN, -100, False)


# Over one block of logits (2^20, fxmlir/Support/LinearLossBlocks.h) for
# 2 x 24 tokens: smaller ones are left unfused.
VOCAB = 32768


class _LMHead(nn.Module):
    """A language model's last layer and loss, as transformers spell them:
    causal (shifted labels, `logits.float()`) or masked (a biased decoder,
    labels as they are); returning the logits too, or the loss alone."""

    def __init__(self, causal: bool, tied: bool, returns_logits: bool) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32)
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, VOCAB, bias=not causal)
        if tied:
            self.head.weight = self.embed.weight
        self.causal = causal
        self.returns_logits = returns_logits

    def forward(self, ids: torch.Tensor, labels: torch.Tensor, reduction: str = "mean"):
        logits = self.head(self.norm(self.embed(ids)))
        if self.causal:
            labels = F.pad(labels, (0, 1), value=-100)[:, 1:].contiguous()
            loss = F.cross_entropy(logits.float().view(-1, VOCAB), labels.view(-1),
                                   ignore_index=-100, reduction=reduction)
        else:
            loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1), reduction=reduction)
        return (loss, logits) if self.returns_logits else (loss,)


def _fused_calls(run) -> dict[str, int]:
    with torch.profiler.profile() as profile:
        run()
    return {e.key: e.count for e in profile.key_averages()
            if e.key.startswith("fxmlir::fused_linear_cross_entropy")}


_FUSED = {"fxmlir::fused_linear_cross_entropy": 1, "fxmlir::fused_linear_cross_entropy_grad": 1}


@pytest.mark.parametrize("case, fused", [
    ("causal-tied", _FUSED), ("causal-untied-sum", _FUSED), ("masked-bias", _FUSED),
    ("causal-bf16-autocast-returns-logits", _FUSED), ("causal-returns-logits", _FUSED),
    # The user's loss reaches the returned logits too (fxmlir.returned_logits).
    ("causal-returns-logits-differentiated", _FUSED),
    ("masked-bias-bf16-autocast-returns-logits-differentiated", _FUSED)])
def test_a_compiled_training_step_fuses_the_loss_and_trains_like_eager(case, fused):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _LMHead(causal=case.startswith("causal"), tied=case == "causal-tied",
                    returns_logits="returns-logits" in case)
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxmlir.backend(strict=True))
    reduction = "sum" if case.endswith("sum") else "mean"
    autocast = "autocast" in case
    ids = torch.randint(0, VOCAB, (2, 24))
    labels = ids.clone()
    labels[0, :5] = -100  # padding
    other = torch.randn(2, 24, VOCAB) / VOCAB

    def step(net) -> tuple[torch.Tensor, ...]:
        for p in net.parameters():
            p.grad = None
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            outputs = net(ids, labels, reduction)
        loss = outputs[0]
        if net is compiled and len(outputs) > 1:  # autograd outside the graph
            assert type(outputs[1].grad_fn).__name__ == "_LogitsGradBackward"
        if case.endswith("differentiated"):
            loss = loss + (outputs[1].float() * other).sum()
        loss.backward()
        return tuple(o.detach() for o in outputs)

    got, want = step(compiled), step(eager)
    tolerance = _tolerance(torch.bfloat16 if autocast else torch.float32)
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, **tolerance)
    for (name, p), q in zip(model.named_parameters(), eager.parameters()):
        torch.testing.assert_close(p.grad, q.grad, **tolerance, msg=name)
    assert _fused_calls(lambda: step(compiled)) == fused


def test_the_loss_peaks_at_a_fraction_of_eagers_memory():
    """The [tokens, vocabulary] log-softmax and its gradients never exist:
    the fused head + loss of 512 tokens over 32000 classes (62.5 MiB of
    float32 logits) needs under half of eager's memory, measured."""
    torch.manual_seed(0)
    h = torch.randn(512, 64, requires_grad=True)
    w = torch.randn(32000, 64, requires_grad=True)
    target = torch.randint(0, 32000, (512,))

    def eager() -> None:
        h.grad = w.grad = None
        F.cross_entropy(F.linear(h, w).float(), target).backward()

    def fused() -> None:
        h.grad = w.grad = None
        ops.fused_linear_cross_entropy(h, w, None, target, MEAN, -100, False)[0].backward()

    assert step_peak(fused).extra < 0.5 * step_peak(eager).extra


@pytest.mark.parametrize("autocast", [False, True], ids=["f32", "bf16-autocast"])
def test_unfused_returned_logits_are_differentiated_outside_the_graph_like_eager(autocast):
    """Logits that fit in one block stay unfused: their `aten.linear`'s
    returned output is detached and made differentiable again outside."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    x = torch.randn(2, 24, 32, requires_grad=True)
    w, b = torch.randn(96, 32, requires_grad=True), torch.randn(96, requires_grad=True)
    target = torch.randint(0, 96, (48,))
    other = torch.randn(2, 24, 96)

    def head(x, w, b):
        logits = F.linear(x, w, b)
        return F.cross_entropy(logits.float().view(-1, 96), target), logits

    compiled = torch.compile(head, backend=fxmlir.backend(strict=True))
    results = []
    for run in (compiled, head):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss, logits = run(x, w, b)
        total = loss + (logits.float() * other).sum()
        results.append((logits, torch.autograd.grad(total, (x, w, b))))
    (got_logits, got), (want_logits, want) = results
    assert type(got_logits.grad_fn).__name__ == "_LogitsGradBackward"
    assert got_logits.dtype == want_logits.dtype
    tolerance = _tolerance(torch.bfloat16 if autocast else torch.float32)
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e, rtol=tolerance["rtol"],
                                   atol=tolerance["rtol"] * e.abs().max().item())


@pytest.mark.parametrize("autocast", [False, True], ids=["f32", "bf16-autocast"])
def test_a_step_that_returns_its_logits_peaks_under_half_of_eagers(autocast):
    """Only the loss is differentiated: no zeros gradient of the returned
    logits is made, inside the graph or out (fxmlir.returned_logits), and
    the fused loss works in blocks. Measured: the f32 step peaked at 0.55x
    eager's with those zeros, 0.32x without; bf16 at 0.40x."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _LMHead(causal=True, tied=True, returns_logits=True)
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxmlir.backend(strict=True))
    ids = torch.randint(0, VOCAB, (4, 64))

    def step(net, run) -> Callable[[], None]:
        def one() -> None:
            for p in net.parameters():
                p.grad = None
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss, _ = run(ids, ids)
            loss.backward()
        return one

    step(model, compiled)()
    assert step_peak(step(model, compiled)).extra < 0.5 * step_peak(step(eager, eager)).extra


def _cross_entropy_module(smoothing: float, rows: int = 1024) -> str:
    t = 'tensor<{}, #fxmlir.device<"cpu">>'
    x, w, z, tgt, loss = (t.format(s) for s in (f"{rows}x16xf32", "2048x16xf32",
                                                  f"{rows}x2048xf32", f"{rows}xsi64", "f32"))
    return f"""
    func.func @before_autodiff(%x: {x}, %w: {w}, %t: {tgt}) -> {loss} {{
      %none = fxmlir.none
      %z = fxmlir.aten.linear %x, %w, %none : ({x}, {w}, none) -> {z}
      %loss = fxmlir.aten.cross_entropy_loss %z, %t, %none {{ignore_index = -100 : i64,
          label_smoothing = {smoothing} : f64, reduction = 1 : i64}} : ({z}, {tgt}, none) -> {loss}
      return %loss : {loss}
    }}"""


def _unfused_losses(text: str) -> list:
    module = _C.Context().parse(text)
    return [s for s in module.explain_stage("before_autodiff") if "cross_entropy" in s.op]


def test_explain_says_why_a_loss_did_not_fuse():
    (site,) = _unfused_losses(_cross_entropy_module(0.1))
    assert "label smoothing is not 0" in site.reason, site.reason
    (site,) = _unfused_losses(_cross_entropy_module(0.0, rows=8))
    assert "the logits fit in one block" in site.reason, site.reason
    assert not _unfused_losses(_cross_entropy_module(0.0))


def _large_head_grads():
    """The fused loss's gradients for a 32 MiB float32 head ([8192, 1024]), and
    eager's weight gradient."""
    torch.manual_seed(0)
    x = torch.randn(4, 1024)
    w = torch.randn(8192, 1024) * 0.01
    target = torch.randint(0, 8192, (4,))
    _, lse, _ = ops.fused_linear_cross_entropy(x, w, None, target, MEAN, -100, False)

    def grads():
        return ops.fused_linear_cross_entropy_grad(torch.tensor(1.0), None, x, w, None, target,
                                                   None, lse, MEAN, -100)

    wr = w.clone().requires_grad_()
    F.cross_entropy(x @ wr.t(), target).backward()
    return grads, wr.grad


def test_a_large_weight_gradient_reuses_a_freed_block_and_never_a_live_one():
    grads, expected = _large_head_grads()
    first = grads()[1]
    torch.testing.assert_close(first, expected, rtol=1e-4, atol=1e-6)
    live = grads()[1]  # the first is alive: a block of its own
    assert live.data_ptr() != first.data_ptr()
    torch.testing.assert_close(first, expected, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(live, expected, rtol=1e-4, atol=1e-6)
    freed = first.data_ptr()
    del first
    # A freed block of its size is taken: its pages are not faulted in again
    # (8192 faults of 4 KiB pages for a new one).
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    again = grads()[1]
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    assert again.data_ptr() == freed
    assert faults < 2048, faults
    torch.testing.assert_close(again, expected, rtol=1e-4, atol=1e-6)


def test_a_reused_gradient_block_is_seen_by_the_memory_profiler():
    grads, _ = _large_head_grads()
    grads()  # made and freed: its block is kept
    with torch.profiler.profile(profile_memory=True) as prof:
        grad_weight = grads()[1]
        del grad_weight
    # Made inside the op (its event's allocations), freed after it.
    (op,) = [e for e in prof.events() if e.name == "fxmlir::fused_linear_cross_entropy_grad"]
    assert op.cpu_memory_usage >= 32 << 20
    assert any(e.name == "[memory]" and e.cpu_memory_usage == -(32 << 20) for e in prof.events())
