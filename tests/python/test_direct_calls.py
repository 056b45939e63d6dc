"""Round-tripped graphs call each op overload's C++ entry point directly
(fxmlir/direct_calls.py), not through OpOverload.__call__: same results,
no Python frame per op."""

from __future__ import annotations

import pytest
import torch
import torch.fx as fx
from torch.utils._python_dispatch import TorchDispatchMode

import fxmlir
from fxmlir import direct_calls


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.nn.functional.gelu(self.up(x))).transpose(0, 1).sum()


def test_the_generated_code_names_no_overload_and_computes_the_same():
    def f(x, y):
        return torch.ops.aten.add.Tensor(torch.ops.aten.t.default(x), y) * 2

    gm = fx.symbolic_trace(f)
    assert "torch.ops.aten.t.default(" in gm.code
    forward = direct_calls.forward(gm.code, type(gm).forward.__globals__, gm)
    x, y = torch.randn(3, 4), torch.randn(4, 3)
    torch.testing.assert_close(forward(x, y), f(x, y), rtol=0, atol=0)
    assert "torch.ops." not in forward.func.__code__.co_names
    assert "_op_aten_t_default" in forward.func.__code__.co_names


def test_a_training_step_makes_no_overload_calls(monkeypatch):
    torch.manual_seed(0)
    model = Block()
    reference = Block()
    reference.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend=fxmlir.backend(strict=True))
    x = torch.randn(4, 8, 16)
    compiled(x).backward()  # compiles both graphs

    calls = []
    call = torch._ops.OpOverload.__call__

    def counting(self, /, *args, **kwargs):
        calls.append(str(self))
        return call(self, *args, **kwargs)

    monkeypatch.setattr(torch._ops.OpOverload, "__call__", counting)
    model.zero_grad(set_to_none=True)
    loss = compiled(x)
    loss.backward()
    monkeypatch.undo()
    assert calls == []
    expected = reference(x)
    expected.backward()
    torch.testing.assert_close(loss, expected)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


class _Dispatched(TorchDispatchMode):
    """Records the op overloads that reach the Python dispatcher."""

    def __init__(self) -> None:
        super().__init__()
        self.overloads: list[torch._ops.OpOverload] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.overloads.append(func)
        return func(*args, **(kwargs or {}))


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


