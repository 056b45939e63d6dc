"""Backward graphs called without the gradients of outputs nobody
differentiated (fxmlir.missing_tangents): a model returns a cache beside its
loss, the step differentiates the loss, and autograd hands the compiled
backward None for the cache instead of zeros."""

from __future__ import annotations

import copy

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

import fxmlir
from fxmlir import missing_tangents
from fxmlir.fallback import FallbackWarning
from fxmlir.memory import step_peak

aten = torch.ops.aten


class _Cached(torch.nn.Module):
    """A loss and a key cache, as transformers' attention layers return."""

    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.key = torch.nn.Linear(width, width)
        self.out = torch.nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        k = self.key(x)
        cache = k.view(*x.shape[:-1], 4, -1).transpose(1, 2)  # [batch, heads, tokens, dim]
        return self.out(torch.relu(k)).square().mean(), cache


@pytest.fixture
def rewrites(monkeypatch):
    """The tangents each rewritten backward went without."""
    seen: list[list[str]] = []
    rewrite = missing_tangents.without

    def recorded(gm, tangents):
        seen.append(list(tangents))
        return rewrite(gm, tangents)

    monkeypatch.setattr(missing_tangents, "without", recorded)
    return seen


@pytest.mark.parametrize("differentiated", ["loss", "both", "alternately"])
def test_gradients_are_eagers_whichever_outputs_a_step_differentiates(rewrites, differentiated):
    torch.manual_seed(0)
    eager = _Cached()
    model = copy.deepcopy(eager)
    net = torch.compile(model, backend=fxmlir.backend(strict=True))
    for step in range(3):
        both = differentiated == "both" or (differentiated == "alternately" and step % 2 == 1)
        x = torch.randn(2, 8, 64)
        for module, run in ((eager, eager), (model, net)):
            module.zero_grad()
            loss, cache = run(x)
            (loss + cache.square().sum() if both else loss).backward()
        for want, got in zip(eager.parameters(), model.parameters()):
            torch.testing.assert_close(got.grad, want.grad)
    # One rewrite, the first time the cache's tangent was missing.
    assert rewrites == ([] if differentiated == "both" else [["tangents_2"]])


def test_a_step_holds_no_zeros_for_an_output_nobody_differentiates(monkeypatch):
    """Measured: with the tangent materialized, autograd's zeros of the
    cache's size are held from the backward's start."""
    x = torch.randn(8, 256, 512)
    cache_bytes = x.numel() * x.element_size()

    def peak() -> int:
        torch._dynamo.reset()
        torch.manual_seed(0)
        model = _Cached(512)
        net = torch.compile(model, backend=fxmlir.backend(strict=True))

        def step() -> None:
            net(x)[0].backward()
            model.zero_grad(set_to_none=False)

        step()
        return step_peak(step).extra

    released = peak()
    monkeypatch.setattr(missing_tangents, "release", lambda outputs: None)
    assert released < peak() - cache_bytes + 4096  # a few bytes: scalars torch wraps


def _backward(x, w, tangents_1, tangents_2):
    """A backward's shape: tangent 2 joins tangent 1's gradient in a sum,
    through a product, and an op that reads it as is."""
    g = aten.mm.default(tangents_1, w)
    summed = aten.add.Tensor(g, aten.t.default(tangents_2))
    product = aten.mm.default(aten.t.default(tangents_2), w)
    return aten.add.Tensor(summed, product), aten.exp.default(tangents_2), aten.mul.Tensor(x, 2)


def _inputs():
    torch.manual_seed(0)
    return [torch.randn(4, 4) for _ in range(4)]


def test_the_rewrite_folds_sums_and_products_and_materializes_the_rest():
    x, w, t1, t2 = _inputs()
    gm = make_fx(_backward, tracing_mode="fake")(x, w, t1, t2)
    tangent = next(n.name for n in gm.graph.nodes if n.name.startswith("tangents_2"))
    rewritten = missing_tangents.without(gm, [tangent])
    targets = [n.target for n in rewritten.graph.nodes if n.op == "call_function"]
    assert targets.count(aten.mm.default) == 1  # the product of zero is gone
    assert aten.add.Tensor not in targets  # the sum with zero is its other operand
    assert aten.zeros.default in targets  # what exp reads
    assert tangent not in [n.name for n in rewritten.graph.nodes]
    want = gm(x, w, t1, torch.zeros_like(t2))
    for got, expected in zip(rewritten(x, w, t1), want):
        torch.testing.assert_close(got, expected)


def test_a_sum_with_zero_is_a_copy_where_its_strides_differ():
    """The sum's result is row-major; its other operand, transposed, is
    copied into that layout (later views read the strides)."""
    def backward(x, tangents_1):
        return aten.view.default(aten.add.Tensor(tangents_1, aten.t.default(x)), [16])

    x, t = _inputs()[:2]
    gm = make_fx(backward, tracing_mode="fake")(x, t)
    rewritten = missing_tangents.without(gm, [n.name for n in gm.graph.nodes
                                              if n.name.startswith("tangents_")])
    targets = [n.target for n in rewritten.graph.nodes if n.op == "call_function"]
    assert targets == [aten.t.default, aten.clone.default, aten.view.default]
    torch.testing.assert_close(rewritten(x), x.t().reshape(16))


def test_a_zero_it_cannot_spell_is_filled_in_at_run_time():
    """exp reads the transposed zero: a layout the rewrite does not
    materialize; the whole graph runs with zeros, as autograd would."""
    def backward(x, tangents_1):
        return aten.exp.default(aten.t.default(tangents_1)), aten.mul.Tensor(x, 2)

    x, t = _inputs()[:2]
    gm = make_fx(backward, tracing_mode="fake")(x, t)
    compiled = []
    run = missing_tangents.Backward(gm, lambda inputs: gm(*inputs),
                                    lambda graph, label: compiled.append(label))
    assert run.accepts_missing_tangents
    want = gm(x, torch.zeros_like(t))
    for got, expected in zip(run([x, None]), want):
        torch.testing.assert_close(got, expected)
    assert compiled == []  # nothing rewritten to compile


def test_a_backward_takes_missing_tangents_only_if_it_can_fill_them_in():
    """A tangent of a symbolic shape that no size input names."""
    gm = make_fx(lambda x, tangents_1: aten.add.Tensor(x, tangents_1),
                 tracing_mode="symbolic")(torch.ones(3), torch.ones(3))
    assert not missing_tangents.Backward(gm, gm, gm).accepts_missing_tangents


def test_a_failed_rewrite_warns_and_the_step_takes_zeros(monkeypatch):
    def broken(gm, tangents):
        raise RuntimeError("no rewrite today")

    monkeypatch.setattr(missing_tangents, "without", broken)
    torch.manual_seed(0)
    eager = _Cached()
    model = copy.deepcopy(eager)
    net = torch.compile(model, backend=fxmlir.backend())
    x = torch.randn(2, 8, 64)
    with pytest.warns(FallbackWarning,
                      match=r"backward graph takes zeros for tangents_2: .*no rewrite today"):
        for _ in range(2):  # the first backward may compile after its forward ran
            net(x)[0].backward()
    eager(x)[0].backward()
    eager(x)[0].backward()
    for want, got in zip(eager.parameters(), model.parameters()):
        torch.testing.assert_close(got.grad, want.grad)
