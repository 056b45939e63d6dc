"""JIT regions after autodiff in a compiled training step: on CPU and CUDA
tensors by default where the cost model says they pay, with any passes with
codegen=True / FXMLIR_CODEGEN_FUSERS=1, none with codegen=False (the regions
themselves: test_mlir_jit.py)."""

from __future__ import annotations

import copy
import json
import re
import runpy
import threading
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fxmlir
import fxmlir.jit
from fxmlir import _C
from fxmlir.config import Options
from fxmlir.roundtrip import FallbackWarning


class Block(nn.Module):
    """A residual layer norm and a scaled, gated softmax: chains that no
    hand-written fusion covers."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(64)
        self.proj = nn.Linear(64, 64, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(self.norm(x + 1.0))
        return torch.softmax(h * 0.125, -1) * torch.sigmoid(h)


def summaries(dump_dir) -> dict[str, dict]:
    return {s["stage"]: s for s in (json.loads(p.read_text())
                                    for p in dump_dir.glob("*/*/*/summary.json"))}


def train_steps(tmp_path, batches=(8, 8), **options):
    torch.manual_seed(0)
    model = Block()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path), **options))
    for batch in batches:
        x = torch.randn(batch, 64)
        out, ref = compiled(x), eager(x)
        torch.testing.assert_close(out, ref)
        out.square().sum().backward()
        ref.square().sum().backward()
        for p, q in zip(model.parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad)
    return summaries(tmp_path)


def test_training_step_runs_jit_regions_like_eager(tmp_path):
    def prepared() -> int:  # compiled now, or loaded from an earlier run
        stats = fxmlir.jit.stats()
        return stats["compiled"] + stats["disk_hits"]

    before = prepared()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        stages = train_steps(tmp_path, codegen=True)
    assert stages["forward"]["fused_ops"]["fxmlir.mlir_jit"] == 2
    assert stages["backward"]["fused_ops"]["fxmlir.mlir_jit"] >= 1
    assert "fxmlir-outline-jit-regions" in stages["forward"]["passes"]
    # Before autodiff regions would need autograd formulas: none there.
    assert "fxmlir.mlir_jit" not in stages["before_autodiff"]["fused_ops"]
    # Compiled during the round trip, once per region: the steps compile
    # nothing more.
    assert 0 < prepared() - before <= 3
    assert stages["forward"]["time_ms"]["jit"] > 0


def test_without_codegen_no_regions(tmp_path):
    stages = train_steps(tmp_path, codegen=False)
    assert "fxmlir.mlir_jit" not in stages["forward"]["fused_ops"]
    assert "fxmlir-outline-jit-regions" not in stages["forward"]["passes"]


@pytest.mark.parametrize("passes, regions", [
    ("-fxmlir-outline-jit-regions", False), ("cse,fxmlir-outline-jit-regions", True),
    ("cse,canonicalize", False), ("default,+fxmlir-outline-jit-regions", True)])
def test_regions_are_a_pass_selected_by_name(tmp_path, passes, regions):
    # FXMLIR_PASSES and passes= name codegen's pass like any other; it
    # never runs before autodiff, where a region would need a formula.
    stages = train_steps(tmp_path, passes=passes)
    for stage in ("forward", "backward"):
        assert ("fxmlir.mlir_jit" in stages[stage]["fused_ops"]) == regions, stage
        assert ("fxmlir-outline-jit-regions" in stages[stage]["passes"]) == regions, stage
    assert "fxmlir-outline-jit-regions" not in stages["before_autodiff"]["passes"]
    assert Options.from_env({"FXMLIR_PASSES": passes}).passes.for_stage("forward") == \
        tuple(stages["forward"]["passes"])


def test_regions_on_cpu_by_default(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        stages = train_steps(tmp_path)
    assert "fxmlir-outline-jit-regions" in stages["forward"]["passes"]
    assert stages["forward"]["fused_ops"]["fxmlir.mlir_jit"] >= 1
    assert stages["backward"]["fused_ops"]["fxmlir.mlir_jit"] >= 1


def test_explicit_passes_mean_no_default_regions(tmp_path):
    stages = train_steps(tmp_path, passes="none")
    assert stages["forward"]["passes"] == []
    assert "fxmlir.mlir_jit" not in stages["forward"]["fused_ops"]


class LoneLayerNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(1024)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


def test_cost_model_keeps_eagers_layer_norm_alone(tmp_path):
    # The JIT's layer norm is slower than eager's (benchmarks/bench_jit_cpu.py):
    # alone it stays eager's kernel; min-ops=1 would have outlined it.
    model = LoneLayerNorm()
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    x = torch.randn(256, 1024, requires_grad=True)
    compiled(x).sum().backward()
    forward = summaries(tmp_path)["forward"]
    assert "fxmlir-outline-jit-regions" in forward["passes"]
    assert "fxmlir.mlir_jit" not in forward["fused_ops"]
    assert forward["ops_after"].get("fxmlir.aten.native_layer_norm") == 1


def test_a_region_that_does_not_compile_costs_only_itself(tmp_path, monkeypatch):
    # The forward's first region fails to compile: its ops go back to eager,
    # one warning names it, and the forward keeps its other region.
    from fxmlir import compile_ahead

    compile_cpu = _C.jit_compile_cpu
    failed = []

    def fail_first(module, function):
        if not failed or failed == [function]:
            failed[:] = [function]
            raise _C.Error(f"no code for @{function}")
        return compile_cpu(module, function)

    monkeypatch.setattr(_C, "jit_compile_cpu", fail_first)
    monkeypatch.setattr(compile_ahead, "_usable_cores", lambda: 1)  # in graph order
    with pytest.warns(FallbackWarning) as warned:
        stages = train_steps(tmp_path, batches=(8,), codegen=True)
    (name,) = failed
    messages = [str(w.message) for w in warned if issubclass(w.category, FallbackWarning)]
    assert len(messages) == 1
    assert f"/forward: JIT region @{name} left to eager: no code for @{name}" in messages[0]
    assert "codegen=False (FXMLIR_CODEGEN_FUSERS=0) turns JIT regions off" in messages[0]
    assert stages["forward"]["fused_ops"]["fxmlir.mlir_jit"] == 1
    assert stages["backward"]["fused_ops"]["fxmlir.mlir_jit"] >= 1
    assert stages["forward"]["regions_left_to_eager"] == {name: f"no code for @{name}"}
    # The folder the warning names holds the region and a repro that fails
    # the same way (here, where the compile is made to fail).
    folder = Path(re.search(rf"{name}-repro.py in (\S+?);", messages[0]).group(1))
    assert (folder / f"{name}.mlir").read_text().startswith(f"func.func private @{name}(")
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(str(folder / f"{name}-repro.py"), run_name="__main__")
    assert exited.value.code == 1
    monkeypatch.setattr(_C, "jit_compile_cpu", compile_cpu)
    with pytest.raises(SystemExit) as exited:  # compiles once the cause is gone
        runpy.run_path(str(folder / f"{name}-repro.py"), run_name="__main__")
    assert exited.value.code == 0


def test_regions_compile_at_once_and_each_failure_is_reported(monkeypatch):
    # Two compiles meet at a barrier: compiled one after the other, the first
    # would wait for the second in vain.
    from fxmlir import compile_ahead

    meet = threading.Barrier(2, timeout=10)
    started = []

    def compile_cpu(module, function):
        started.append(function)
        if function in ("jit_a", "jit_b"):
            meet.wait()
        if function in ("jit_b", "jit_d"):
            raise _C.Error(f"no code for @{function}")

    monkeypatch.setattr(_C, "jit_compile_cpu", compile_cpu)
    monkeypatch.setattr(compile_ahead, "_usable_cores", lambda: 4)
    regions = [SimpleNamespace(name=name, device_type="cpu", text="")  # as _C.JitRegion
               for name in ("jit_a", "jit_b", "jit_c", "jit_d")]
    failures = compile_ahead._compile_each(regions)
    assert failures == {"jit_b": "no code for @jit_b", "jit_d": "no code for @jit_d"}
    assert sorted(started) == ["jit_a", "jit_b", "jit_c", "jit_d"]


def test_codegen_settings():
    assert Options.from_env({"FXMLIR_CODEGEN_FUSERS": "1"}).codegen is True
    assert Options.from_env({"FXMLIR_CODEGEN_FUSERS": "off"}).codegen is False
    assert Options.from_env({}).codegen is None  # CPU regions
    with pytest.raises(ValueError, match="FXMLIR_CODEGEN_FUSERS='maybe' is invalid; accepted "
                                         "values: 1, true, yes, on, 0, false, no, off"):
        Options.from_env({"FXMLIR_CODEGEN_FUSERS": "maybe"})
    with pytest.raises(TypeError, match="option 'codegen' must be True or False, got int"):
        fxmlir.backend(codegen=1)
    # An unusable FXMLIR_CACHE_DIR is no setting error: the JIT keeps its
    # code in memory with a warning (test_jit_cache.py).


def rotate_heads(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """An attention shape dance: heads split and transposed with the batch
    dim (outside regions, which never move dim 0), a rotary embedding applied
    (elementwise, so eager keeps the transposed layout), transposed back and
    merged with a view, which needs that layout."""
    batch, seq, width = x.shape
    heads = x.view(batch, seq, 2, width // 2).transpose(0, 2)
    half = width // 4
    rotated = torch.cat((-heads[..., half:], heads[..., :half]), dim=-1)
    heads = heads * cos + rotated * sin
    return heads.transpose(0, 2).view(batch, seq, width) * 2.0


def test_region_results_keep_the_layout_later_views_need():
    x = torch.randn(2, 6, 16, requires_grad=True)
    cos, sin = torch.randn(6, 2, 8), torch.randn(6, 2, 8)
    compiled = torch.compile(rotate_heads, backend=fxmlir.backend(codegen=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        out = compiled(x, cos, sin)
        (grad,) = torch.autograd.grad(out.square().sum(), x)
    x_eager = x.detach().requires_grad_()
    ref = rotate_heads(x_eager, cos, sin)
    (grad_eager,) = torch.autograd.grad(ref.square().sum(), x_eager)
    torch.testing.assert_close(out, ref)
    assert out.stride() == ref.stride()
    torch.testing.assert_close(grad, grad_eager)


def ops_outside_regions(dump_dir, stage: str) -> dict[str, int]:
    """Op names in the graph function of a stage's final module: what JIT
    regions left to eager kernels (outlined functions are private)."""
    (final,) = dump_dir.glob(f"*/*/{stage}/final.mlir")
    graph = final.read_text().split("func.func private")[0]
    names = re.findall(r'^\s*(?:%[^=]+=\s*)?"?(fxmlir\.[\w.]+)"?(?:\s*"([\w:.]+)")?',
                       graph, flags=re.MULTILINE)
    counts: dict[str, int] = {}
    for name, target in names:
        key = f"{name} {target}" if target else name
        counts[key] = counts.get(key, 0) + 1
    return counts


class RotaryAttentionInput(nn.Module):
    """LLaMA's query path up to attention: a projection split into heads,
    rotated by a rotary embedding (slices, neg, cat), heads merged back for
    the next GEMM (transpose, contiguous copy)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(32, 32, bias=False)
        angles = torch.arange(12.0)[:, None] * torch.arange(1.0, 9.0)[None, :] / 8
        self.register_buffer("cos", torch.cat((angles, angles), -1).cos())
        self.register_buffer("sin", torch.cat((angles, angles), -1).sin())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, width = x.shape
        heads = self.proj(x).view(batch, seq, 2, 16).transpose(1, 2)
        rotated = torch.cat((-heads[..., 8:], heads[..., :8]), dim=-1)
        heads = heads * self.cos + rotated * self.sin
        return heads.transpose(1, 2).contiguous().view(batch, seq, width) @ self.proj.weight


