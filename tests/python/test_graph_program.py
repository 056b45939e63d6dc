"""Round-tripped graphs' bodies run as C++ op calls (fxmlir/graph_program.py,
csrc/executor/GraphProgram.cpp): the generated Python's results, aliasing
and errors, each input dropped at its last use, and the generated Python
where a node is one the program does not run."""

from __future__ import annotations

import gc
import logging
import operator
import pickle
import weakref

import pytest
import torch
import torch.fx as fx

import fxmlir
from fxmlir import graph_program, runtime_fallback
from fxmlir.config import Options
from fxmlir.logs import log
from test_direct_calls import _Dispatched

pytestmark = pytest.mark.skipif(graph_program.GraphProgram is None,
                                reason="this build has no fxmlir._graph_program")

aten = torch.ops.aten


def _body(x, w, n):
    flat = aten.view.default(x, [n, -1])  # a size from an input
    product = aten.mm.default(flat, aten.t.default(w))
    scaled = aten.mul.Tensor(product, 0.5)  # a number where a tensor goes
    total = aten.sum.dim_IntList(scaled, [1], keepdim=True)  # a default left out
    largest = aten.max.dim(scaled, 1)  # two results
    cast = aten._to_copy.default(largest[1], dtype=torch.float32)
    return (total, largest[0], cast, flat, None, n)


def _run(gm, inputs):
    run = graph_program.build(graph_program.encode(gm))
    boxed = list(inputs)
    result = run(boxed)
    assert boxed == []  # the boxed convention: the program took the inputs
    return result


def test_a_program_computes_what_the_generated_python_does():
    gm = fx.symbolic_trace(_body)
    x, w = torch.randn(2, 3, 4), torch.randn(5, 12)
    result = _run(gm, [x, w, 2])
    expected = gm(x, w, 2)
    assert type(result) is type(expected)
    for got, want in zip(result, expected):
        if isinstance(want, torch.Tensor):
            torch.testing.assert_close(got, want, rtol=0, atol=0)
            assert (got.dtype, got.stride()) == (want.dtype, want.stride())
        else:
            assert got == want
    assert result[3].data_ptr() == x.data_ptr()  # the view still aliases its input


def test_a_list_output_stays_a_list():
    gm = fx.symbolic_trace(lambda x: [aten.neg.default(x), x])
    x = torch.randn(3)
    result = _run(gm, [x])
    assert isinstance(result, list) and result[1] is not None
    torch.testing.assert_close(result[0], -x)


@torch.library.custom_op("fxmlir_test::inputs_alive", mutates_args=())
def _inputs_alive(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor([float(ref() is not None) for ref in _INPUT_REFS])


_INPUT_REFS: list[weakref.ref] = []


def test_each_input_is_dropped_after_its_last_use():
    def body(x, y):
        doubled = aten.mul.Tensor(x, 2)  # x's last use
        probe = torch.ops.fxmlir_test.inputs_alive.default(doubled)
        return (aten.add.Tensor(doubled, y), probe)

    gm = fx.symbolic_trace(body)
    run = graph_program.build(graph_program.encode(gm))
    x, y = torch.randn(4), torch.randn(4)
    _INPUT_REFS[:] = [weakref.ref(x), weakref.ref(y)]
    boxed = [x, y]
    del x, y
    gc.collect()
    total, probe = run(boxed)
    # x died before the probe ran (the program held it last); y, still
    # to be used, lived.
    assert probe.tolist() == [0.0, 1.0]
    assert total.shape == (4,)


def test_a_failing_op_raises_its_error_naming_the_node():
    gm = fx.symbolic_trace(_body)
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied") as error:
        _run(gm, [torch.randn(2, 3, 4), torch.randn(5, 7), 2])
    assert error.value.fx_node == "mm_default"


def test_an_index_error_keeps_its_type():
    gm = fx.symbolic_trace(lambda x: aten.select.int(x, 0, 9))
    with pytest.raises(IndexError) as error:
        _run(gm, [torch.randn(3)])
    assert error.value.fx_node == "select_int"


class _Messages(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_node_the_program_cannot_run_keeps_the_generated_python():
    def body(x):
        return (torch.nn.functional.relu(x),)  # a Python function, not an op overload

    gm = fx.symbolic_trace(body)
    with pytest.raises(graph_program.Unsupported, match="node 'relu' calls"):
        graph_program.encode(gm)
    # Said where TORCH_LOGS=fxmlir shows it (torch's loggers do not
    # propagate to pytest's caplog).
    messages, level = _Messages(), log.level
    log.addHandler(messages)
    log.setLevel(logging.INFO)
    try:
        run = runtime_fallback.guarded(gm, gm, "0/forward")
    finally:
        log.removeHandler(messages)
        log.setLevel(level)
    assert any("0/forward runs as generated Python, not as a graph program: node 'relu'"
               in message for message in messages.messages)
    x = torch.randn(3)
    torch.testing.assert_close(run([x])[0], torch.relu(x))


def test_an_item_of_a_constant_is_not_encoded():
    graph = fx.Graph()
    x = graph.placeholder("x")
    item = graph.call_function(operator.getitem, ((x, x), 0))
    graph.output((item,))
    with pytest.raises(graph_program.Unsupported, match="an item of a constant"):
        graph_program.encode(fx.GraphModule(torch.nn.Module(), graph))


@pytest.mark.parametrize("change, message", [
    (lambda e: e.update(inputs=[99, 1, 2]), "input slot out of range"),
    (lambda e: e["nodes"].__setitem__(0, ("op", "t", "aten::nonexistent", "", [], 3, [])),
     "no operator aten::nonexistent"),
    (lambda e: e["nodes"].__setitem__(0, ("op", "t", "aten::t", "", [], 3, [])),
     "aten::t takes 1 arguments, 0 given"),
    (lambda e: e["nodes"].__setitem__(0, ("jump", "t", 0, 0, 3, [])),
     "unknown node kind 'jump'"),
])
def test_a_bad_encoding_is_a_value_error_and_the_python_runs(change, message):
    encoding = graph_program.encode(fx.symbolic_trace(_body))
    change(encoding)
    with pytest.raises(ValueError, match=message):
        graph_program.GraphProgram(**encoding)
    assert graph_program.build(encoding) is None


def test_a_bad_input_is_a_type_error_naming_the_accepted_ones():
    run = graph_program.build(graph_program.encode(fx.symbolic_trace(_body)))
    with pytest.raises(TypeError, match=r"type str \(accepted: Tensor, int, float"):
        run([torch.randn(2, 3, 4), torch.randn(5, 12), "2"])
    with pytest.raises(TypeError, match="3 inputs expected, 2 given"):
        run([torch.randn(2, 3, 4), torch.randn(5, 12)])


def test_the_encoding_pickles_with_its_constants():
    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("scale", torch.full((3,), 2.0))

        def forward(self, x):
            return (aten.mul.Tensor(x, self.scale), aten._to_copy.default(
                x, dtype=torch.bfloat16, memory_format=torch.contiguous_format))

    gm = fx.symbolic_trace(Scaled())
    encoding = pickle.loads(pickle.dumps(graph_program.encode(gm)))
    x = torch.randn(3)
    scaled, cast = graph_program.build(encoding)([x])
    torch.testing.assert_close(scaled, x * 2)
    assert cast.dtype == torch.bfloat16


def _recording_builds(monkeypatch) -> list[bool]:
    """Whether each graph the round trip compiles from now on gets a program."""
    built: list[bool] = []
    forward = graph_program.forward

    def recording(gm, graph="the graph"):
        program = forward(gm, graph)
        built.append(program is not None)
        return program

    monkeypatch.setattr(graph_program, "forward", recording)
    return built


@pytest.mark.parametrize("dynamic, lengths", [(False, (8, 8)), (True, (8, 12, 5))])
def test_a_training_loop_runs_its_graphs_as_programs(monkeypatch, dynamic, lengths):
    built = _recording_builds(monkeypatch)
    torch.manual_seed(0)
    model, reference = (torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                            torch.nn.Linear(32, 16), torch.nn.LayerNorm(16))
                        for _ in range(2))
    reference.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend=fxmlir.backend(strict=True), dynamic=dynamic)
    for tokens in lengths:
        x = torch.randn(2, tokens, 16)
        compiled(x).square().mean().backward()
        reference(x).square().mean().backward()
    with torch.no_grad():  # an eval step: the inference graph
        torch.testing.assert_close(compiled(x), reference(x), rtol=1e-5, atol=1e-6)
    torch._dynamo.reset()
    assert len(built) >= 3 and all(built)  # forward, backward and inference
    for ours, theirs in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (5, 7.5)])
