"""JIT regions scale linearly: outlining a long chain and recomputing
reused values inside a region grow with the region, not faster. Sizes, not
times, are asserted where a size shows it (times live in benchmarks/)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import torch

import fxmlir
from fxmlir import jit

FXMLIR_OPT = Path(fxmlir.__file__).with_name("fxmlir-opt")


def _reuse_chain(steps: int):
    def fn(x: torch.Tensor) -> torch.Tensor:
        for _ in range(steps):
            x = x * x * 0.5
        return x
    return fn


def _lowered_ops(steps: int) -> int:
    """Arithmetic ops in the lowered region of the reuse chain."""
    graph = jit.outline(_reuse_chain(steps), torch.randn(4, 8))
    (name,) = graph.regions
    lowered = subprocess.run([str(FXMLIR_OPT), "--fxmlir-jit-to-linalg"],
                             input=graph.functions[name], capture_output=True,
                             text=True, check=True).stdout
    return len(re.findall(r"\barith\.mulf\b", lowered))


def test_recomputing_reused_values_grows_code_linearly():
    # x * x reads x twice: recomputing x's producer in each read doubled the
    # code per step (2**steps multiplies) before the fused body was bounded.
    small, large = _lowered_ops(8), _lowered_ops(16)
    assert large <= 2.5 * small, (small, large)


def test_reuse_chain_trains_like_eager_with_regions():
    fn = _reuse_chain(12)
    x = torch.rand(16, 32, dtype=torch.float64, requires_grad=True)
    compiled = torch.compile(fn, backend=fxmlir.backend(codegen=True))
    y = compiled(x)
    (grad,) = torch.autograd.grad(y.sum(), x)
    x_eager = x.detach().requires_grad_()
    y_eager = fn(x_eager)
    (grad_eager,) = torch.autograd.grad(y_eager.sum(), x_eager)
    torch.testing.assert_close(y, y_eager)
    torch.testing.assert_close(grad, grad_eager)


def _chain_module(num_ops: int) -> str:
    ty = 'tensor<8x8xf32, #fxmlir.device<"cpu">>'
    lines = [f"func.func @chain(%a: {ty}) -> {ty} {{"]
    prev = "%a"
    for i in range(num_ops):
        op = (f"fxmlir.aten.add.Tensor {prev}, %a {{alpha = 1 : i64}} : ({ty}, {ty}) -> {ty}"
              if i % 2 else f"fxmlir.aten.tanh {prev} : ({ty}) -> {ty}")
        lines.append(f"  %v{i} = {op}")
        prev = f"%v{i}"
    return "\n".join([*lines, f"  return {prev} : {ty}", "}"]) + "\n"


@pytest.mark.parametrize("num_ops", [40_000])
def test_outlining_a_long_chain_finishes(num_ops, tmp_path):
    # Quadratic before (16 s at 16k ops, minutes at 40k); about a second now.
    # The bound is ten times the linear cost on a slow machine.
    path = tmp_path / "chain.mlir"
    path.write_text(_chain_module(num_ops))
    result = subprocess.run([str(FXMLIR_OPT), str(path), "--fxmlir-outline-jit-regions"],
                            capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.count("fxmlir.mlir_jit @") == 1


def _fan_out_module(num_readers: int) -> str:
    """`num_readers` ops reading one value, summed: each reader joins its
    siblings' region through the value they share."""
    ty = 'tensor<8x8xf32, #fxmlir.device<"cpu">>'
    lines = [f"func.func @fan_out(%a: {ty}) -> {ty} {{",
             f"  %s0 = fxmlir.aten.tanh %a : ({ty}) -> {ty}"]
    for i in range(1, num_readers):
        lines.append(f"  %t{i} = fxmlir.aten.tanh %a : ({ty}) -> {ty}")
        lines.append(f"  %s{i} = fxmlir.aten.add.Tensor %s{i - 1}, %t{i} {{alpha = 1 : i64}}"
                     f" : ({ty}, {ty}) -> {ty}")
    return "\n".join([*lines, f"  return %s{num_readers - 1} : {ty}", "}"]) + "\n"


def test_outlining_a_value_with_many_readers_finishes(tmp_path):
    # Each reader looked at every other reader of the shared value before
    # (18 s at 32k readers); a bounded index of the regions reading each
    # value makes it about a second. The bound is the long chain's.
    path = tmp_path / "fan_out.mlir"
    path.write_text(_fan_out_module(32_000))
    result = subprocess.run([str(FXMLIR_OPT), str(path), "--fxmlir-outline-jit-regions"],
                            capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.count("fxmlir.mlir_jit @") == 1
