"""The round-trip table: what `fxmlir report DUMP_DIR` prints from dump
folders and what the fxmlir_summary log artifact prints at exit.

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
    fused_ops: tuple[tuple[str, int], ...] = ()
    passes: int = 0
    time_ms: float = 0.0
    fallback: str | None = None  # the reason, when the original graph was kept

    @classmethod
    def from_summary(cls, summary: dict[str, Any]) -> "RoundTripRecord":
        """The record of a summary.json."""
        return cls(graph=f"{summary['graph']}/{summary['label']}", stage=summary["stage"],
                   ops_before=sum(summary["ops_before"].values()),
                   ops_after=sum(summary["ops_after"].values()),
                   fused_ops=tuple(sorted(summary["fused_ops"].items())),
                   passes=len(summary["passes"]),
                   time_ms=sum(summary["time_ms"].values()))

    @property
    def fused_text(self) -> str:
        return ", ".join(f"{name.removeprefix('fxmlir.')} x{count}"
                         for name, count in self.fused_ops) or "-"


COLUMNS = ("graph", "stage", "passes", "ops before", "ops after", "fused ops", "ms",
           "fallback")


def record_rows(records: Iterable[RoundTripRecord]) -> list[tuple[str, ...]]:
    return [(r.graph, r.stage, str(r.passes), str(r.ops_before), str(r.ops_after),
             r.fused_text, f"{r.time_ms:.1f}", r.fallback or "-") for r in records]


def format_table(rows: list[tuple[str, ...]], columns: tuple[str, ...] = COLUMNS) -> str:
    """Rows as aligned text columns under a header."""
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c)
              for i, c in enumerate(columns)]
    lines = [columns, tuple("-" * w for w in widths), *rows]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()
                     for line in lines)


def find_indexes(path: Path) -> list[Path]:
    """The index.json of a run folder, or of every run folder in a dump
    directory, oldest run first."""
    if (path / INDEX).is_file():
        return [path / INDEX]
    return sorted(path.glob(f"*/{INDEX}"))


def index_records(index: dict[str, Any]) -> list[RoundTripRecord]:
    records = []
    for entry in index["entries"]:
        if "summary" in entry:
            records.append(RoundTripRecord.from_summary(entry["summary"]))
        else:
            records.append(RoundTripRecord(graph=entry["folder"], stage=entry["stage"],
                                           fallback=entry["fallback"]))
    return records


def report(path: Path) -> str:
    """The table of every run under `path`, one per run."""
    indexes = find_indexes(path)
    if not indexes:
        raise FileNotFoundError(f"no fxmlir dump under {path} (no {INDEX} in it or in its "
                                "subfolders); dumps are written where FXMLIR_DUMP_DIR or "
                                "the dump_dir option points")
    parts = []
    for index_path in indexes:
        index = json.loads(index_path.read_text())
        records = index_records(index)
        fused = sum(c for r in records for _, c in r.fused_ops)
        fallbacks = sum(r.fallback is not None for r in records)
        parts.append(f"run {index['run']} ({index_path.parent}): {len(records)} round trips, "
                     f"{fused} fused ops, {fallbacks} fallbacks\n"
                     + format_table(record_rows(records)))
    return "\n\n".join(parts)