def test_size_arithmetic_is_pythons(a, b):
    def body(a, b):
        return (a + b, a - b, a * b, a // b, a % b, a / b, -a,
                torch.sym_max(a, b), torch.sym_min(a, b))

    gm = fx.symbolic_trace(body)
    assert {node.target for node in gm.graph.nodes if node.op == "call_function"} >= {
        operator.add, operator.floordiv, operator.mod, operator.neg}
    result = _run(gm, [a, b])
    expected = body(a, b)
    assert result == expected
    assert [type(r) for r in result] == [type(e) for e in expected]


def test_a_size_divided_by_zero_raises_pythons_error():
    gm = fx.symbolic_trace(lambda a, b: (a // b,))
    with pytest.raises(ValueError, match="division or modulo by zero") as error:
        _run(gm, [3, 0])
    assert error.value.fx_node == "floordiv"


def test_a_dispatch_mode_sees_each_op_and_an_input_returned_is_the_same_object():
    gm = fx.symbolic_trace(lambda x, w: (aten.mm.default(x, aten.t.default(w)), w))
    run = graph_program.build(graph_program.encode(gm))
    x, w = torch.randn(2, 3), torch.randn(4, 3)
    with _Dispatched() as mode:
        product, same = run([x, w])
    assert mode.overloads == [aten.t.default, aten.mm.default]
    assert same is w
    torch.testing.assert_close(product, x @ w.t())


def test_graph_programs_off_runs_the_generated_python(monkeypatch):
    built = _recording_builds(monkeypatch)
    assert Options.from_env({}).graph_programs
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    compiled = torch.compile(model, backend=fxmlir.backend(strict=True, graph_programs=False))
    x = torch.randn(8, 16)
    loss = compiled(x).square().mean()
    loss.backward()
    torch._dynamo.reset()
    assert built == []
    torch.testing.assert_close(loss, model(x).square().mean())


def test_items_count_from_the_end_as_in_python():
    def body(x):
        parts = aten.split.Tensor(x, 2)
        return (parts[-1], parts[0])

    gm = fx.symbolic_trace(body)
    x = torch.arange(5.0)
    last, first = _run(gm, [x])
    assert last.tolist() == [4.0] and first.tolist() == [0.0, 1.0]
    gm = fx.symbolic_trace(lambda x: (aten.split.Tensor(x, 2)[-4],))
    with pytest.raises(IndexError, match="item -4 of 3") as error:
        _run(gm, [x])
    assert error.value.fx_node == "getitem"
