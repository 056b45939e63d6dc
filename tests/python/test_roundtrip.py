"""The round trip with no passes: forward outputs and gradients are bitwise
eager's, for the models a training user compiles."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import fxmlir
from fxmlir.roundtrip import FallbackWarning


def train_step(model: nn.Module, *inputs: torch.Tensor, seed: int = 0):
    torch.manual_seed(seed)
    out = model(*inputs)
    loss = out.float().pow(2).mean()
    loss.backward()
    return out.detach(), [p.grad.clone() for p in model.parameters()]


def compare_with_eager(model: nn.Module, *inputs: torch.Tensor, steps: int = 2,
                       dump_dir=None, **compile_kwargs) -> None:
    eager = copy.deepcopy(model)
    compiled = torch.compile(copy.deepcopy(model),
                             backend=fxmlir.backend(passes="none", dump_dir=dump_dir),
                             **compile_kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # no silent fallback
        for step in range(steps):
            ref_out, ref_grads = train_step(eager, *inputs, seed=step)
            out, grads = train_step(compiled, *inputs, seed=step)
            assert torch.equal(out, ref_out)
            for g, ref in zip(grads, ref_grads):
                assert torch.equal(g, ref)
            for m in (eager, compiled):
                m.zero_grad()


def test_mlp_with_dropout():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Dropout(0.1), nn.Linear(64, 8))
    compare_with_eager(model, torch.randn(16, 32))


def test_cnn_with_batchnorm_and_pooling():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    compare_with_eager(model, torch.randn(4, 3, 16, 16))


def test_transformer_encoder_layer():
    torch.manual_seed(0)
    model = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                       dropout=0.1, batch_first=True)
    compare_with_eager(model, torch.randn(2, 10, 32))


class Embedder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(100, 16)
        self.norm = nn.LayerNorm(16)
        self.head = nn.Linear(16, 3)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(F.softmax(self.norm(self.embedding(ids)), dim=-1).mean(1))


def test_embedding_model():
    torch.manual_seed(0)
    compare_with_eager(Embedder(), torch.randint(0, 100, (4, 12)))


def test_dynamic_batch_size():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 2))
    for batch in (3, 5, 9):
        compare_with_eager(model, torch.randn(batch, 8), dynamic=True)


@torch.library.custom_op("fxmlir_test::scaled_tanh", mutates_args=())
def scaled_tanh(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.tanh(x) * scale


@scaled_tanh.register_fake
def _(x, scale):
    return torch.empty_like(x)


def _scaled_tanh_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * (1 - torch.tanh(x) ** 2) * ctx.scale, None


def _scaled_tanh_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])
    ctx.scale = inputs[1]


scaled_tanh.register_autograd(_scaled_tanh_backward, setup_context=_scaled_tanh_setup)


class CustomOpModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return scaled_tanh(self.fc(x), 0.5)


def test_custom_op_goes_through_the_generic_op(tmp_path):
    torch.manual_seed(0)
    compare_with_eager(CustomOpModel(), torch.randn(4, 8), dump_dir=tmp_path)
    forward = (next(tmp_path.glob("*/graph_*/forward")) / "final.mlir").read_text()
    assert 'fxmlir.call "fxmlir_test::scaled_tanh.default"' in forward


class GraphBreak(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.a(x))
        print("graph break", end="\r")
        return self.b(y)


def test_graph_break(tmp_path):
    torch.manual_seed(0)
    compare_with_eager(GraphBreak(), torch.randn(4, 8), dump_dir=tmp_path)
    # Two graphs, each with a forward and a backward.
    assert len(list(tmp_path.glob("*/graph_*/forward/final.mlir"))) == 2
    assert len(list(tmp_path.glob("*/graph_*/backward/final.mlir"))) == 2


def _strict_case(monkeypatch, strict_option, environ):
    """An embedding model whose export is made to fail, compiled with the
    strict setting given as an option or in the environment."""
    import fxmlir.roundtrip

    def failing_export(*args, **kwargs):
        raise fxmlir.exporter.ExportFailure("injected")

    monkeypatch.setattr(fxmlir.roundtrip, "export_graph", failing_export)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 2))
    ids = torch.randint(0, 10, (3, 5))
    options = {} if strict_option is None else {"strict": strict_option}
    return model, torch.compile(model, backend=fxmlir.backend(**options)), ids


@pytest.mark.parametrize("strict_option, environ", [
    (True, {}), (None, {"FXMLIR_STRICT": "1"}),
])
def test_strict_turns_a_fallback_into_an_error_with_the_same_message(monkeypatch,
                                                                     strict_option, environ):
    """A fallback was always a FallbackWarning: CI could not fail on one."""
    from fxmlir.roundtrip import FallbackError

    _, compiled, ids = _strict_case(monkeypatch, strict_option, environ)
    message = r"graph_\d+_\d+_\d+/before_autodiff graph kept as is: ExportFailure: injected"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FallbackWarning)  # raised, not warned
        # Dynamo wraps a backend's error in BackendCompilerFailed, quoting it.
        with pytest.raises(Exception, match=message) as raised:
            compiled(ids)
    cause = raised.value
    while cause is not None and not isinstance(cause, FallbackError):
        cause = getattr(cause, "inner_exception", None) or cause.__cause__
    assert isinstance(cause, FallbackError) and re.search(message, str(cause))
    assert isinstance(cause.__cause__, fxmlir.exporter.ExportFailure)


def test_strict_names_the_stage_that_failed(monkeypatch):
    """A forward's failure once reached the user as the before_autodiff
    graph's ("AOTAutograd failed on the round-tripped graph: ... forward")."""
    import fxmlir.roundtrip
    from fxmlir.roundtrip import FallbackError

    export = fxmlir.roundtrip.export_graph

    def fail_in_forward(module_json, imported, gm, regions, **kwargs):
        if imported.func_name == "forward":
            raise fxmlir.exporter.ExportFailure("injected")
        return export(module_json, imported, gm, regions, **kwargs)

    monkeypatch.setattr(fxmlir.roundtrip, "export_graph", fail_in_forward)
    compiled = torch.compile(nn.Sequential(nn.Linear(8, 8), nn.GELU()),
                             backend=fxmlir.backend(strict=True))
    with pytest.raises(Exception) as raised:
        compiled(torch.randn(2, 8))
    cause = raised.value
    while cause is not None and not isinstance(cause, FallbackError):
        cause = getattr(cause, "inner_exception", None) or cause.__cause__
    assert isinstance(cause, FallbackError)
    assert re.match(r"fxmlir: graph_\d+_\d+_\d+/forward graph kept as is: ExportFailure: "
                    "injected", str(cause)), str(cause)
    assert "before_autodiff" not in str(cause)