_aten = torch.ops.aten
_CAST = dict(layout=None, device=None, pin_memory=None, non_blocking=False, memory_format=None)
# Each binding's calls, in the form FX's generated code makes them.
BINDING_CALLS = {
    _aten._to_copy.default: [
        lambda: ((_x(2, 3),), dict(_CAST, dtype=torch.bfloat16)),
        lambda: ((_x(2, 3),), dict(_CAST, dtype=torch.float32)),  # same dtype: still a copy
        lambda: ((_x(3, 2).t(),), dict(_CAST, dtype=torch.float16,
                                       memory_format=torch.contiguous_format)),
        lambda: ((_x(2, 3),), dict(_CAST, dtype=torch.float64, device=torch.device("cpu"),
                                   non_blocking=True)),
        lambda: ((_x(2, 3),), dict(_CAST, dtype=torch.float64, layout=torch.strided)),
        # As the exported graphs spell a cast: strided, on its device.
        lambda: ((_x(3, 2).t(),), dict(_CAST, dtype=torch.bfloat16, layout=torch.strided,
                                       device=torch.device("cpu"), pin_memory=False)),
    ],
    _aten.view.default: [lambda: ((_x(2, 6), [3, 4]), {})],
    _aten.t.default: [lambda: ((_x(2, 3),), {})],
    _aten.transpose.int: [lambda: ((_x(2, 3, 4), 0, 2), {})],
    _aten.permute.default: [lambda: ((_x(2, 3, 4), [2, 0, 1]), {})],
    _aten.expand.default: [lambda: ((_x(1, 3), [4, 3]), {})],
    _aten.unsqueeze.default: [lambda: ((_x(2, 3), 1), {})],
    _aten.detach.default: [lambda: ((_x(2, 3),), {})],
    _aten.clone.default: [lambda: ((_x(3, 2).t(),), {}),
                          lambda: ((_x(3, 2).t(),), dict(memory_format=torch.contiguous_format))],
    _aten.mm.default: [lambda: ((_x(2, 3), _x(4, 3).t()), {})],
    _aten.bmm.default: [lambda: ((_x(2, 3, 4), _x(2, 4, 5)), {})],
    _aten.addmm.default: [lambda: ((_x(5), _x(2, 3), _x(3, 5)), {}),
                          lambda: ((_x(5), _x(2, 3), _x(3, 5)), dict(beta=2, alpha=0.5))],
    _aten.add.Tensor: [lambda: ((_x(2, 3), _x(3)), dict(alpha=2)),
                       lambda: ((_x(2, 3).bfloat16(), 2.5), {})],
    _aten.add_.Tensor: [lambda: ((_x(2, 3), _x(2, 3)), {})],
    _aten.mul.Tensor: [lambda: ((_x(2, 3), _x(2, 1)), {}),
                       lambda: ((torch.arange(6).view(2, 3), 3), {})],
    _aten.cat.default: [lambda: (([_x(2, 3), _x(2, 1)], 1), {})],
    _aten.sum.dim_IntList: [lambda: ((_x(2, 3), [0], True), {}),
                            lambda: ((_x(2, 3).bfloat16(), [1]), dict(dtype=torch.float32))],
    _aten.embedding.default: [lambda: ((_x(5, 3), torch.tensor([[0, 4], [2, 2]])), {}),
                              lambda: ((_x(5, 3), torch.tensor([1, 0]), 0), {})],
    _aten.native_layer_norm.default: [lambda: ((_x(2, 4), [4], _x(4), _x(4), 1e-5), {}),
                                      lambda: ((_x(2, 4), [4], None, None, 1e-5), {})],
}


def test_every_binding_has_calls():
    assert set(BINDING_CALLS) == set(direct_calls.BINDINGS)


def _aliased(result: torch.Tensor, inputs: list[torch.Tensor]) -> list[bool]:
    """Whether `result` shares each input's storage."""
    return [result.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
            for t in inputs]


def _graph_calling(overload, args, kwargs):
    """A GraphModule that calls `overload` on its inputs as FX writes it."""
    graph = fx.Graph()
    tensors = []

    def placeholder(value):
        if isinstance(value, torch.Tensor):
            tensors.append(value)
            return graph.placeholder(f"arg{len(tensors)}")
        if isinstance(value, list):
            return [placeholder(item) for item in value]
        return value

    out = graph.call_function(overload, tuple(placeholder(a) for a in args), kwargs)
    graph.output(out)
    return fx.GraphModule(torch.nn.Module(), graph), tensors


@pytest.mark.parametrize("overload,index", [
    (overload, i) for overload, calls in BINDING_CALLS.items() for i in range(len(calls))],
    ids=lambda value: str(value))
def test_a_binding_dispatches_its_overload_with_the_same_result(overload, index):
    torch.manual_seed(0)
    args, kwargs = BINDING_CALLS[overload][index]()
    gm, tensors = _graph_calling(overload, args, kwargs)
    forward = direct_calls.forward(gm.code, type(gm).forward.__globals__, gm)
    assert direct_calls.BINDINGS[overload] in forward.func.__globals__.values()
    inputs = [t.clone() for t in tensors]
    with _Dispatched() as dispatched:
        got = forward(*inputs)
    assert dispatched.overloads == [overload]
    expected_inputs = [t.clone() for t in tensors]
    expected = gm(*expected_inputs)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    got_all = got if isinstance(got, tuple) else (got,)
    expected_all = expected if isinstance(expected, tuple) else (expected,)
    for one, other in zip(got_all, expected_all, strict=True):
        assert one.dtype == other.dtype and one.stride() == other.stride()
        # A view stays a view of the same input, a copy a copy.
        assert _aliased(one, inputs) == _aliased(other, expected_inputs)
    for a, b in zip(inputs, expected_inputs):  # in place on the same input
        torch.testing.assert_close(a, b, rtol=0, atol=0)
