"""Round-tripped graphs call each op overload's C++ entry point directly
(fxmlir/direct_calls.py), not through OpOverload.__call__: same results,
no Python frame per op."""

from __future__ import annotations

import torch
import torch.fx as fx

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
