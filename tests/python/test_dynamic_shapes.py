"""Graphs compiled for varying shapes (Dynamo's automatic dynamic shapes,
`dynamic=True`) keep their fusions and JIT regions: symbolic sizes survive
the round trip, regions with dynamic dims lower and run, and every step of a
loop whose sequence length changes runs the fused ops a fixed-length loop
runs."""

from __future__ import annotations

import json

import pytest
import torch
import torch.fx as fx
from torch.fx.experimental.proxy_tensor import make_fx

import fxmlir
from fxmlir import _C
from fxmlir.symbolic_sizes import SizeValues, UnboundSize


def _rot(h: torch.Tensor, c: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """A rotary embedding over heads: views with symbolic sizes, a slice of a
    transposed tensor, a concatenation."""
    q = h.view(h.shape[0], h.shape[1], 4, 16).transpose(1, 2)
    return q * c.unsqueeze(1) + torch.cat((-q[..., 8:], q[..., :8]), -1) * s.unsqueeze(1)


def _stages(dump_dir) -> dict[str, list[dict]]:
    stages: dict[str, list[dict]] = {}
    for path in sorted(dump_dir.glob("*/*/*/summary.json")):
        summary = json.loads(path.read_text())
        stages.setdefault(summary["stage"], []).append(summary)
    return stages


def test_size_values_rebuild_symbolic_sizes_from_the_inputs():
    traced = make_fx(lambda x, n: x, tracing_mode="symbolic")(torch.randn(3, 4), 5)
    inputs = [n for n in traced.graph.nodes if n.op == "placeholder"]
    graph = fx.Graph()
    for node in inputs:
        graph.placeholder(node.name).meta = dict(node.meta)
    (rows, columns), count = inputs[0].meta["val"].shape, inputs[1].meta["val"]
    sizes = SizeValues(graph)
    values = sizes.values([rows * 16, columns, 7, rows * 16, count + rows])
    assert values[2] == 7
    assert values[0] is values[3]  # one node per expression
    assert values[4].meta["val"] is not None
    graph.output(tuple(values))
    module = fx.GraphModule(torch.nn.Module(), graph)
    assert module(torch.randn(5, 2), 3) == (80, 2, 7, 80, 8)
    # A symbol no input provides cannot be rebuilt.
    only_count = fx.Graph()
    only_count.placeholder(inputs[1].name).meta = dict(inputs[1].meta)
    with pytest.raises(UnboundSize, match="no input of the graph provides"):
        SizeValues(only_count).value(rows * 2)


def test_symbolic_layouts_and_eval_steps_keep_their_regions(tmp_path):
    """The backward restored a strided layout with a raw symbol (NameError
    at run time, the whole backward replaced); the batch-1 eval step's
    rotary region did not lower (the stage lost every region)."""
    compiled = torch.compile(_rot, dynamic=True, backend=fxmlir.backend(
        strict=True, dump_dir=str(tmp_path)))
    for batch, length in ((2, 7), (3, 5)):
        inputs = [torch.randn(batch, length, n, requires_grad=True) for n in (64, 16, 16)]
        copies = [t.detach().clone().requires_grad_() for t in inputs]
        out = compiled(*inputs)
        torch.testing.assert_close(out, _rot(*copies))
        out.square().sum().backward()
        _rot(*copies).square().sum().backward()
        for got, want in zip(inputs, copies):
            torch.testing.assert_close(got.grad, want.grad)
    with torch.no_grad():
        inputs = [torch.randn(1, 9, n) for n in (64, 16, 16)]
        torch.testing.assert_close(compiled(*inputs), _rot(*inputs))
    stages = _stages(tmp_path)
    for stage in ("forward", "backward", "inference"):
        assert all(s["fused_ops"].get("fxmlir.mlir_jit") for s in stages[stage]), stage


def test_a_region_traced_at_other_lengths_is_not_compiled_again():
    """Dynamo compiles a graph per length here (dynamic=False); each graph's
    regions are the first one's at other sizes: one compile serves them."""
    def f(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x + y) * x

    compiled = torch.compile(f, dynamic=False, backend=fxmlir.backend(strict=True))
    builds = []
    for length in (7, 9, 11):
        x, y = (torch.randn(2, length, 32, requires_grad=True) for _ in range(2))
        before = _jit_builds()
        out = compiled(x, y)
        out.square().sum().backward()
        builds.append(_jit_builds() - before)
        torch.testing.assert_close(out, f(x, y))
        torch.testing.assert_close(x.grad, torch.func.grad(
            lambda a: f(a, y).square().sum())(x.detach()))
    assert builds[0] >= 2 and builds[1:] == [0, 0], builds


class _BiasGelu(torch.nn.Module):
    """GPT-2's Conv1D: addmm on the flattened rows, viewed back to
    [batch, length, features] by sizes that are symbolic."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(32, 64) * 0.1)
        self.bias = torch.nn.Parameter(torch.randn(64) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.bias, x.view(-1, 32), self.weight)
        return torch.nn.functional.gelu(y.view(x.shape[0], x.shape[1], 64), approximate="tanh")


@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
def test_views_with_symbolic_sizes_keep_the_bias_fusion(tmp_path, dynamic):
    torch.manual_seed(0)
    model = _BiasGelu()
    compiled = torch.compile(model, dynamic=dynamic, backend=fxmlir.backend(
        strict=True, dump_dir=str(tmp_path)))
    for length in (12, 9, 7):
        x = torch.randn(2, length, 32)
        out = compiled(x)
        torch.testing.assert_close(out, model(x))
        out.sum().backward()
    stages = _stages(tmp_path)
    # Every graph, the one for varying lengths too, fuses the bias and GELU.
    assert len(stages["forward"]) == (1 if dynamic else 2)
    for summary in stages["before_autodiff"] + stages["forward"]:
        assert summary["fused_ops"].get("fxmlir.fused_bias_act") == 1, summary["graph"]
    for summary in stages["backward"]:
        assert summary["fused_ops"].get("fxmlir.fused_bias_act_grad") == 1, summary["graph"]


# A loop as users write it: the batch and the sequence length change every
# step (8 lengths, batches 1 to 4, padded rows masked out), an eval step at
# batch 1 under no_grad after every fourth step.
_STEPS = ((2, 10), (2, 7), (3, 9), (4, 6), (1, 8), (2, 11), (3, 5), (2, 12))
_EVAL_AFTER = (3, 7)


def _zoo():
    import importlib.util
    import sys
    from pathlib import Path

    if "model_zoo" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "model_zoo", Path(__file__).parents[2] / "tools" / "model_zoo.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["model_zoo"] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules["model_zoo"]


def _batch(vocab: int, batch: int, length: int) -> dict[str, torch.Tensor]:
    ids = torch.randint(0, vocab, (batch, length))
    mask = torch.ones(batch, length, dtype=torch.long)
    mask[0, length - 2:] = 0  # a padded row
    return {"input_ids": ids, "attention_mask": mask,
            "labels": ids.masked_fill(mask == 0, -100)}


def _jit_builds() -> int:
    """JIT functions built so far: compiled, or loaded from the disk cache."""
    import fxmlir.jit

    stats = fxmlir.jit.stats()
    return stats["compiled"] + stats["disk_hits"]


def _fxmlir_calls(run) -> dict[str, int]:
    """The fxmlir ops (fused kernels and JIT regions) `run` calls."""
    with torch.profiler.profile() as profile:
        run()
    return {e.key: e.count for e in profile.key_averages() if e.key.startswith("fxmlir::")}


def _train(model, steps, dynamic, eval_after, eager=None):
    """Trains `model` compiled by fxmlir (strict: a fallback raises) on
    `steps`, checking every loss against `eager` when given; returns the
    fxmlir calls of each training and eval step when run again on the same
    inputs (all compiled by then), and (JIT compiles, Dynamo graphs
    compiled) per step."""
    zoo = _zoo()
    compiled = torch.compile(model, dynamic=dynamic, backend=fxmlir.backend(strict=True))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    eager_optimizer = torch.optim.AdamW(eager.parameters(), lr=1e-3) if eager else None
    batches = [_batch(zoo.VOCAB, b, t) for b, t in steps]
    compiles = []

    def step(inputs, optimizer, net):
        loss = net(**inputs).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach()

    def evaluate(inputs, net):
        with torch.no_grad():
            return net(input_ids=inputs["input_ids"][:1]).logits

    graphs = torch._dynamo.utils.counters["stats"]
    for index, inputs in enumerate(batches):
        before = _jit_builds(), graphs["unique_graphs"]
        loss = step(inputs, optimizer, compiled)
        if eager:
            torch.testing.assert_close(loss, step(inputs, eager_optimizer, eager),
                                       rtol=1e-4, atol=1e-5)
        if index in eval_after:
            logits = evaluate(inputs, compiled)
            if eager:
                torch.testing.assert_close(logits, evaluate(inputs, eager),
                                           rtol=1e-4, atol=1e-4)
        compiles.append((_jit_builds() - before[0],
                         graphs["unique_graphs"] - before[1]))
    if eager:
        for got, want in zip(model.parameters(), eager.parameters()):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=5e-5)
    calls = [_fxmlir_calls(lambda: step(inputs, optimizer, compiled)) for inputs in batches]
    evals = [_fxmlir_calls(lambda: evaluate(batches[i], compiled)) for i in eval_after]
    return calls, evals, compiles


@pytest.mark.parametrize("dynamic", [None, True], ids=["automatic", "dynamic"])
@pytest.mark.parametrize("name", ["llama", "gpt2", "bert"])
def test_varying_lengths_keep_every_fusion(name, dynamic):
    # GPT-2 under dynamic=True: Dynamo passes gelu_new's math.pi and the
    # dropouts' p as tensors read by .item(); fxmlir writes their values in
    # (checked at each call) and folds sqrt(2/pi), so bias + GELU still fuses.
    _check_varying_lengths(name, dynamic)


def test_specialized_floats_keep_gpt2s_fusion_under_dynamic_true():
    """Dynamo's own float specialization gives the same fusions."""
    with torch._dynamo.config.patch(specialize_float=True):
        _check_varying_lengths("gpt2", True)


def _check_varying_lengths(name: str, dynamic: bool | None) -> None:
    pytest.importorskip("transformers", reason="transformers is not installed "
                        "(scripts/setup.sh installs it)")
    import copy

    zoo = _zoo()
    entry = {m.name: m for m in zoo.MODELS}[name]
    torch.manual_seed(0)
    model = entry.build(0.0).train()
    eager = copy.deepcopy(model)
    calls, evals, compiles = _train(model, _STEPS, dynamic, _EVAL_AFTER, eager)
    # Fixed-shape runs to count against: Dynamo specializes a batch of 1, so
    # a batch-1 step (and every eval step) is held to a fixed run at batch 1.
    fixed = {}
    for batch in (2, 1):
        torch._dynamo.reset()
        torch.manual_seed(0)
        fixed[batch] = _train(entry.build(0.0).train(), [(batch, 10)] * 2, None, (1,))
    for shape, step in zip(_STEPS, calls):
        # The same fused kernels and as many JIT region calls.
        want = fixed[min(shape[0], 2)][0][-1]
        assert step == want and step.get("fxmlir::mlir_jit", 0) > 0, (shape, step, want)
    for step in evals:
        assert step == fixed[1][1][0], (step, fixed[1][1][0])
    # JIT code is compiled per graph Dynamo compiles (its first length, the
    # graph for varying lengths, batch 1's), never per shape: a step that
    # reuses a graph compiles nothing.
    assert all(jit == 0 for jit, dynamo in compiles if dynamo == 0), compiles
    assert sum(dynamo == 0 for _, dynamo in compiles) >= 2, compiles


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    return torch.cat((-x[..., 8:], x[..., :8]), dim=-1) * x


@pytest.mark.parametrize("codegen", [False, True], ids=["exported", "in-regions"])
def test_slice_backward_of_a_varying_length_trains_like_eager(tmp_path, codegen):
    """Its input_sizes hold the length as a symbol: written as the result's
    dynamic size, then rebuilt from the graph's inputs by the exporter (no
    regions), or lowered from the types in a region (once left out of it)."""
    compiled = torch.compile(_rotate_half,
                             backend=fxmlir.backend(codegen=codegen, strict=True,
                                                    dump_dir=str(tmp_path)))
    for length in (5, 9, 7):  # Dynamo's second graph: the length dynamic
        x = torch.randn(2, length, 16, requires_grad=True)
        y = x.detach().clone().requires_grad_()
        grad = torch.randn(2, length, 16)
        (got,) = torch.autograd.grad(compiled(x), x, grad)
        (want,) = torch.autograd.grad(_rotate_half(y), y, grad)
        torch.testing.assert_close(got, want)
    texts = [p.read_text() for p in tmp_path.glob("*/*/backward/final.mlir")]
    dynamic = [_C.Context().parse(text) for text in texts if "x?x" in text]
    assert dynamic, "no graph for varying lengths"
    in_regions = [r.name for m in dynamic for r in m.jit_regions()
                  if "aten::slice_backward" in r.text]
    assert len(in_regions) == (1 if codegen else 0), in_regions


def test_a_slice_to_its_inputs_varying_size_runs_to_the_end():
    """`x[:, :n]` where n is x's own length (AOTAutograd's graphs slice so)
    is a slice to the end: typed, and in GPT-2's backward region again; a
    slice to another size keeps its symbolic end."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from fxmlir import importer

    def slices(x, y):
        whole = torch.ops.aten.slice.Tensor(x, 1, 0, x.size(1))
        part = torch.ops.aten.slice.Tensor(x, 1, 0, y.size(0))
        return whole.tanh(), part.tanh()

    gm = make_fx(slices, tracing_mode="symbolic")(torch.randn(2, 5, 8), torch.randn(3))
    graph = importer.import_graph(gm, "g", _C.Context().is_registered_op).graph
    ops = {op["loc"]: op for op in graph["functions"][0]["ops"]}
    whole, part = ops["slice_1"], ops["slice_2"]
    assert whole["name"] == "fxmlir.aten.slice.Tensor"
    assert whole["attributes"]["end"] == {"int": 9223372036854775807}
    assert part["name"] == "fxmlir.call"  # its end stays a value of the graph
