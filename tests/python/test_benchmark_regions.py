"""benchmarks/regions.py times a region's ATen ops as a round-tripped graph
would run them: the same results as the region, through the same calls."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's benchmarks/

from benchmarks import regions  # noqa: E402

_T = 'tensor<4x8xf32, #fxmlir.device<"cpu">>'
_ROW = 'tensor<8xf32, #fxmlir.device<"cpu">>'
REGION = f"""func.func private @jit_add_mul_sum(%arg0: {_T}, %arg1: {_T}) -> ({_T}, {_ROW}) {{
  %0 = fxmlir.aten.add.Tensor %arg0, %arg1 {{alpha = 2 : i64}} : ({_T}, {_T}) -> {_T}
  %1 = fxmlir.aten.mul.Tensor %0, %arg0 : ({_T}, {_T}) -> {_T}
  %2 = fxmlir.aten.sum.dim_IntList %1 {{dim = array<i64: 0>, keepdim = false}} : ({_T}) -> {_ROW}
  return %1, %2 : {_T}, {_ROW}
}}
"""


class _Dispatched(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.overloads: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.overloads.append(str(func))
        return func(*args, **(kwargs or {}))


def test_a_regions_ops_compute_what_the_region_does_through_the_graphs_calls(monkeypatch):
    torch.manual_seed(0)
    args = regions._inputs(REGION, "jit_add_mul_sum")
    eager = regions._eager(REGION, "jit_add_mul_sum")
    overload_calls = []
    call = torch._ops.OpOverload.__call__
    monkeypatch.setattr(torch._ops.OpOverload, "__call__",
                        lambda self, *a, **k: overload_calls.append(self) or call(self, *a, **k))
    got = eager(args)
    monkeypatch.undo()
    assert overload_calls == []  # the bindings and _op, as the graph's code
    with _Dispatched() as dispatched:
        eager(args)
    assert dispatched.overloads == ["aten.add.Tensor", "aten.mul.Tensor", "aten.sum.dim_IntList"]
    expected = torch.ops.fxmlir.mlir_jit(REGION, "jit_add_mul_sum", args)
    assert len(got) == 2
    for one, other in zip(got, expected):
        torch.testing.assert_close(one, other)
    x, y = args
    torch.testing.assert_close(got[1], ((x + 2 * y) * x).sum(0))



@pytest.mark.parametrize("argv, says", [
    (["--models", "gpt2,llama2"], "unknown 'llama2'; accepted: mlp, gpt2, llama, llama1, bert"),
    (["--threads", "0"], "thread counts of at least 1"),
], ids=["model", "threads"])
def test_an_unknown_model_or_thread_count_is_a_usage_error(argv, says, capsys):
    with pytest.raises(SystemExit) as stop:
        regions.main(argv)
    assert stop.value.code == 2
    assert says in " ".join(capsys.readouterr().err.split())
