"""Graphs that write tensors in place before autodiff: the default pipeline
(CSE, canonicalization, fusions) must give eager's outputs and gradients."""

from __future__ import annotations

import copy
import json
import warnings

import pytest
import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

import fxmlir
from fxmlir.mutation import mutation_touching_nodes, written_inputs
from fxmlir.roundtrip import FallbackWarning


def sin_around_add_(x):
    a = torch.sin(x)
    x.add_(1)
    b = torch.sin(x)
    return a + b


def relu_twice_then_add_(x):
    a = torch.relu(x)
    b = torch.relu(x)
    a.add_(1)
    return a + b


def clone_twice_then_mul_(x):
    a = x.clone()
    b = x.clone()
    a.mul_(2)
    return a + b


def ones_like_twice_then_add_(x):
    a = torch.ones_like(x)
    b = torch.ones_like(x)
    a.add_(x)
    return a * b


def write_through_a_view(x):
    view = x.view(-1)
    a = x.sin()
    view.mul_(3)
    b = x.sin()
    return a - b


def setitem_and_iadd(x):
    a = x.exp()
    x[0] = 5.0
    b = x.exp()
    x += 1
    c = x.exp()
    return a + b + c


@pytest.mark.parametrize("fn", [sin_around_add_, relu_twice_then_add_, clone_twice_then_mul_,
                                ones_like_twice_then_add_, write_through_a_view,
                                setitem_and_iadd])
def test_functions_writing_in_place_match_eager(fn, tmp_path):
    x = torch.tensor([0.5, 1.0, 2.0, -1.5])
    expected_x = x.clone()
    expected = fn(expected_x)
    compiled = torch.compile(fn, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        got_x = x.clone()
        got = compiled(got_x)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(got_x, expected_x)  # the input's own mutation
    (summary,) = tmp_path.glob("*/graph_*/before_autodiff/summary.json")
    assert json.loads(summary.read_text())["mutation_ops_imported"] > 0


class GeluAroundMul_(nn.Module):
    """F.gelu(lin(x)); x.mul_(2); F.gelu(lin(x)): the two linears and gelus
    read different x, so neither may be merged (nor fused as one). Forward
    only: the linear saves x for backward, so eager cannot train it either."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = F.gelu(self.lin(x))
        x.mul_(2)
        return a + F.gelu(self.lin(x))


class StepBuffer(nn.Module):
    """A buffer advanced inside the step, as a schedule or counter would be."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("step", torch.zeros(()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.lin(x) * torch.exp(-self.step)
        self.step.add_(1)
        return a + self.lin(x) * torch.exp(-self.step)


def test_inference_writing_in_place_matches_eager():
    torch.manual_seed(0)
    model = GeluAroundMul_()
    compiled = torch.compile(model, backend="fxmlir")
    x = torch.randn(4, 8)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        expected_x, got_x = x.clone(), x.clone()
        torch.testing.assert_close(compiled(got_x), model(expected_x))
    torch.testing.assert_close(got_x, expected_x)


@pytest.mark.parametrize("model_class", [StepBuffer])
def test_training_steps_writing_in_place_match_eager(model_class):
    torch.manual_seed(0)
    eager = model_class()
    fused = copy.deepcopy(eager)
    compiled = torch.compile(fused, backend="fxmlir")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        for _ in range(3):
            x = torch.randn(4, 8)
            ref = eager(x.clone())
            out = compiled(x.clone())
            torch.testing.assert_close(out, ref)
            grad = torch.randn_like(ref)
            ref.backward(grad)
            out.backward(grad)
            for p, q in zip(eager.parameters(), fused.parameters()):
                torch.testing.assert_close(q.grad, p.grad)
            for module in (eager, fused):
                module.zero_grad()
    for b, c in zip(eager.buffers(), fused.buffers()):
        torch.testing.assert_close(c, b)


def test_graphs_without_writes_keep_every_node_typed():
    gm = fx.symbolic_trace(lambda x: torch.sin(x) + torch.relu(x))
    assert mutation_touching_nodes(gm.graph) == set()


def test_written_inputs_recognizes_in_place_spellings():
    graph = fx.Graph()
    x, y = graph.placeholder("x"), graph.placeholder("y")
    cases = {
        graph.call_method("add_", (x, 1)): [x],
        graph.call_function(torch.ops.aten.copy_.default, (x, y)): [x],
        graph.call_function(torch.ops.aten.add.Tensor, (x, y)): [],
        graph.call_function(F.relu, (x,), {"inplace": True}): [x],
        graph.call_function(F.relu, (x,), {"inplace": False}): [],
        graph.call_function(torch.add, (x, y), {"out": y}): [y],
        graph.call_method("__setitem__", (x, 0, 1.0)): [x],
        graph.call_method("__add__", (x, y)): [],
        graph.call_method("_private_helper", (x,)): [],
    }
    for node, expected in cases.items():
        assert written_inputs(node) == expected, node.format_node()


@pytest.mark.parametrize("fn, writes_input", [
    (sin_around_add_, True), (write_through_a_view, True), (setitem_and_iadd, True),
    (relu_twice_then_add_, False), (clone_twice_then_mul_, False),
    (ones_like_twice_then_add_, False),
])
def test_only_graphs_writing_an_input_keep_the_default_partition(fn, writes_input):
    """Min-cut may recompute from an input the step has written since; a
    write to memory the graph allocated (T5's attention) is no such risk,
    and min-cut keeps its step's memory down."""
    from fxmlir.mutation import writes_an_input

    seen = []

    def record(gm, example_inputs):
        seen.append(writes_an_input(gm.graph))
        return gm.forward

    torch.compile(fn, backend=record)(torch.randn(4, 8))
    assert seen == [writes_input]
