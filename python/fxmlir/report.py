"""The round-trip table: what `fxmlir report DUMP_DIR` prints from dump
folders and what the fxmlir_summary log artifact prints at exit.

A fused op counts in the stage whose round trip created it: one that came in
with a stage's input (the forward graph holds the fusions made before
autodiff) shows under "fused earlier" and is not counted again.

Imports neither torch nor the core, so the CLI answers fast.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

INDEX = "index.json"


@dataclass(frozen=True)
class RoundTripRecord:
    """What one round trip did: a row of the table."""

    graph: str  # the graph id and label: "graph_0_0_0/forward"
    stage: str
    ops_before: int = 0
    ops_after: int = 0
    # The fused ops this round trip created, counted in no other stage.
    fused_ops: tuple[tuple[str, int], ...] = ()
    # Those its input already had (made by an earlier stage, or AOTAutograd's
    # gradients of them), still in its output.
    fused_earlier: tuple[tuple[str, int], ...] = ()
    passes: int = 0
    time_ms: float = 0.0
    fallback: str | None = None  # the reason, when the original graph was kept
    # What a forward graph saves for backward: tensors, and their bytes (each
    # storage once); None for other stages and dumps that predate it.
    saved_tensors: int | None = None
    saved_bytes: int | None = None

    @classmethod
    def from_summary(cls, summary: dict[str, Any]) -> "RoundTripRecord":
        """The record of a summary.json, whose fused_ops are those of the
        stage's output: the ones its input had (ops_before) are not its own."""
        before = summary["ops_before"]
        created, earlier = [], []
        for name, count in sorted(summary["fused_ops"].items()):
            kept = min(count, before.get(name, 0))
            if count > kept:
                created.append((name, count - kept))
            if kept:
                earlier.append((name, kept))
        saved = summary.get("saved_for_backward") or {}
        return cls(graph=f"{summary['graph']}/{summary['label']}", stage=summary["stage"],
                   ops_before=sum(before.values()),
                   ops_after=sum(summary["ops_after"].values()),
                   fused_ops=tuple(created), fused_earlier=tuple(earlier),
                   passes=len(summary["passes"]),
                   time_ms=sum(summary["time_ms"].values()),
                   saved_tensors=saved.get("tensors"), saved_bytes=saved.get("bytes"))

    @property
    def fused_text(self) -> str:
        return fused_text(self.fused_ops)

    @property
    def fused_count(self) -> int:
        return sum(count for _, count in self.fused_ops)

    @property
    def saved_text(self) -> str:
        """"3 tensors, 1.5 MiB", or "-" where nothing was recorded."""
        if self.saved_tensors is None or self.saved_bytes is None:
            return "-"
        tensors = "1 tensor" if self.saved_tensors == 1 else f"{self.saved_tensors} tensors"
        return f"{tensors}, {bytes_text(self.saved_bytes)}"


def fused_text(ops: Iterable[tuple[str, int]]) -> str:
    """"fused_bias_act x2, packed_mask_scale x1", or "-" for none."""
    return ", ".join(f"{name.removeprefix('fxmlir.')} x{count}" for name, count in ops) or "-"


def bytes_text(count: int) -> str:
    """"512 B", "12.0 KiB", "1.5 MiB", "2.0 GiB"."""
    size, unit = float(count), "B"
    for larger in ("KiB", "MiB", "GiB"):
        if size < 1024:
            break
        size, unit = size / 1024, larger
    return f"{count} B" if unit == "B" else f"{size:.1f} {unit}"


COLUMNS = ("graph", "stage", "passes", "ops before", "ops after", "fused ops", "fused earlier",
           "saved for backward", "ms", "fallback")


def record_rows(records: Iterable[RoundTripRecord]) -> list[tuple[str, ...]]:
    return [(r.graph, r.stage, str(r.passes), str(r.ops_before), str(r.ops_after),
             r.fused_text, fused_text(r.fused_earlier), r.saved_text, f"{r.time_ms:.1f}",
             r.fallback or "-")
            for r in records]