def test_rotary_embedding_runs_inside_regions_forward_and_backward(tmp_path):
    torch.manual_seed(0)
    model = RotaryAttentionInput()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    x = torch.randn(2, 12, 32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)
        out = compiled(x)
        out.square().sum().backward()
    ref = eager(x)
    ref.square().sum().backward()
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(model.proj.weight.grad, eager.proj.weight.grad)
    forward = ops_outside_regions(tmp_path, "forward")
    backward = ops_outside_regions(tmp_path, "backward")
    assert forward.get("fxmlir.mlir_jit", 0) >= 1 and backward.get("fxmlir.mlir_jit", 0) >= 1
    moved = ("fxmlir.aten.neg", "fxmlir.aten.cat", "fxmlir.aten.clone",
             "fxmlir.call aten::slice_backward.default", "fxmlir.aten.mul.Tensor")
    assert not [op for op in moved if op in forward], forward
    assert not [op for op in moved if op in backward], backward


class Classifier(nn.Module):
    def __init__(self, reduction: str) -> None:
        super().__init__()
        self.head = nn.Linear(32, 50, bias=False)
        self.reduction = reduction

    def forward(self, x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        loss = F.cross_entropy(self.head(x), target, reduction=self.reduction)
        return loss if self.reduction != "none" else loss.sum()


@pytest.mark.parametrize("reduction,autocast", [("mean", False), ("sum", False),
                                                ("none", False), ("mean", True)])
def test_cross_entropy_backward_runs_inside_a_region(tmp_path, reduction, autocast):
    torch.manual_seed(0)
    model = Classifier(reduction)
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    x = torch.randn(64, 32)
    target = torch.randint(0, 50, (64,))
    target[::7] = -100  # ignored rows get no gradient
    with warnings.catch_warnings(), torch.autocast("cpu", torch.bfloat16, enabled=autocast):
        warnings.simplefilter("error", FallbackWarning)
        loss = compiled(x, target)
        loss.backward()
        ref = eager(x, target)
        ref.backward()
    torch.testing.assert_close(loss, ref)
    torch.testing.assert_close(model.head.weight.grad, eager.head.weight.grad)
    backward = ops_outside_regions(tmp_path, "backward")
    assert "fxmlir.aten.nll_loss_backward" not in backward
    assert "fxmlir.aten._log_softmax_backward_data" not in backward
    # Both in one region (under autocast, the weight gradient's two casts
    # make another).
    (final,) = tmp_path.glob("*/*/backward/final.mlir")
    regions = final.read_text().split("func.func private")[1:]
    assert any("aten.nll_loss_backward" in region and "_log_softmax_backward_data" in region
               for region in regions), backward


def test_nll_loss_with_class_weights_stays_eager(tmp_path):
    weight = torch.rand(50)
    head = nn.Linear(32, 50, bias=False)

    def loss_fn(x, target):
        return F.cross_entropy(head(x), target, weight=weight)

    x, target = torch.randn(64, 32), torch.randint(0, 50, (64,))
    compiled = torch.compile(loss_fn, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    compiled(x, target).backward()
    grad = head.weight.grad.clone()
    head.weight.grad = None
    loss_fn(x, target).backward()
    torch.testing.assert_close(grad, head.weight.grad)
    assert "fxmlir.aten.nll_loss_backward" in ops_outside_regions(tmp_path, "backward")
