"""The backend's surface: registration, options, env vars, dumps, fallback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import fxmlir
from fxmlir.roundtrip import FallbackWarning

FXMLIR_OPT = Path(fxmlir.__file__).with_name("fxmlir-opt")

TRAIN_SCRIPT = textwrap.dedent("""
    import torch, torch.nn as nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Dropout(0.1), nn.Linear(32, 1))
    step = torch.compile(model)  # no backend named: the env var decides
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    for _ in range(3):
        loss = nn.functional.mse_loss(step(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
""")


def run_python(code: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_backend_is_registered_by_entry_point():
    # torch finds it through the torch_dynamo_backends entry point.
    assert "fxmlir" in torch._dynamo.list_backends(exclude_tags=())


def test_env_var_routes_an_unchanged_script_and_dumps(tmp_path):
    dumps = tmp_path / "dumps"
    result = run_python(TRAIN_SCRIPT, {"FXMLIR_ROUND_TRIP": "1",
                                       "FXMLIR_DUMP_DIR": str(dumps)}, tmp_path)
    assert result.returncode == 0, result.stderr
    (run,) = dumps.iterdir()
    (graph,) = [p for p in run.iterdir() if p.is_dir()]
    stages = {p.name for p in graph.iterdir()}
    assert {"before_autodiff", "forward", "backward"} <= stages
    for stage in ("forward", "backward"):
        folder = graph / stage
        for name in ("input.mlir", "00-imported.mlir", "final.mlir", "graph.dot",
                     "fx_before.py", "fx_after.py", "summary.json"):
            assert (folder / name).exists(), folder / name
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["stage"] == stage and summary["ops_before"]
        assert set(summary["time_ms"]) >= {"import", "export"}
        # The dumps are valid inputs for fxmlir-opt.
        subprocess.run([str(FXMLIR_OPT), str(folder / "final.mlir")], check=True,
                       capture_output=True)
    # The default pipeline fused the linear layer's bias add, gelu and
    # dropout before autodiff, so the backward graph calls the fused gradient.
    forward = (graph / "forward" / "final.mlir").read_text()
    assert 'fxmlir.fused_bias_dropout_add' in forward and 'activation = "gelu"' in forward
    assert "fxmlir.aten.native_dropout" not in forward
    backward = (graph / "backward" / "final.mlir").read_text()
    assert "fxmlir.fused_bias_act_grad" in backward


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="graphviz's dot is not installed (optional: renders graph.dot)")
def test_dot_dumps_render_with_graphviz(tmp_path):
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU())
    torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))(
        torch.randn(2, 4)).sum().backward()
    dots = list(tmp_path.glob("*/graph_*/*/graph.dot"))
    assert len(dots) == 3  # before autodiff, forward, backward
    for dot in dots:
        svg = subprocess.run(["dot", "-Tsvg", str(dot)], check=True,
                             capture_output=True, text=True).stdout
        assert "<svg" in svg


@pytest.mark.parametrize("value", ["0", "1"])
def test_the_startup_hook_imports_no_torch(tmp_path, value):
    result = run_python("import sys; print('torch' in sys.modules)",
                        {"FXMLIR_ROUND_TRIP": value}, tmp_path)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize("variable, value", [
    ("FXMLIR_ROUND_TRIP", "maybe"),
    ("FXMLIR_PASSES", "no-such-pass"),
    ("FXMLIR_STAGES", "sideways"),
    ("FXMLIR_CODEGEN_FUSERS", "2"),
])
def test_bad_env_value_names_the_variable(tmp_path, variable, value):
    env = {"FXMLIR_ROUND_TRIP": "1", variable: value}
    result = run_python(TRAIN_SCRIPT, env, tmp_path)
    assert result.returncode != 0
    assert variable in result.stderr and "accepted values" in result.stderr


def test_compile_options_reach_the_backend(tmp_path):
    model = nn.Linear(4, 4)
    compiled = torch.compile(model, backend="fxmlir",
                             options={"dump_dir": str(tmp_path), "passes": "none"})
    compiled(torch.randn(2, 4)).sum().backward()
    summary = json.loads(next(tmp_path.glob("*/graph_*/forward/summary.json")).read_text())
    assert summary["passes"] == []


def test_equal_options_give_the_same_backend():
    """Dynamo recompiles for another backend callable, and each
    fxmlir.backend(...) call made a new one."""
    from torch._dynamo.utils import counters

    passes = ["-cse"]
    assert fxmlir.backend(passes=passes) is fxmlir.backend(passes=passes)
    assert (fxmlir.backend(passes=["-cse"], strict=True)
            is fxmlir.backend(strict=True, passes=["-cse"]))
    assert fxmlir.backend() is fxmlir.backend()
    assert fxmlir.backend(passes=["-cse"]) is not fxmlir.backend(passes=["-cse", "-canonicalize"])
    assert fxmlir.backend(passes=["-cse"]) is not fxmlir.backend(passes=["-cse"], strict=True)
    assert fxmlir.backend(passes=["-cse"]) is not fxmlir.backend()

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x) * 2

    x = torch.randn(4, 8)
    counters.clear()
    for _ in range(2):
        torch.compile(f, backend=fxmlir.backend(passes=["-cse"]))(x)
    assert counters["stats"]["unique_graphs"] == 1


def test_passes_are_listed_with_descriptions():
    text = fxmlir.passes.describe()
    for name in fxmlir.passes.registry():
        assert name in text
    assert all(p.summary for p in fxmlir.passes.registry().values())


def test_a_value_without_a_type_costs_only_its_node(tmp_path, monkeypatch):
    # Pretend int64 tensors are unsupported: the embedding's index input has
    # no type, so it and the embedding stay opaque while the rest imports.
    import fxmlir.mlir_types

    monkeypatch.delitem(fxmlir.mlir_types._DTYPE_TO_MLIR, torch.int64)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 2))
    ids = torch.randint(0, 10, (3, 5))
    expected = model(ids)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        out = compiled(ids)
    assert torch.equal(out, expected)
    forward = next(tmp_path.glob("*/graph_*/forward/final.mlir")).read_text()
    assert 'fxmlir.call "aten::embedding.default"' in forward
    assert "fxmlir.aten.addmm" in forward or "fxmlir.aten.linear" in forward


def test_injected_failure_falls_back(tmp_path, monkeypatch):
    import fxmlir.roundtrip

    def failing_export(*args, **kwargs):
        raise fxmlir.exporter.ExportFailure("injected")

    monkeypatch.setattr(fxmlir.roundtrip, "export_graph", failing_export)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 2))
    ids = torch.randint(0, 10, (3, 5))
    expected = model(ids)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    with pytest.warns(FallbackWarning, match=r"graph_\d+_\d+_\d+/\w+ graph kept as is: "
                                             r"ExportFailure: injected"):
        out = compiled(ids)
    assert torch.equal(out, expected)
    assert list(tmp_path.glob("*/graph_*/*/repro.py"))


def _dropout_mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 64), nn.GELU(approximate="tanh"), nn.Linear(64, 16),
                         nn.Dropout(0.5))


def test_cuda_graphs_on_cpu_warn_and_run_without(tmp_path):
    from fxmlir.cudagraphs import CudaGraphsSkipped

    torch.manual_seed(0)
    model = _dropout_mlp().eval()
    x = torch.randn(8, 16, requires_grad=True)
    compiled = torch.compile(model, backend=fxmlir.backend(cudagraphs=True))
    with pytest.warns(CudaGraphsSkipped, match="cudagraphs=True has no effect: .*cpu"):
        out = compiled(x)
    out.sum().backward()
    torch.testing.assert_close(out, model(x))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available")
def test_cuda_graphs_replay_new_masks_and_train():
    from fxmlir.cudagraphs import CudaGraphsSkipped

    torch.manual_seed(0)
    model = _dropout_mlp().cuda()
    compiled = torch.compile(model, backend=fxmlir.backend(cudagraphs=True))
    x = torch.randn(32, 16, device="cuda")
    with warnings.catch_warnings():
        # Captured: no skip, no fallback. (torch's own warnings may come:
        # its graph-tree manager captures an empty graph when it starts.)
        warnings.simplefilter("error", CudaGraphsSkipped)
        warnings.simplefilter("error", FallbackWarning)
        outs = []
        for _ in range(4):  # warm-up, record, then replays
            # As optimizer.zero_grad() does: a replay overwrites the
            # gradients the last one left (pytorch#169545).
            model.zero_grad(set_to_none=True)
            out = compiled(x)
            out.sum().backward()
            outs.append(out.detach().clone())
    assert not torch.equal(outs[-1], outs[-2]), "each replay draws a new mask"
    for out in outs[-2:]:
        kept = (out != 0).float().mean().item()
        assert 0.4 < kept < 0.6
    # The gradient a replay computes uses the mask of that replay.
    model.zero_grad()
    out = compiled(x)
    grad = torch.randn_like(out)
    out.backward(grad)
    kept = out.detach() != 0
    hidden = torch.nn.functional.gelu(model[0](x), approximate="tanh")
    torch.testing.assert_close(model[2].bias.grad, (grad * kept * 2.0).sum(0))
    torch.testing.assert_close(model[2].weight.grad, (grad * kept * 2.0).t() @ hidden,
                               rtol=1e-3, atol=1e-3)


def test_a_training_step_compiles_without_inductors_pattern_matcher(tmp_path):
    """AOTAutograd's CSE of the joint graph imports Inductor's pattern
    matcher, half a second of a process's first call; fxmlir's round trips
    run MLIR's cse instead."""
    code = textwrap.dedent("""
        import sys, torch, fxmlir
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 1))
        compiled = torch.compile(model, backend=fxmlir.backend(strict=True))
        compiled(torch.randn(4, 8)).sum().backward()
        print("imported" if "torch._inductor.pattern_matcher" in sys.modules else "not imported")
    """)
    result = run_python(code, {}, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "not imported"
