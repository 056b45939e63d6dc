"""Dump folders that never collide.

    <dump_dir>/<run>/<graph>/<label>/       run: <YYYYmmdd-HHMMSS>-pid<pid>[-rank<r>]
                                            graph: graph_<frame>_<recompile>_<n>
                                            label: the stage, or <stage>/<body> for a
                                            subgraph body

A process gets one run folder per dump directory (created at its first dump,
never reused: a name taken by an earlier run gets a suffix), so ranks that
share a dump directory and reruns each write their own. In it, each graph
Dynamo hands fxmlir has a folder per stage holding the imported module, the
module after each pass, the final module, the op graph (.dot, and .svg when
graphviz is installed), the FX code before and after (fx_after.py runs on its
own), and summary.json; a failed round trip leaves failed-graph.py and
failed-module.mlir. The run's index.json lists every stage folder, its files
and its summary or fallback reason, so tools need not walk the tree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from fxmlir._version import __version__
from fxmlir.report import INDEX

# graph.svg is rendered for graphs up to this many ops, within this time.
SVG_MAX_OPS = 400
SVG_TIMEOUT_S = 30

_lock = threading.Lock()
# The run folder of each dump directory this process wrote into: the only
# state dumps keep.
_runs: dict[Path, "Run"] = {}


def _rank() -> int | None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    rank = os.environ.get("RANK")
    return int(rank) if rank is not None and rank.isdigit() else None


class Run:
    """This process's folder in one dump directory and its index."""

    def __init__(self, root: Path) -> None:
        rank = _rank()
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-pid{os.getpid()}"
        name += f"-rank{rank}" if rank is not None else ""
        root.mkdir(parents=True, exist_ok=True)
        self.folder = root / name
        suffix = 1
        while True:
            try:
                self.folder.mkdir()
                break
            except FileExistsError:
                suffix += 1
                self.folder = root / f"{name}-{suffix}"
        self.index: dict[str, Any] = {"run": self.folder.name, "pid": os.getpid(),
                                      "rank": rank, "fxmlir": __version__, "entries": []}
        self.write_index()

    def add(self, entry: dict[str, Any]) -> None:
        with _lock:
            self.index["entries"].append(entry)
            self.write_index()

    def write_index(self) -> None:
        # Readers never see a half-written index.
        partial = self.folder / f".{INDEX}.partial"
        partial.write_text(json.dumps(self.index, indent=1, sort_keys=True) + "\n")
        os.replace(partial, self.folder / INDEX)


def run(root: Path) -> Run:
    """This process's run in dump directory `root`, created at first use."""
    key = root.resolve()
    with _lock:
        if key not in _runs:
            _runs[key] = Run(root)
        return _runs[key]


class Dumper:
    """Writes one round trip's files into <run>/<graph id>/<label>/; a no-op
    without a dump directory."""

    def __init__(self, root: Path | None, graph_id: str, label: str, stage: str) -> None:
        self.run = run(root) if root is not None else None
        self.folder = self.run.folder / graph_id / label if self.run is not None else None
        self.entry = {"graph": graph_id, "label": label, "stage": stage,
                      "folder": f"{graph_id}/{label}", "files": []}
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
        self.index = 0

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def write(self, name: str, text: str) -> Path | None:
        if self.folder is None:
            return None
        path = self.folder / name
        path.write_text(text)
        self.entry["files"].append(name)
        return path

    def module(self, label: str, text: str) -> None:
        """A numbered .mlir snapshot, so the folder lists them in order."""
        if self.folder is not None:
            self.write(f"{self.index:02d}-{label}.mlir", text)
            self.index += 1

    def graph(self, dot: str, ops: int) -> None:
        """graph.dot, and graph.svg beside it when graphviz is installed and
        the graph small enough for dot to lay out quickly (a transformer's
        graph takes it minutes: `fxmlir show --svg` renders it on demand)."""
        path = self.write("graph.dot", dot)
        if path is None or shutil.which("dot") is None:
            return
        if ops > SVG_MAX_OPS:
            self.entry["svg_skipped"] = f"{ops} ops (over {SVG_MAX_OPS})"
            return
        try:
            subprocess.run(["dot", "-Tsvg", "-o", str(path.with_suffix(".svg")), str(path)],
                           capture_output=True, check=True, timeout=SVG_TIMEOUT_S)
            self.entry["files"].append("graph.svg")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            path.with_suffix(".svg").unlink(missing_ok=True)
            self.entry["svg_skipped"] = f"dot failed: {e}"

    def finish(self, summary: dict[str, Any]) -> None:
        """summary.json, and the stage's entry in the run's index."""
        if self.run is not None:
            self.write("summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
            self.run.add({**self.entry, "summary": summary})

    def failed(self, reason: str, graph: str, module: str | None) -> None:
        """failed-graph.py (and failed-module.mlir, as the failing step left
        it), and the fallback's entry in the run's index."""
        self.write("failed-graph.py", graph)
        if module is not None:
            self.write("failed-module.mlir", module)
        if self.run is not None:
            self.run.add({**self.entry, "fallback": reason})
