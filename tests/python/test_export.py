"""fxmlir.optimize for torch.export users: the fusions survive export,
save and load in a fresh process, as a saved program and as an AOTInductor
package; a program that needs fxmlir's ops says so when they cannot load;
the dumped fx_after.py runs on its own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn as nn

import fxmlir
from fxmlir.standalone import COMPARE_SOURCE
from torch.fx.experimental.proxy_tensor import make_fx


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 2))


def fused_targets(gm: torch.fx.GraphModule) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes
            if n.op == "call_function" and str(n.target).startswith("fxmlir.")]


def run(code: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "FXMLIR_"))}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ,
                          capture_output=True, text=True, timeout=300)


def test_optimize_a_graph_module():
    model = make_model()
    params = [p.detach() for p in model.parameters()]
    x = torch.randn(4, 8)

    def forward(w1, b1, w2, b2, x):
        return nn.functional.linear(nn.functional.gelu(nn.functional.linear(x, w1, b1)), w2, b2)

    graph = make_fx(forward, tracing_mode="fake")(*params, x)
    optimized = fxmlir.optimize(graph)
    assert fused_targets(optimized) == ["fxmlir.fused_bias_act.default"]
    torch.testing.assert_close(optimized(*params, x), model(x))


def test_exported_program_keeps_its_fusions_through_save_and_load(tmp_path):
    model = make_model()
    x = torch.randn(4, 8)
    ep = fxmlir.optimize(torch.export.export(model, (x,)))
    assert fused_targets(ep.graph_module) == ["fxmlir.fused_bias_act.default"]
    torch.testing.assert_close(ep.module()(x), model(x))
    torch.export.save(ep, tmp_path / "model.pt2")
    torch.save({"x": x, "expected": model(x).detach()}, tmp_path / "io.pt")
    # A fresh process that never imports fxmlir: torch.ops.fxmlir loads it.
    result = run(f"""
        import sys, torch
        ep = torch.export.load({str(tmp_path / "model.pt2")!r})
        io = torch.load({str(tmp_path / "io.pt")!r})
        torch.testing.assert_close(ep.module()(io["x"]), io["expected"])
        assert "fxmlir.ops" in sys.modules
        # Fused kernels only: the compiler (MLIR, LLVM) is not loaded.
        assert "fxmlir.jit_ops" not in sys.modules
        assert not any("libFxmlirCore" in line for line in open("/proc/self/maps"))
        print([str(n.target) for n in ep.graph.nodes if "fxmlir" in str(n.target)])
    """)
    assert result.returncode == 0, result.stderr
    assert "fxmlir.fused_bias_act.default" in result.stdout


def test_a_program_whose_fxmlir_ops_cannot_load_names_fxmlir(tmp_path):
    ep = fxmlir.optimize(torch.export.export(make_model(), (torch.randn(4, 8),)))
    torch.export.save(ep, tmp_path / "model.pt2")
    result = run(f"""
        import sys, torch
        sys.modules["fxmlir.ops"] = None  # as if the op library were missing
        torch.export.load({str(tmp_path / "model.pt2")!r})
    """)
    assert result.returncode != 0
    assert "torch.ops.fxmlir.fused_bias_act is an op of fxmlir, whose op library did " \
           "not load" in result.stderr


@pytest.fixture(scope="module")
def aoti_package(tmp_path_factory):
    """An AOTInductor package of an fxmlir.optimize'd program, and its
    input and expected output."""
    folder = tmp_path_factory.mktemp("aoti")
    model, x = make_model(), torch.randn(4, 8)
    ep = fxmlir.optimize(torch.export.export(model, (x,)))
    assert fused_targets(ep.graph_module) == ["fxmlir.fused_bias_act.default"]
    package = torch._inductor.aoti_compile_and_package(ep, package_path=str(folder / "m.pt2"))
    torch.save({"x": x, "expected": model(x).detach()}, folder / "io.pt")
    return package, folder / "io.pt"


def test_an_aoti_package_with_fxmlir_ops_runs_in_a_fresh_process(aoti_package):
    # Its kernels call fxmlir's ops from C++: the package loader loads them.
    package, io = aoti_package
    result = run(f"""
        import sys, torch
        model = torch._inductor.aoti_load_package({package!r})
        io = torch.load({str(io)!r})
        torch.testing.assert_close(model(io["x"]), io["expected"])
        assert "fxmlir.ops" in sys.modules
        assert not any("libFxmlirCore" in line for line in open("/proc/self/maps"))
    """)
    assert result.returncode == 0, result.stderr


def test_an_aoti_package_whose_fxmlir_ops_cannot_load_names_fxmlir(aoti_package):
    package, _ = aoti_package
    result = run(f"""
        import sys, torch
        sys.modules["fxmlir.ops"] = None  # as if the op library were missing
        torch._inductor.aoti_load_package({package!r})
    """)
    assert result.returncode != 0
    assert "torch.ops.fxmlir.fused_bias_act is an op of fxmlir, whose op library did " \
           "not load" in result.stderr


def test_optimize_rejects_what_it_cannot_take():
    with pytest.raises(TypeError, match="GraphModule or a torch.export.ExportedProgram"):
        fxmlir.optimize(make_model())
    with pytest.raises(ValueError, match="stage='training' is invalid"):
        fxmlir.optimize(torch.fx.symbolic_trace(make_model()), stage="training")


def test_dumped_fx_after_runs_on_its_own(tmp_path):
    model = make_model()
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    compiled(torch.randn(4, 8)).sum().backward()
    for stage in ("before_autodiff", "forward", "backward"):
        (script,) = tmp_path.glob(f"*/graph_*/{stage}/fx_after.py")
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                timeout=300, cwd=tmp_path)
        assert result.returncode == 0, (stage, result.stderr)
        assert "output 0: (4, 2)" in result.stdout or stage == "backward"
    assert "fused_bias_act" in next(tmp_path.glob("*/graph_*/forward/fx_after.py")) \
        .read_text()
    # compare.py runs both scripts on the same seeded inputs: the fused
    # graph computes what the original did.
    for stage in ("before_autodiff", "forward", "backward"):
        (script,) = tmp_path.glob(f"*/graph_*/{stage}/compare.py")
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                                timeout=300, cwd=tmp_path)
        assert result.returncode == 0, (stage, result.stderr)
        largest = re.search(r"largest relative difference: (\S+) .*: PASS", result.stdout)
        assert largest and float(largest.group(1)) < 1.3e-6, result.stdout
        assert "output 0: " in result.stdout


def write_graph(path, name: str, body: str) -> None:
    """A script as fx_before.py or fx_after.py: a Graph module and its inputs."""
    (path / name).write_text(textwrap.dedent(f"""
        import torch

        class Graph(torch.nn.Module):
            def forward(self, x, z):
                return {body}

        def example_inputs():
            return [torch.full((4,), 1e13), torch.zeros(2)]
    """))


@pytest.mark.parametrize("scale, verdict", [(1 + 1e-7, "PASS"), (1 + 1e-3, "FAIL")])
def test_compare_headline_is_relative(tmp_path, scale, verdict):
    """Outputs near 1e13 differ by 1e6 where the relative difference is 1e-7:
    the headline, once 'largest difference: 1e+06', is the relative one and
    passes against float32's rtol; 1e-3 fails, with exit status 1."""
    write_graph(tmp_path, "fx_before.py", "x * 1.0, z + 1e-7")
    # z + 2e-7 is twice z + 1e-7 but within atol: no failure.
    write_graph(tmp_path, "fx_after.py", f"(x.double() * {scale}).float(), z + 2e-7")
    (tmp_path / "compare.py").write_text(COMPARE_SOURCE)
    result = subprocess.run([sys.executable, str(tmp_path / "compare.py")], capture_output=True,
                            text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == (verdict == "FAIL"), result.stderr
    headline = re.search(r"largest relative difference: (\S+) \(output 0, torch.float32; "
                         r"tolerance rtol 1.3e-06, atol 1e-05\): (\w+)", result.stdout)
    assert headline, result.stdout
    assert float(headline.group(1)) == pytest.approx(scale - 1, rel=0.1)
    assert headline.group(2) == verdict
    assert re.search(r"largest absolute difference: \S+e\+(06|10) \(output 0\)", result.stdout)


def test_optimize_refuses_a_torch_ir_graph():
    """It once returned such a graph unchanged, without a word."""
    with pytest.raises(ValueError, match=r"cannot rewrite this GraphModule: node '_0' calls "
                                         r"module '0' \(a torch IR graph"):
        fxmlir.optimize(torch.fx.symbolic_trace(make_model()))

    def scaled_gelu(x):
        return nn.functional.gelu(x) * 2

    with pytest.raises(ValueError, match=r"node 'x' has no fake value in meta\['val'\]"):
        fxmlir.optimize(torch.fx.symbolic_trace(scaled_gelu))


class NormSoftmax(nn.Module):
    """Layer norm and softmax, each in a JIT region only in decomposed form:
    export keeps aten.layer_norm and aten.softmax.int."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.fc = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.fc(self.norm(x) * 2), dim=-1) + 1


def test_optimize_with_codegen_decomposes_what_regions_need(tmp_path):
    torch.manual_seed(0)
    model = NormSoftmax()
    x = torch.randn(4, 16)
    ep = fxmlir.optimize(torch.export.export(model, (x,)), codegen=True)
    regions = fused_targets(ep.graph_module)
    assert regions == ["fxmlir.mlir_jit.default"] * 2, regions
    torch.testing.assert_close(ep.module()(x), model(x))
    # Saved, it loads in a fresh process: mlir_jit loads its own library,
    # the one with the compiler.
    torch.export.save(ep, tmp_path / "regions.pt2")
    torch.save({"x": x, "expected": model(x).detach()}, tmp_path / "io.pt")
    result = run(f"""
        import sys, torch
        ep = torch.export.load({str(tmp_path / "regions.pt2")!r})
        io = torch.load({str(tmp_path / "io.pt")!r})
        torch.testing.assert_close(ep.module()(io["x"]), io["expected"])
        assert "fxmlir.jit_ops" in sys.modules
    """)
    assert result.returncode == 0, result.stderr


def test_optimize_goes_on_when_its_dumps_cannot_be_written(tmp_path, monkeypatch):
    """A full disk once made optimize raise OSError: [Errno 28]."""
    import errno
    from pathlib import Path

    import fxmlir.dump

    monkeypatch.setattr(fxmlir.dump, "_stopped", {}, raising=False)  # as in a new process

    def full_disk(path, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    monkeypatch.setattr(Path, "write_text", full_disk)
    model = make_model()
    x = torch.randn(4, 8)
    with pytest.warns(UserWarning, match="dumps to .* stopped, the round trips go on"):
        ep = fxmlir.optimize(torch.export.export(model, (x,)), dump_dir=str(tmp_path))
    assert fused_targets(ep.graph_module) == ["fxmlir.fused_bias_act.default"]
    torch.testing.assert_close(ep.module()(x), model(x))
