"""`fxmlir report` shows what each forward graph saves for backward: the
tensors its summary.json records from AOTAutograd's forward graph, against
what autograd is handed when the compiled model runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn as nn

import fxmlir
from fxmlir.report import RoundTripRecord, bytes_text


def _saved_when_run(fn) -> tuple[int, int]:
    """The tensors autograd saves while `fn` runs, and their bytes, each
    storage once (as benchmarks/timing.py's saved_mib counts them, parameters
    included)."""
    count, storages = 0, {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        nonlocal count
        count += 1
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        fn()
    return count, sum(storages.values())


def _report_rows(folder: Path) -> dict[str, dict[str, str]]:
    """`fxmlir report`'s table, its cells by row (graph) and column."""
    result = subprocess.run([sys.executable, "-m", "fxmlir", "report", str(folder)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("graph "))
    # Columns start where the dashes under their names do.
    starts = [i for i, c in enumerate(lines[header + 1]) if c == "-" and
              (i == 0 or lines[header + 1][i - 1] == " ")]
    ends = starts[1:] + [None]

    def cells(line: str) -> list[str]:
        return [line[start:end].strip() for start, end in zip(starts, ends)]

    names = cells(lines[header])
    return {row[0]: dict(zip(names, row))
            for row in map(cells, lines[header + 2:]) if row[0].startswith("graph_")}


def test_the_report_shows_what_the_forward_saves_for_backward(tmp_path):
    torch.manual_seed(0)
    # Saves an input, weights (one as its transpose, a view), the GELU's
    # input and the dropout's mask.
    model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Dropout(0.1), nn.Linear(64, 8))
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path), strict=True))
    x = torch.randn(16, 32)
    compiled(x).sum().backward()  # compiles
    tensors, nbytes = _saved_when_run(lambda: compiled(x))
    assert tensors > 0 and nbytes > 0

    (summary,) = [json.loads(p.read_text()) for p in tmp_path.glob("*/*/forward/summary.json")]
    assert summary["saved_for_backward"] == {"tensors": tensors, "bytes": nbytes}
    rows = _report_rows(tmp_path)
    assert rows["graph_0_0_0/forward"]["saved for backward"] == \
        f"{tensors} tensors, {bytes_text(nbytes)}"
    # Only a forward graph saves for backward.
    for stage in ("before_autodiff", "backward"):
        assert rows[f"graph_0_0_0/{stage}"]["saved for backward"] == "-"


def test_a_summary_without_saved_tensors_reads_as_before():
    """Dumps written before summaries recorded them still report."""
    record = RoundTripRecord.from_summary({
        "graph": "graph_0_0_0", "label": "forward", "stage": "forward", "passes": [],
        "ops_before": {}, "ops_after": {}, "fused_ops": {}, "time_ms": {}})
    assert record.saved_text == "-"
    record = RoundTripRecord.from_summary({
        "graph": "graph_0_0_0", "label": "forward", "stage": "forward", "passes": [],
        "ops_before": {}, "ops_after": {}, "fused_ops": {}, "time_ms": {},
        "saved_for_backward": {"tensors": 1, "bytes": 3 * 2**20 // 2}})
    assert record.saved_text == "1 tensor, 1.5 MiB"


def test_bytes_read_in_the_unit_that_fits():
    assert [bytes_text(n) for n in (0, 1023, 1024, 1536, 5 * 2**20, 3 * 2**30, 2**41)] == \
        ["0 B", "1023 B", "1.0 KiB", "1.5 KiB", "5.0 MiB", "3.0 GiB", "2048.0 GiB"]
