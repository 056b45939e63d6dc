"""DDP with 2 gloo processes trains through fxmlir exactly like single-process
eager on the whole batch, and the bias+GELU site still fuses.

The compiled module goes inside DDP: Dynamo skips DDP's own forward
(`torch.compile(ddp)` runs eagerly, no graph reaches a backend), while
`DDP(torch.compile(model))` compiles the model and DDP's gradient hooks
all-reduce what the compiled backward produces.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

WORLD = 2
STEPS = 3


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 4))


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


def worker(rank: int, folder: str) -> None:
    import fxmlir
    from fxmlir.roundtrip import FallbackWarning

    warnings.simplefilter("error", FallbackWarning)
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous",
                            rank=rank, world_size=WORLD)
    model = make_model()
    compiled = nn.parallel.DistributedDataParallel(
        torch.compile(model, backend=fxmlir.backend(dump_dir=f"{folder}/dumps{rank}")))
    x, y = batch()
    shard = slice(rank * len(x) // WORLD, (rank + 1) * len(x) // WORLD)
    train(model, compiled, x[shard], y[shard])
    torch.save(model.state_dict(), f"{folder}/rank{rank}.pt")
    dist.destroy_process_group()


def test_ddp_through_fxmlir_equals_single_process_eager(tmp_path):
    mp.spawn(worker, args=(str(tmp_path),), nprocs=WORLD, join=True)
    eager = make_model()
    train(eager, eager, *batch())
    for rank in range(WORLD):
        state = torch.load(tmp_path / f"rank{rank}.pt")
        for name, value in eager.state_dict().items():
            torch.testing.assert_close(state[name], value, rtol=1e-5, atol=1e-6)
    fused = [json.loads(p.read_text())["fused_ops"]
             for p in Path(tmp_path, "dumps0").glob("*/before_autodiff/summary.json")]
    assert {"fxmlir.fused_bias_add_gelu": 1} in fused