def format_table(rows: list[tuple[str, ...]], columns: tuple[str, ...] = COLUMNS) -> str:
    """Rows as aligned text columns under a header."""
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c)
              for i, c in enumerate(columns)]
    lines = [columns, tuple("-" * w for w in widths), *rows]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()
                     for line in lines)


def read_text(path: Path) -> str:
    """A file's text; an error names the file (OSError's filename, or this
    ValueError)."""
    try:
        return path.read_text()
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})") from e


def find_indexes(path: Path) -> list[Path]:
    """The index.json itself, the one of a run folder, or those of every run
    folder in a dump directory, oldest run first."""
    if path.is_file() and path.name == INDEX:
        return [path]
    if (path / INDEX).is_file():
        return [path / INDEX]
    return sorted(path.glob(f"*/{INDEX}"))


def _entry_record(entry: Any) -> RoundTripRecord:
    if not isinstance(entry, dict):
        raise TypeError(f"{type(entry).__name__} {entry!r}, not an object")
    if "summary" in entry:
        return RoundTripRecord.from_summary(entry["summary"])
    return RoundTripRecord(graph=entry["folder"], stage=entry["stage"],
                           fallback=entry["fallback"])


def read_index(path: Path) -> tuple[str, list[RoundTripRecord]]:
    """The run name and round trips of an index.json. Raises OSError, or
    ValueError naming the file and what is wrong with it."""
    text = read_text(path)

    def corrupt(problem: str) -> ValueError:
        return ValueError(f"{path}: not an fxmlir dump index: {problem}")

    if not text.strip():
        raise corrupt("empty file")
    try:
        index = json.loads(text)
    except json.JSONDecodeError as e:
        raise corrupt(f"invalid JSON ({e})") from e
    if not isinstance(index, dict):
        raise corrupt(f"a JSON {type(index).__name__}, not an object")
    for key, kind, name in (("run", str, "string"), ("entries", list, "list")):
        if not isinstance(index.get(key), kind):
            raise corrupt(f"no {key!r} {name}")
    records = []
    for number, entry in enumerate(index["entries"]):
        try:
            records.append(_entry_record(entry))
        except KeyError as e:
            raise corrupt(f"entry {number} has no {e}") from e
        except (TypeError, AttributeError, ValueError) as e:
            raise corrupt(f"entry {number} is malformed ({e})") from e
    return index["run"], records


def report(path: Path) -> tuple[str, list[str]]:
    """The table of every run under `path`, one per run ("" when none could
    be read), and why each run whose index could not be read was skipped.
    Raises FileNotFoundError when there is no run."""
    indexes = find_indexes(path)
    if not indexes:
        if not path.exists():
            problem = "no such file or directory"
        elif path.is_file():
            problem = f"a file, neither a dump folder nor an {INDEX}"
        else:
            problem = f"no {INDEX} in it or in its subfolders"
        raise FileNotFoundError(f"{path}: no fxmlir dump ({problem}); dumps are written "
                                "where FXMLIR_DUMP_DIR or the dump_dir option points")
    parts, skipped = [], []
    for index_path in indexes:
        try:
            run, records = read_index(index_path)
        except (OSError, ValueError) as e:
            skipped.append(error_text(e))
            continue
        fused = sum(r.fused_count for r in records)  # each in the stage that made it
        fallbacks = sum(r.fallback is not None for r in records)
        parts.append(f"run {run} ({index_path.parent}): {len(records)} round trips, "
                     f"{fused} fused ops, {fallbacks} fallbacks\n"
                     + format_table(record_rows(records)))
    return "\n\n".join(parts), skipped


def error_text(error: BaseException) -> str:
    """An error as one line that names its file: "x.json: No such file or
    directory" for an OSError, else its message."""
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error)
