"""Dump folders never collide: per run, rank, compile id and subgraph, each
run with an index.json of everything in it."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

import fxmlir
import fxmlir.dump
import fxmlir.progress
from fxmlir.report import INDEX

from gloo_exit import destroy_and_exit

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
    the files in it, once the SVGs rendering in the background are done."""
    assert fxmlir.dump.wait_for_renders(timeout=120)
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
    # os._exit skips the exit hook that indexes renders left undone: wait
    # for them (the backward's graphs are dumped during the backward).
    assert fxmlir.dump.wait_for_renders(timeout=120)
    destroy_and_exit()  # see gloo_exit.py


def test_ddp_ranks_and_split_graphs_get_their_own_folders(tmp_path):
    mp.spawn(ddp_worker, args=(str(tmp_path),), nprocs=WORLD, join=True)
    # Run folders start with their start time and pid: ranks sort by suffix.
    runs = sorted((tmp_path / "dumps").iterdir(), key=lambda r: r.name.rsplit("-", 1)[-1])
    assert [r.name.rsplit("-", 1)[-1] for r in runs] == ["rank0", "rank1"]
    for run in runs:
        index = check_index(run)
        graphs = sorted({e["graph"] for e in index["entries"]})
        assert len(graphs) > 1, graphs  # the DDP optimizer split the graph
        assert {g.rsplit("_", 1)[0] for g in graphs} == {"graph_0_0"}  # one compile id
        for graph in graphs:  # each piece has all its stages
            stages = {e["stage"] for e in index["entries"] if e["graph"] == graph}
            assert stages == {"before_autodiff", "forward", "backward"}, (graph, stages)


def fused_ops_spy(monkeypatch) -> list[str]:
    """The fxmlir ops of every graph the backend compiles, as they come."""
    import fxmlir.dynamo_backend as backend

    fused: list[str] = []
    round_trip = backend.round_trip_or_fallback

    def spy(*args, **kwargs):
        graph = round_trip(*args, **kwargs)
        fused.extend(str(n.target) for n in graph.graph.nodes
                     if n.op == "call_function" and str(n.target).startswith("fxmlir."))
        return graph
    monkeypatch.setattr(backend, "round_trip_or_fallback", spy)
    return fused


