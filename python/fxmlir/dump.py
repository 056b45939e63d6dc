"""Per-graph dump folders: <dump_dir>/<graph>/<stage>/ with the imported
module, the module after each pass, the final module, its op graph as .dot,
the FX code before and after, and summary.json (op counts, times)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Dumper:
    """Writes one stage's files; a no-op without a directory."""

    def __init__(self, root: Path | None, graph_id: str, stage: str) -> None:
        self.folder = root / graph_id / stage if root is not None else None
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
        return path

    def module(self, label: str, text: str) -> None:
        """A numbered .mlir snapshot, so the folder lists them in order."""
        if self.folder is not None:
            self.write(f"{self.index:02d}-{label}.mlir", text)
            self.index += 1

    def summary(self, summary: dict[str, Any]) -> None:
        self.write("summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
