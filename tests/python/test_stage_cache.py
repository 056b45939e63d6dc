"""Warm restarts (fxmlir/stage_cache.py): AOTAutograd's disk cache keeps
fxmlir's forward and backward graphs; a compile it can prove unchanged
skips AOTAutograd and the round trips, and trains as the first did."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
import torch._functorch.config
import torch.nn as nn
from torch._dynamo.utils import counters

import fxmlir
import fxmlir.dynamo_backend as dynamo_backend
from fxmlir import graph_program
from fxmlir.fallback import FallbackWarning


class _Block(nn.Module):
    """Linear, GELU, LayerNorm and a residual: fused ops and JIT regions."""

    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(32, 64)
        self.down = nn.Linear(64, 32)
        self.norm = nn.LayerNorm(32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """AOTAutograd's cache on (the suite turns it off), in a folder of the
    test's own; the stage round trips counted."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    monkeypatch.setenv("FXMLIR_CACHE_DIR", str(tmp_path / "fxmlir"))
    stages: list[str] = []
    round_trip = dynamo_backend.round_trip_or_fallback

    def counted(gm, graph_id, stage, *args, **kwargs):
        stages.append(stage)
        return round_trip(gm, graph_id, stage, *args, **kwargs)

    monkeypatch.setattr(dynamo_backend, "round_trip_or_fallback", counted)
    counters.clear()
    with torch._functorch.config.patch(enable_autograd_cache=True):
        if not torch._functorch.config.enable_autograd_cache:
            pytest.skip("TORCHINDUCTOR_AUTOGRAD_CACHE=0 was set before torch was imported")
        yield stages


def _step(options: dict | None = None, device: str = "cpu"
          ) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """A fresh compile's training step: its loss and gradients."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _Block().to(device)
    x = torch.randn(8, 32).to(device)
    loss = torch.compile(model, backend=fxmlir.backend(**(options or {})))(x).square().mean()
    loss.backward()
    return loss.detach(), [p.grad for p in model.parameters()]


def _eager(device: str = "cpu") -> tuple[torch.Tensor, list[torch.Tensor]]:
    torch.manual_seed(0)
    model = _Block().to(device)
    loss = model(torch.randn(8, 32).to(device)).square().mean()
    loss.backward()
    return loss.detach(), [p.grad for p in model.parameters()]


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="CUDA is not available"))])
def test_a_second_compile_skips_autograd_and_the_round_trips(cache, device):
    # JIT regions on CPU and CUDA tensors.
    options = {"codegen": True}
    first = _step(options, device)
    assert sorted(cache) == ["backward", "before_autodiff", "forward"]
    assert counters["aot_autograd"]["autograd_cache_saved"] == 1
    cache.clear()
    second = _step(options, device)
    assert counters["aot_autograd"]["autograd_cache_hit"] == 1
    assert cache == ["before_autodiff"]  # AOTAutograd's input: the key's graph
    want = _eager(device)
    for got in (first, second):
        torch.testing.assert_close(got[0], want[0])
        for g, w in zip(got[1], want[1]):
            torch.testing.assert_close(g, w)


def test_a_cached_stage_runs_its_graph_program(cache, monkeypatch):
    if graph_program.GraphProgram is None:
        pytest.skip("this build has no fxmlir._graph_program")
    _step()
    built = []
    build = graph_program.build

    def recording(encoding):
        run = build(encoding)
        built.append(run is not None)
        return run

    monkeypatch.setattr(graph_program, "build", recording)
    second = _step()
    assert counters["aot_autograd"]["autograd_cache_hit"] == 1
    assert built == [True, True]  # forward and backward, from their pickled programs
    want = _eager()
    torch.testing.assert_close(second[0], want[0])
    for g, w in zip(second[1], want[1]):
        torch.testing.assert_close(g, w)


def test_other_settings_are_another_entry(cache):
    _step()
    _step({"codegen": False})
    assert counters["aot_autograd"]["autograd_cache_hit"] == 0
    assert counters["aot_autograd"]["autograd_cache_saved"] == 2
    _step({"codegen": False})
    assert counters["aot_autograd"]["autograd_cache_hit"] == 1


def test_a_stage_that_fell_back_is_not_kept(cache, monkeypatch):
    import fxmlir.roundtrip as roundtrip

    def failing(*args, **kwargs):
        raise RuntimeError("an export bug")

    monkeypatch.setattr(roundtrip, "export_graph", failing)
    for _ in range(2):  # each compile falls back and says so: nothing cached
        with pytest.warns(FallbackWarning, match="an export bug"):
            _step()
    assert counters["aot_autograd"]["autograd_cache_hit"] == 0
    assert counters["aot_autograd"]["autograd_cache_saved"] == 0


def test_dumps_come_from_round_trips_not_the_cache(cache, tmp_path):
    _step()
    cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        _step({"dump_dir": str(tmp_path / "dumps")})
    assert sorted(cache) == ["backward", "before_autodiff", "forward"]
    assert counters["aot_autograd"]["autograd_cache_hit"] == 0
    assert any((tmp_path / "dumps").rglob("final.mlir"))


_RESTARTED = textwrap.dedent("""
    import torch, fxmlir
    from torch._dynamo.utils import counters
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                torch.nn.Linear(32, 16), torch.nn.LayerNorm(16))
    x = torch.randn(4, 16)
    loss = torch.compile(model, backend="fxmlir")(x).square().mean()
    loss.backward()
    print(counters["aot_autograd"]["autograd_cache_hit"], loss.item(),
          model[0].weight.grad.sum().item())
""")


def test_a_restarted_process_trains_from_the_cache(tmp_path):
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"),
               FXMLIR_CACHE_DIR=str(tmp_path / "fxmlir"), OMP_NUM_THREADS="1",
               TORCHINDUCTOR_AUTOGRAD_CACHE="1")

    def run() -> list[str]:
        done = subprocess.run([sys.executable, "-c", _RESTARTED], env=env, text=True,
                              capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    cold, warm = run(), run()
    assert cold[0] == "0" and warm[0] == "1"
    assert warm[1:] == cold[1:]  # the same loss and gradient, to the bit


def test_a_cached_graph_failing_at_run_time_falls_back_to_its_original(cache, monkeypatch):
    """The graph it falls back to comes from the entry too, compiled only
    when needed."""
    import fxmlir.exporter as exporter
    from test_runtime_fallback import heads_merged

    # Without the layout copy the exported forward's view fails at run time.
    monkeypatch.setattr(exporter._GraphBuilder, "_restore_layouts", lambda *args: None)
    x = torch.randn(2, 6, 16)
    for hits in (0, 1):
        torch._dynamo.reset()
        compiled = torch.compile(heads_merged, backend=fxmlir.backend(codegen=True))
        with pytest.warns(FallbackWarning, match="failed at run time"):
            out = compiled(x.requires_grad_())
        torch.testing.assert_close(out, heads_merged(x))
        assert counters["aot_autograd"]["autograd_cache_hit"] == hits
