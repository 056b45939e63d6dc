"""DDP and FSDP2 with 2 gloo processes train through fxmlir exactly like
single-process eager on the whole batch (docs/distributed.md says what
Dynamo allows).

The compiled module goes inside DDP: Dynamo skips DDP's own forward
(`torch.compile(ddp)` runs eagerly, no graph reaches a backend), while
`DDP(torch.compile(model))` compiles the model and DDP's gradient hooks
all-reduce what the compiled backward produces.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.fsdp import fully_shard

from gloo_exit import destroy_and_exit

WORLD = 2
STEPS = 3


class MLP(nn.Module):
    # A module of its own: Dynamo does not start frames in torch.nn code, so
    # a sharded nn.Sequential would give no graph at all.
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 32)
        self.act = nn.GELU()
        self.proj = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.act(self.fc(x)))


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return MLP()


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(1)
    return torch.randn(8, 8), torch.randn(8, 4)


def train(model: nn.Module, step, x: torch.Tensor, y: torch.Tensor) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(STEPS):
        loss = nn.functional.mse_loss(step(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def wrap(kind: str, model: nn.Module, backend) -> nn.Module:
    """The module to call: compiled, then distributed."""
    if kind == "ddp":
        return nn.parallel.DistributedDataParallel(torch.compile(model, backend=backend))
    if kind == "fsdp2_per_layer":
        fully_shard(model.fc)
        fully_shard(model.proj)
    fully_shard(model)
    return torch.compile(model, backend=backend)


def worker(rank: int, kind: str, folder: str) -> None:
    import fxmlir
    from fxmlir.roundtrip import FallbackWarning

    warnings.simplefilter("error", FallbackWarning)
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous",
                            rank=rank, world_size=WORLD)
    model = make_model()
    step = wrap(kind, model, fxmlir.backend(dump_dir=f"{folder}/dumps{rank}"))
    x, y = batch()
    shard = slice(rank * len(x) // WORLD, (rank + 1) * len(x) // WORLD)
    train(model, step, x[shard], y[shard])
    state = {name: value.full_tensor() if hasattr(value, "full_tensor") else value
             for name, value in model.state_dict().items()}
    torch.save(state, f"{folder}/rank{rank}.pt")
    destroy_and_exit()  # see gloo_exit.py


# Sites fused before autodiff: sharding each Linear breaks the graph at its
# FSDP2 hooks (Dynamo does not trace them), so GELU no longer meets a bias.
@pytest.mark.parametrize("kind, fused_sites", [
    ("ddp", 1), ("fsdp2", 1), ("fsdp2_per_layer", 0)])
def test_distributed_training_through_fxmlir_equals_eager(tmp_path, kind, fused_sites):
    mp.spawn(worker, args=(kind, str(tmp_path)), nprocs=WORLD, join=True)
    eager = make_model()
    train(eager, eager, *batch())
    for rank in range(WORLD):
        state = torch.load(tmp_path / f"rank{rank}.pt")
        for name, value in eager.state_dict().items():
            torch.testing.assert_close(state[name], value, rtol=1e-5, atol=1e-6)
    summaries = list(Path(tmp_path, "dumps0").glob("*/graph_*/before_autodiff/summary.json"))
    assert summaries  # the model did go through fxmlir
    fused = sum(json.loads(p.read_text())["fused_ops"].get("fxmlir.fused_bias_act", 0)
                for p in summaries)
    assert fused == fused_sites
