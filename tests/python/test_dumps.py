"""Dump folders never collide: per run, rank, compile id and subgraph, each
run with an index.json of everything in it."""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

import fxmlir
import fxmlir.dump
from fxmlir.report import INDEX

WORLD = 2


class GraphBreak(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = nn.functional.gelu(self.fc1(x))
        torch._dynamo.graph_break()
        return self.fc2(h)


def train_once(dump_dir: Path) -> None:
    torch.manual_seed(0)
    model = GraphBreak()
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(dump_dir)))
    compiled(torch.randn(4, 8)).sum().backward()


def check_index(run: Path) -> dict:
    """The run's index lists exactly the stage folders on disk, each with
    the files in it."""
    index = json.loads((run / INDEX).read_text())
    folders = {e["folder"] for e in index["entries"]}
    on_disk = {str(p.parent.relative_to(run)) for p in run.rglob("summary.json")}
    assert folders == on_disk
    for entry in index["entries"]:
        assert sorted(entry["files"]) == sorted(p.name for p in (run / entry["folder"]).iterdir()
                                                if p.is_file())
    return index


def test_graph_break_and_rerun_get_their_own_folders(tmp_path):
    train_once(tmp_path)
    torch._dynamo.reset()
    fxmlir.dump._runs.clear()  # as a new process would
    train_once(tmp_path)
    runs = sorted(p for p in tmp_path.iterdir())
    assert len(runs) == 2  # the rerun did not overwrite the first run
    for run in runs:
        index = check_index(run)
        graphs = {e["graph"] for e in index["entries"]}
        assert graphs == {"graph_0_0_0", "graph_1_0_0"}  # one per side of the break
        assert len(index["entries"]) == 6
        assert index["run"] == run.name and "pid" in run.name


def ddp_worker(rank: int, folder: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{folder}/rendezvous", rank=rank,
                            world_size=WORLD)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                          nn.Linear(512, 4))
    # 1 MB buckets, a 1 MB layer: Dynamo's DDP optimizer splits the graph at
    # bucket boundaries, and all pieces share one compile id.
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=f"{folder}/dumps"))
    ddp = nn.parallel.DistributedDataParallel(compiled, bucket_cap_mb=1)
    ddp(torch.randn(4, 8)).sum().backward()
    dist.destroy_process_group()


def test_ddp_ranks_and_split_graphs_get_their_own_folders(tmp_path):
    mp.spawn(ddp_worker, args=(str(tmp_path),), nprocs=WORLD, join=True)
    runs = sorted((tmp_path / "dumps").iterdir())
    assert [r.name.rsplit("-", 1)[-1] for r in runs] == ["rank0", "rank1"]
    for run in runs:
        index = check_index(run)
        graphs = sorted({e["graph"] for e in index["entries"]})
        assert len(graphs) > 1, graphs  # the DDP optimizer split the graph
        assert {g.rsplit("_", 1)[0] for g in graphs} == {"graph_0_0"}  # one compile id
        for graph in graphs:  # each piece has all its stages
            stages = {e["stage"] for e in index["entries"] if e["graph"] == graph}
            assert stages == {"before_autodiff", "forward", "backward"}, (graph, stages)