@pytest.mark.parametrize("strict_option, environ", [
    (None, {}), (False, {"FXMLIR_STRICT": "1"}), (None, {"FXMLIR_STRICT": "0"}),
])
def test_without_strict_a_fallback_warns(monkeypatch, strict_option, environ):
    model, compiled, ids = _strict_case(monkeypatch, strict_option, environ)
    with pytest.warns(FallbackWarning, match="before_autodiff graph kept as is: ExportFailure: "
                                             "injected"):
        out = compiled(ids)
    assert torch.equal(out, model(ids))


def test_strict_raises_when_a_jit_region_does_not_compile(monkeypatch):
    """A region left to eager is a fallback too."""
    from fxmlir import _C
    from fxmlir.roundtrip import FallbackError

    def fail(module, function):
        raise _C.Error(f"no code for @{function}")

    monkeypatch.setattr(_C, "jit_compile_cpu", fail)
    x = torch.randn(4, 8, requires_grad=True)
    compiled = torch.compile(lambda t: (torch.tanh(t) * 3.0 + 1.0).sum(),
                             backend=fxmlir.backend(codegen=True, strict=True))
    with pytest.raises(Exception, match=r"/forward: JIT region @jit_\w+ left to eager: "
                                        "no code") as raised:
        compiled(x)
    assert isinstance(raised.value.inner_exception, FallbackError)


def test_without_a_dump_dir_failures_go_to_the_documented_folder(tmp_path, monkeypatch):
    """The default failure folder was documented nowhere."""
    import tempfile
    from pathlib import Path

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    model, compiled, ids = _strict_case(monkeypatch, None, {})
    with pytest.warns(FallbackWarning) as caught:
        compiled(ids)
    folders = re.findall(r"\(dumped to (\S+)\)", str(caught[0].message))
    assert folders, str(caught[0].message)
    folder = Path(folders[0])
    assert folder.parent.parent.parent == tmp_path / "fxmlir-failures"
    assert (folder / "repro.py").read_text().startswith("# ExportFailure: injected")
    # The repro runs on its own; the injected failure is this process's only.
    result = subprocess.run([sys.executable, "-m", "fxmlir", "repro", str(folder)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "the failure did not reproduce" in result.stdout
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "`fxmlir-failures` in Python's temporary directory" in readme
    assert "`/tmp/fxmlir-failures/<run>/graph_.../<stage>/`" in readme


def test_a_value_with_no_fxmlir_form_names_its_node():
    def quantized(x: torch.Tensor) -> torch.Tensor:
        q = torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
        return q.dequantize() * 2.0

    x = torch.randn(4, 8)
    compiled = torch.compile(quantized, backend="fxmlir")
    with pytest.warns(FallbackWarning, match=r"graph kept as is: .*node 'q' "
                      r"\(.*quantize_per_tensor.*\): UnsupportedValue: dtype torch.qint8"):
        out = compiled(x)
    torch.testing.assert_close(out, quantized(x))


def test_a_fallbacks_repro_reproduces_it_in_a_fresh_process(tmp_path):
    def quantized(x: torch.Tensor) -> torch.Tensor:
        q = torch.quantize_per_tensor(x, 0.1, 0, torch.qint8)
        return q.dequantize() * 2.0

    compiled = torch.compile(quantized, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    with pytest.warns(FallbackWarning) as caught:
        compiled(torch.randn(4, 8))
    folder = re.findall(r"\(dumped to (\S+)\)", str(caught[0].message))[0]
    assert folder.endswith("before_autodiff")
    # The script alone (inputs of the recorded shapes, the run's settings)
    # and the CLI around it both fail where the round trip failed.
    for command in (["-m", "fxmlir", "repro", folder], [f"{folder}/repro.py"]):
        result = subprocess.run([sys.executable, *command], capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 1, result.stdout
        assert "ImportFailure: node 'quantize_per_tensor'" in result.stderr
        assert "UnsupportedValue: dtype torch.qint8 has no fxmlir element type" in result.stderr
    missing = subprocess.run([sys.executable, "-m", "fxmlir", "repro", str(tmp_path)],
                             capture_output=True, text=True, timeout=300)
    assert missing.returncode == 2 and "no repro.py" in missing.stderr
