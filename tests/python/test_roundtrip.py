"""The round trip with no passes: forward outputs and gradients are bitwise
eager's, for the models a training user compiles."""

from __future__ import annotations

import copy
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
