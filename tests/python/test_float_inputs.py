"""Floats Dynamo passes as tensors under dynamic=True: written in as
constants, checked at each call (fxmlir/float_inputs.py)."""

from __future__ import annotations

import math
import operator

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

import fxmlir
from fxmlir import float_inputs


def _graph_with_a_float_input() -> fx.GraphModule:
    """x * sqrt(2 / pi.item()), as Dynamo traces gelu_new's constant."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    pi = graph.placeholder("pi")
    item = graph.call_method("item", (pi,))
    ratio = graph.call_function(operator.truediv, (2.0, item))
    root = graph.call_function(torch._sym_sqrt, (ratio,))
    graph.output(graph.call_function(operator.mul, (x, root)))
    return fx.GraphModule(torch.nn.Module(), graph)


def test_a_float_input_is_written_in_and_its_arithmetic_folded():
    gm = _graph_with_a_float_input()
    x, pi = torch.randn(4), torch.tensor(math.pi, dtype=torch.float64)
    specialized = float_inputs.specialize(gm, [x, pi])
    assert specialized.values == {1: math.pi}
    (mul,) = [n for n in specialized.graph.graph.nodes if n.op == "call_function"]
    assert mul.args[1] == math.sqrt(2 / math.pi)  # a constant fusions can match
    assert not [n for n in specialized.graph.graph.nodes if n.op == "call_method"]
    torch.testing.assert_close(specialized.graph(x, pi), gm(x, pi))
    assert specialized.holds([x, pi]) and not specialized.holds([x, torch.tensor(3.0)])


def test_a_graph_without_float_inputs_or_constants_to_fold_is_kept():
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(torch.tanh, (x,)))
    assert float_inputs.specialize(fx.GraphModule(torch.nn.Module(), graph),
                                   [torch.randn(2)]) is None


def test_a_float_input_that_changes_is_not_assumed():
    calls = []

    def fast(*args):
        calls.append("fast")
        return "fast"

    def general():
        calls.append("compiled")
        return lambda *args: "general"

    gm = _graph_with_a_float_input()
    x = torch.randn(4)
    specialized = float_inputs.specialize(gm, [x, torch.tensor(math.pi, dtype=torch.float64)])
    call = float_inputs.guarded(specialized, fast, general, "g")
    assert call(x, torch.tensor(math.pi, dtype=torch.float64)) == "fast"
    assert call(x, torch.tensor(3.0, dtype=torch.float64)) == "general"
    assert call(x, torch.tensor(2.0, dtype=torch.float64)) == "general"
    assert calls == ["fast", "compiled"]  # the general graph compiled once


class ScaledTanh(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)
        self.scale = 0.5
        self.p = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.dropout(torch.tanh(self.linear(x)) * self.scale, self.p)


def test_training_with_float_attributes_under_dynamic_true_matches_eager():
    torch.manual_seed(0)
    model = ScaledTanh()
    compiled = torch.compile(model, backend=fxmlir.backend(), dynamic=True)
    for length, scale in ((3, 0.5), (5, 0.5), (4, 2.0)):  # the float changes last
        model.scale = scale
        x = torch.randn(length, 8, requires_grad=True)
        out = compiled(x)
        torch.testing.assert_close(out, model(x))
        (grad,) = torch.autograd.grad(out.sum(), x)
        (want,) = torch.autograd.grad(model(x).sum(), x)
        torch.testing.assert_close(grad, want)
