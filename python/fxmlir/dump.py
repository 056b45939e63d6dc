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
own), and summary.json; a failed round trip leaves repro.py and
failed-module.mlir. The run's index.json lists every stage folder, its files
and its summary or fallback reason, so tools need not walk the tree.

Dumps never cost the optimization: the first dump that cannot be written
(a full disk, an unwritable folder) warns once with a DumpWarning and stops
this process's dumps into that directory; a dump file whose text cannot be
made warns and is skipped. Either way the round trip goes on.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable

from fxmlir._version import __version__
from fxmlir.report import INDEX

# graph.svg is rendered for graphs up to this many ops, within this time.
SVG_MAX_OPS = 400
SVG_TIMEOUT_S = 30

_lock = threading.Lock()
# The run folder of each dump directory this process wrote into: the only
# state dumps keep.
_runs: dict[Path, "Run"] = {}
# The dump directories a write failed in, and why: no more dumps go there.
_stopped: dict[Path, str] = {}


class DumpWarning(UserWarning):
    """A dump could not be written; the round trip went on without it."""


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
    without a dump directory, or once a write into it failed (`error` says
    why)."""

    def __init__(self, root: Path | None, graph_id: str, label: str, stage: str) -> None:
        self.root = root
        self.run: Run | None = None
        self.folder: Path | None = None
        self.error = _stopped.get(root.resolve()) if root is not None else None
        self.entry = {"graph": graph_id, "label": label, "stage": stage,
                      "folder": f"{graph_id}/{label}", "files": []}
        self.index = 0
        if root is None or self.error is not None:
            return
        try:
            self.run = run(root)
            folder = self.run.folder / graph_id / label
            folder.mkdir(parents=True, exist_ok=True)
            self.folder = folder
        except OSError as e:
            self._stop(e)

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def _stop(self, error: OSError) -> None:
        """No more dumps into this directory, with a warning the first time."""
        assert self.root is not None
        self.error = f"{type(error).__name__}: {error}"
        self.folder = None
        key = self.root.resolve()
        with _lock:
            first = key not in _stopped
            _stopped.setdefault(key, self.error)
        if first:
            warnings.warn(f"fxmlir: dumps to {self.root} stopped, the round trips go on "
                          f"without them: {self.error}", DumpWarning, stacklevel=2)

    def write(self, name: str, text: str | Callable[[], str]) -> Path | None:
        """Writes the file `name`; `text` may be a function making it, only
        called when dumping."""
        if self.folder is None:
            return None
        if callable(text):
            try:
                text = text()
            except Exception as e:  # noqa: BLE001 - a dump must not fail the round trip
                warnings.warn(f"fxmlir: {self.folder / name} not dumped: could not make it: "
                              f"{type(e).__name__}: {e}", DumpWarning, stacklevel=2)
                return None
        path = self.folder / name
        try:
            path.write_text(text)
        except OSError as e:
            self._stop(e)
            return None
        self.entry["files"].append(name)
        return path

    def module(self, label: str, text: str | Callable[[], str]) -> None:
        """A numbered .mlir snapshot, so the folder lists them in order."""
        if self.folder is not None:
            self.write(f"{self.index:02d}-{label}.mlir", text)
            self.index += 1

    def graph(self, dot: Callable[[], str], ops: int) -> None:
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
        except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
            path.with_suffix(".svg").unlink(missing_ok=True)
            self.entry["svg_skipped"] = f"dot failed: {e}"

    def _add(self, entry: dict[str, Any]) -> None:
        if self.run is not None and self.error is None:
            try:
                self.run.add(entry)
            except OSError as e:
                self._stop(e)

    def finish(self, summary: dict[str, Any]) -> None:
        """summary.json, and the stage's entry in the run's index."""
        self.write("summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
        self._add({**self.entry, "summary": summary})

    def failed(self, reason: str, repro: Callable[[], str],
               module: Callable[[], str] | None) -> None:
        """repro.py (and failed-module.mlir, as the failing step left it),
        and the fallback's entry in the run's index."""
        self.write("repro.py", repro)
        if module is not None:
            self.write("failed-module.mlir", module)
        self._add({**self.entry, "fallback": reason})