def train_mlp(dump_dir: Path | None) -> tuple[list[float], list[torch.Tensor]]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    step = model if dump_dir is None else torch.compile(
        model, backend=fxmlir.backend(dump_dir=str(dump_dir)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        loss = step(torch.randn(4, 8)).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses, [p.detach() for p in model.parameters()]


def full_disk(monkeypatch, dump_dir: Path) -> None:
    """Every file written under `dump_dir` fails as on a full filesystem."""
    write_text = Path.write_text

    def failing(path: Path, *args, **kwargs):
        if dump_dir in path.parents:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return write_text(path, *args, **kwargs)
    monkeypatch.setattr(Path, "write_text", failing)


def graph_folder_taken(monkeypatch, dump_dir: Path) -> None:
    """The run's first graph folder is a file: its stage folders are paths
    under a file."""
    (fxmlir.dump.run(dump_dir).folder / "graph_0_0_0").write_text("in the way")


def fxmlir_warnings(caught: list[warnings.WarningMessage]) -> list[tuple[str, str]]:
    return [(w.category.__name__, str(w.message)) for w in caught
            if "fxmlir" in str(w.message)]


@pytest.mark.parametrize("break_dumps", [full_disk, graph_folder_taken])
def test_dumps_that_cannot_be_written_cost_no_fusion(tmp_path, monkeypatch, break_dumps):
    """A full disk once made every stage fall back: FallbackWarning: ...
    graph kept as is: OSError: [Errno 28] No space left on device."""
    monkeypatch.setattr(fxmlir.dump, "_stopped", {}, raising=False)  # as in a new process
    dumps = tmp_path / "dumps"
    break_dumps(monkeypatch, dumps)
    fused = fused_ops_spy(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses, params = train_mlp(dumps)
    # The bias + GELU fused before autodiff, in the forward and backward graphs.
    assert "fxmlir.fused_bias_act.default" in fused, fxmlir_warnings(caught)
    assert "fxmlir.fused_bias_act_grad.default" in fused
    ((category, message),) = fxmlir_warnings(caught)  # one warning for the run
    assert category == "DumpWarning" and f"dumps to {dumps} stopped" in message, message
    eager_losses, eager_params = train_mlp(None)
    torch.testing.assert_close(losses, eager_losses)
    torch.testing.assert_close(params, eager_params)


def test_a_dump_file_that_cannot_be_made_is_skipped(tmp_path, monkeypatch):
    import fxmlir.roundtrip

    def broken(*args, **kwargs):
        raise RuntimeError("injected")
    monkeypatch.setattr(fxmlir.roundtrip, "standalone_source", broken)
    fused = fused_ops_spy(monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_mlp(tmp_path)
    assert "fxmlir.fused_bias_act.default" in fused, fxmlir_warnings(caught)
    skipped = fxmlir_warnings(caught)
    assert len(skipped) == 6  # fx_before.py and fx_after.py of each stage
    assert all(category == "DumpWarning" and "not dumped: could not make it: RuntimeError: "
               "injected" in message for category, message in skipped), skipped
    (run,) = tmp_path.iterdir()
    index = check_index(run)  # the other files are there and indexed
    assert all("final.mlir" in e["files"] and "fx_after.py" not in e["files"]
               for e in index["entries"])


READ_ONLY_STEP = """
import json, warnings
import torch, torch.nn as nn
import fxmlir.dynamo_backend as backend

fused = []
round_trip = backend.round_trip_or_fallback

def spy(*args, **kwargs):
    graph = round_trip(*args, **kwargs)
    fused.extend(str(n.target) for n in graph.graph.nodes if str(n.target).startswith("fxmlir."))
    return graph

backend.round_trip_or_fallback = spy
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
x = torch.randn(4, 8)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = torch.compile(model, backend="fxmlir")(x)
    out.sum().backward()
print(json.dumps({"fused": fused, "equal": torch.allclose(out, model(x)),
                  "warnings": [f"{w.category.__name__}: {w.message}" for w in caught
                               if "fxmlir" in str(w.message)]}))
"""


def test_a_read_only_dump_dir_costs_no_fusion(tmp_path):
    """It was a ValueError (FXMLIR_DUMP_DIR ... is not writable) that failed
    torch.compile."""
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    command = [sys.executable, "-c", READ_ONLY_STEP]
    if os.geteuid() != 0:
        dumps.chmod(0o555)
    elif shutil.which("unshare") is None:
        pytest.skip("root without unshare cannot make a read-only directory")
    else:  # permissions do not bind root: a read-only bind mount does
        command = ["unshare", "-m", "sh", "-c",
                   'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"',
                   str(dumps), *command]
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "FXMLIR_"))}
    result = subprocess.run(command, capture_output=True, text=True, timeout=300,
                            env={**environ, "FXMLIR_DUMP_DIR": str(dumps)})
    dumps.chmod(0o755)
    assert result.returncode == 0, result.stderr[-3000:]
    run = json.loads(result.stdout.strip().splitlines()[-1])
    assert "fxmlir.fused_bias_act.default" in run["fused"], run
    assert "fxmlir.fused_bias_act_grad.default" in run["fused"], run
    assert run["equal"], run
    (warning,) = run["warnings"]
    assert warning.startswith(f"DumpWarning: fxmlir: dumps to {dumps} stopped"), warning
    assert list(dumps.iterdir()) == []


def test_mlir_dumps_keep_the_fx_names(tmp_path):
    # input.mlir names values after FX nodes; the passes' dumps and
    # final.mlir keep those names (name locations printed as SSA names), not
    # %0, %arg0, so a value can be followed from fx_before.py to final.mlir.
    train_once(tmp_path)
    folder = next(tmp_path.glob("*/graph_*/forward"))
    for dump in (folder / "input.mlir", folder / "final.mlir",
                 *folder.glob("[0-9][0-9]-*.mlir")):
        text = dump.read_text()
        assert "%primals_1" in text and "%addmm" in text, dump.name
        assert "%arg0" not in text, dump.name


def test_op_graph_has_a_legend_short_labels_and_named_regions(tmp_path):
    # Labels were FX names with the parameter in parentheses, floats had 17
    # digits (p=0.10000000000000001), JIT nodes did not say their function.
    torch.manual_seed(0)
    # Sigmoid has no fused bias kernel: its chains are regions.
    model = nn.Sequential(nn.Linear(8, 16), nn.Sigmoid(), nn.Dropout(0.1), nn.Linear(16, 4))
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    x = torch.randn(4, 8)
    compiled(x).mul(2.0).sigmoid().sum().backward()
    before = next(tmp_path.glob("*/graph_*/before_autodiff/graph.dot")).read_text()
    assert "cluster_legend" in before and "JIT region (@function)" in before
    assert '"0.weight' in before  # a parameter's label starts with its module path
    assert "p=0.1," in before.replace("\\l", ",") and "0.10000000000000001" not in before
    jit_labels = [line for stage in ("forward", "backward")
                  for line in next(tmp_path.glob(f"*/graph_*/{stage}/graph.dot"))
                  .read_text().splitlines() if "fxmlir.mlir_jit" in line]
    assert jit_labels and all("@jit_" in line for line in jit_labels)


def fake_dot(monkeypatch, folder: Path, script: str) -> None:
    """Puts a `dot` running the shell `script` first on PATH."""
    folder.mkdir()
    dot = folder / "dot"
    dot.write_text(f"#!/bin/sh\n{script}\n")
    dot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


# A dot that draws once the file `gate` beside it exists (within 60 s).
GATED_DOT = """
gate="$(dirname "$0")/gate"
for _ in $(seq 1200); do [ -e "$gate" ] && break; sleep 0.05; done
[ -e "$gate" ] || exit 3
echo '<svg>drawn</svg>'
"""


def stage_folders(dumps: Path) -> list[Path]:
    return sorted(p.parent for p in dumps.glob("*/graph_*/*/graph.dot"))


def test_the_round_trip_does_not_wait_for_graphviz(tmp_path, monkeypatch):
    """dot ran inside each round trip: 9.0 s instead of 2.7 s for a tiny
    GPT-2's first call."""
    fake_dot(monkeypatch, tmp_path / "bin", GATED_DOT)
    dumps = tmp_path / "dumps"
    try:
        train_once(dumps)  # returns while every dot waits for its gate
        folders = stage_folders(dumps)
        assert len(folders) == 6
        assert not list(dumps.rglob("*.svg"))
        (run,) = dumps.iterdir()
        index = json.loads((run / INDEX).read_text())
        assert len(index["entries"]) == 6
        assert not any("graph.svg" in e["files"] for e in index["entries"])
        assert not fxmlir.dump.wait_for_renders(timeout=0.1)
    finally:
        (tmp_path / "bin" / "gate").touch()
    index = check_index(run)  # waits for the renders
    assert all("graph.svg" in e["files"] and "svg_skipped" not in e for e in index["entries"])
    assert all((f / "graph.svg").read_text() == "<svg>drawn</svg>\n" for f in folders)


def test_a_render_writes_nothing_into_a_removed_folder(tmp_path, monkeypatch):
    """A user removing dumps while renders are pending: a file the renderer
    wrote meanwhile made their rm -r fail with "Directory not empty"."""
    fake_dot(monkeypatch, tmp_path / "bin", GATED_DOT)
    dumps = tmp_path / "dumps"
    try:
        train_once(dumps)  # returns while every dot waits for its gate
        folders = stage_folders(dumps)
        for folder in folders:
            shutil.rmtree(folder)
    finally:
        (tmp_path / "bin" / "gate").touch()
    assert fxmlir.dump.wait_for_renders(timeout=120)
    assert not any(folder.exists() for folder in folders)
    (run,) = dumps.iterdir()
    index = json.loads((run / INDEX).read_text())
    # Neither drawn nor failed: nothing was written for them, the index included.
    assert not any("graph.svg" in e["files"] or "svg_skipped" in e for e in index["entries"])


def test_a_failing_dot_says_why_in_the_index(tmp_path, monkeypatch):
    fake_dot(monkeypatch, tmp_path / "bin", "echo 'syntax error in line 1' >&2; exit 1")
    train_once(tmp_path / "dumps")
    (run,) = (tmp_path / "dumps").iterdir()
    index = check_index(run)  # no graph.svg, nor a partial one, left behind
    for entry in index["entries"]:
        assert "exit status 1): syntax error in line 1" in entry["svg_skipped"], entry
        assert "dot -Tsvg -o graph.svg graph.dot" in entry["svg_skipped"]


def test_a_graph_too_large_to_read_is_not_drawn_and_its_summary_says_how(
        tmp_path, monkeypatch):
    fake_dot(monkeypatch, tmp_path / "bin", "echo '<svg/>'")
    monkeypatch.setattr(fxmlir.dump, "SVG_MAX_OPS", 3)
    train_once(tmp_path / "dumps")
    (run,) = (tmp_path / "dumps").iterdir()
    index = check_index(run)
    drawn = {e["folder"] for e in index["entries"] if "graph.svg" in e["files"]}
    assert drawn and len(drawn) < len(index["entries"])  # graph_1's second Linear is small
    for entry in index["entries"]:
        summary = json.loads((run / entry["folder"] / "summary.json").read_text())
        if entry["folder"] in drawn:
            assert "svg" not in summary
            continue
        ops = sum(summary["ops_after"].values())
        assert summary["svg"] == entry["svg_skipped"] == (
            f"not rendered: {ops} ops (over 3) draw too large to read; "
            "to render it, in its folder: dot -Tsvg -o graph.svg graph.dot")


EXIT_WHILE_RENDERING = """
import sys, torch, torch.nn as nn, fxmlir
model = nn.Sequential(nn.Linear(8, 16), nn.GELU())
torch.compile(model, backend=fxmlir.backend(dump_dir=sys.argv[1]))(torch.randn(4, 8))
print("returned", flush=True)
"""


def test_renders_pending_at_exit_are_skipped_and_leave_no_file(tmp_path, monkeypatch):
    fake_dot(monkeypatch, tmp_path / "bin", GATED_DOT)  # never opened
    dumps = tmp_path / "dumps"
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "FXMLIR_"))}
    result = subprocess.run([sys.executable, "-c", EXIT_WHILE_RENDERING, str(dumps)],
                            capture_output=True, text=True, timeout=300, env=environ)
    assert result.returncode == 0 and "returned" in result.stdout, result.stderr[-3000:]
    (run,) = dumps.iterdir()
    index = check_index(run)  # no graph.svg, nor a partial one
    assert len(index["entries"]) == 2  # before autodiff, inference
    assert all("the process exited first" in e["svg_skipped"] for e in index["entries"])


def test_dump_time_is_not_counted_as_round_trips(monkeypatch):
    monkeypatch.setattr(fxmlir.progress, "_total", {"seconds": 0.0, "warned": True})
    monkeypatch.setattr(fxmlir.progress, "_parts", {})
    with fxmlir.progress.timed("a round trip"):
        with fxmlir.progress.aside("dumps"):
            time.sleep(0.3)
    assert fxmlir.progress._total["seconds"] < 0.3 <= fxmlir.progress._parts["dumps"]


def test_the_slow_compile_warning_names_the_parts():
    text = fxmlir.progress._parts_text(
        10.0, {"passes": 6.0, "import": 1.0, "jit": 0.5, "export": 0.3, "dumps": 4.0})
    assert text == ("passes 6.0 s, other 2.2 s, import 1.0 s, jit 0.5 s, export 0.3 s; "
                    "dumps 4.0 s besides")
