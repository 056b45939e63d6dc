"""The folder a fallback leaves: the failed graph's repro.py and the module
as the failing step left it, where dumps go (or a temporary folder)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch.fx as fx

from fxmlir import _C
from fxmlir.config import Options
from fxmlir.dump import Dumper
from fxmlir.repro_script import repro_source


def dump_failure(options: Options, graph_id: str, label: str, stage: str, reason: str,
                  gm: fx.GraphModule, latest: list[str | _C.Module]) -> str:
    """Writes the failed graph's repro.py and the module; says where, or why
    it could not: the fallback itself must never fail."""
    root = options.dump_dir or Path(tempfile.gettempdir()) / "fxmlir-failures"
    dumper = Dumper(root, graph_id, label, stage)

    def repro() -> str:
        try:
            return repro_source(gm, f"{graph_id}/{label}", stage, reason, options)
        except Exception as e:  # noqa: BLE001 - the graph's code is still worth having
            return f"# {reason}\n# no runnable repro: {type(e).__name__}: {e}\n{gm.code}"

    # The module as the failing step left it.
    dumper.failed(reason, repro, (lambda: str(latest[-1])) if latest else None)
    if dumper.error is not None:  # e.g. a folder is a file, or the disk full
        return f"no dump written to {root}: {dumper.error}"
    return f"dumped to {dumper.folder}"
