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
graphviz is installed and the graph small enough to read), the FX code before
and after (fx_after.py runs on its own), and summary.json; a failed round
trip leaves repro.py and failed-module.mlir. The run's index.json lists every
stage folder, its files and its summary or fallback reason, so tools need not
walk the tree.

Dumps never cost the optimization: the first dump that cannot be written
(a full disk, an unwritable folder) warns once with a DumpWarning and stops
this process's dumps into that directory; a dump file whose text cannot be
made warns and is skipped. Either way the round trip goes on. Nor do they
slow it: graph.svg is rendered by one background thread, a graph at a time at
low priority (graphviz takes seconds to minutes on a transformer's graph), and
the index lists it once written whole; wait_for_renders() waits for them.
Renders still pending when the process exits are skipped, as the index says.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import threading
import time
import warnings
from collections import deque
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, TypeVar

from fxmlir import progress
from fxmlir._version import __version__
from fxmlir.report import INDEX

# graph.svg is drawn for graphs of at most this many ops: a bigger one draws
# too large to read (a 2-layer GPT-2's forward graph, 147 ops, at 4000x8000
# pt, after 17 s of dot), so its summary says how to render it anyway.
SVG_MAX_OPS = 100
SVG_TIMEOUT_S = 60
# Renders a stage folder's graph.dot, run in that folder.
RENDER_COMMAND = "dot -Tsvg -o graph.svg graph.dot"

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


# Fields a round trip's caller adds to its summary.json, by graph id and
# label: what only the caller knows (dynamo_backend: the tensors the forward
# graph saves for backward, which AOTAutograd's metadata tells).
_summary_fields: dict[tuple[str, str], dict[str, Any]] = {}


@contextmanager
def summary_fields(graph_id: str, label: str, **fields: Any) -> Iterator[None]:
    """Adds `fields` (those not None) to the summary of the round trip of
    graph_id/label run in this block."""
    key = (graph_id, label)
    _summary_fields[key] = {name: value for name, value in fields.items() if value is not None}
    try:
        yield
    finally:
        del _summary_fields[key]


_Method = TypeVar("_Method", bound=Callable[..., Any])


def _dump_time(method: _Method) -> _Method:
    """Times the method as dumps', which the round trip's time leaves out."""
    @functools.wraps(method)
    def timed(self: Dumper, *args: Any, **kwargs: Any) -> Any:
        if self.folder is None:  # not dumping
            return method(self, *args, **kwargs)
        with progress.aside("dumps"):
            return method(self, *args, **kwargs)
    return timed  # type: ignore[return-value]


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
        self._svg_from: Path | None = None  # the graph.dot to render, at finish()
        self._svg_note: str | None = None  # why graph.svg is not drawn, for summary.json
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

    @_dump_time
    def write(self, name: str, text: str | Callable[[], str]) -> Path | None:
        """Writes the file `name`; `text` may be a function making it, only
        called when dumping."""
        if self.folder is None:
            return None
        if callable(text):
            try:
                text = text()
            except Exception as e:  # noqa: BLE001 - a dump must not fail the round trip
                # stacklevel: write's caller, past _dump_time's wrapper.
                warnings.warn(f"fxmlir: {self.folder / name} not dumped: could not make it: "
                              f"{type(e).__name__}: {e}", DumpWarning, stacklevel=3)
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
        """graph.dot, and graph.svg beside it, rendered in the background
        once the stage is indexed (finish()) when graphviz is installed and
        the graph small enough to read; else its summary says why and how
        to render it."""
        path = self.write("graph.dot", dot)
        if path is None:
            return
        if shutil.which("dot") is None:
            self._svg_note = "graphviz's dot is not installed"
        elif ops > SVG_MAX_OPS:
            self._svg_note = f"{ops} ops (over {SVG_MAX_OPS}) draw too large to read"
        else:
            self._svg_from = path
            return
        self._svg_note = _not_rendered(self._svg_note)
        self.entry["svg_skipped"] = self._svg_note

    @_dump_time
    def _add(self, entry: dict[str, Any]) -> None:
        if self.run is not None and self.error is None:
            try:
                self.run.add(entry)
            except OSError as e:
                self._stop(e)

    def finish(self, summary: dict[str, Any]) -> None:
        """summary.json, and the stage's entry in the run's index; `summary`
        takes its caller's fields (summary_fields) in place, so that the logs
        that report it next have them too."""
        summary.update(_summary_fields.get((self.entry["graph"], self.entry["label"]), {}))
        if self._svg_note is not None:  # the dump's own field: not the logs'
            summary = {**summary, "svg": self._svg_note}
        self.write("summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
        entry = {**self.entry, "summary": summary}
        self._add(entry)
        if self._svg_from is not None and self.run is not None and self.error is None:
            _renderer.submit(_Render(self._svg_from, entry, self.run))

    def failed(self, reason: str, repro: Callable[[], str],
               module: Callable[[], str] | None) -> None:
        """repro.py (and failed-module.mlir, as the failing step left it),
        and the fallback's entry in the run's index."""
        self.write("repro.py", repro)
        if module is not None:
            self.write("failed-module.mlir", module)
        self._add({**self.entry, "fallback": reason})


def _not_rendered(reason: str) -> str:
    return f"not rendered: {reason}; to render it, in its folder: {RENDER_COMMAND}"


class _Render(NamedTuple):
    dot: Path
    entry: dict[str, Any]  # the stage's entry in the run's index
    run: Run


def _index_renders(renders: list[_Render], skipped: str | None) -> None:
    """Lists each render's graph.svg in its run's index, or why it is
    missing."""
    with _lock:
        for render in renders:
            if skipped is None:
                render.entry["files"].append("graph.svg")
            else:
                render.entry["svg_skipped"] = _not_rendered(skipped)
        for run_ in {id(render.run): render.run for render in renders}.values():
            try:
                run_.write_index()
            except OSError:
                pass  # a full disk: the round trips' next dump warns


class _Renderer:
    """Renders graph.svg files with graphviz's dot on one daemon thread, so
    that no round trip waits for a layout; one dot at a time, at low
    priority, so that renders take at most one core from the compile."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._queue: deque[_Render] = deque()
        self._current: _Render | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, render: _Render) -> None:
        with self._changed:
            if self._closed:
                return
            self._queue.append(render)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fxmlir-svg",
                                                daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def wait(self, timeout: float | None) -> bool:
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._queue and self._current is None, timeout)

    def close(self) -> None:
        """Skips the renders not done (at exit: the thread would die in the
        middle of one) and says so in their index."""
        with self._changed:  # not while a render's file is being written
            self._closed = True
            skipped = [*self._queue, *([self._current] if self._current else [])]
            self._queue.clear()
            self._current = None
            if self._process is not None:
                self._process.kill()
            self._changed.notify_all()
        if skipped:
            _index_renders(skipped, "the process exited first")

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._queue or self._closed)
                if self._closed:
                    return
                render = self._current = self._queue.popleft()
            svg, why = self._dot(render.dot)
            with self._changed:
                if self._closed:  # close() indexed it as skipped
                    return
                # Nothing goes into a folder removed meanwhile (a user's
                # rm -r of the dumps): a file landing while the removal runs
                # would fail it with "Directory not empty".
                if render.dot.exists():
                    if svg is not None:
                        why = _write_whole(render.dot.with_suffix(".svg"), svg)
                    _index_renders([render], why)
                self._current = None
                self._changed.notify_all()

    def _dot(self, path: Path) -> tuple[bytes | None, str | None]:
        """The SVG of graph.dot `path`, or why there is none."""
        command = ["dot", "-Tsvg", str(path)]
        nice = shutil.which("nice")
        if nice is not None:  # the compile comes first on a machine with few cores
            command = [nice, "-n", "19", *command]
        try:
            with self._changed:  # close() kills the process it finds here
                if self._closed:
                    return None, None
                process = self._process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE)
            try:
                svg, error = process.communicate(timeout=SVG_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                return None, f"dot took over {SVG_TIMEOUT_S} s"
        except OSError as e:
            return None, f"dot failed: {e}"
        finally:
            with self._changed:
                self._process = None
        if process.returncode != 0:
            message = error.decode(errors="replace").strip()[-500:]
            return None, f"dot failed (exit status {process.returncode}): {message}"
        return svg, None


def _write_whole(path: Path, data: bytes) -> str | None:
    """Writes `path` under another name first, so no reader sees it half
    written; None, or why it could not."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError as e:
        partial.unlink(missing_ok=True)
        return f"{type(e).__name__}: {e}"
    return None


_renderer = _Renderer()
atexit.register(lambda: _renderer.close())
# A forked child has no render thread, and may have copied a held lock.
os.register_at_fork(after_in_child=lambda: globals().update(_renderer=_Renderer()))


def wait_for_renders(timeout: float | None = None) -> bool:
    """Waits until every graph.svg asked for so far is written (or skipped);
    False if `timeout` seconds passed first."""
    return _renderer.wait(timeout)
