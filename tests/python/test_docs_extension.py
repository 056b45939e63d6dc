"""docs/adding-a-fusion.md's path with no C++: an activation written in torch
ops (QuickGELU) is one JIT region forward and one backward on CPU. The test
runs the page's example as written and checks what the page says it prints."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn as nn

import fxmlir

ROOT = Path(__file__).parents[2]
SECTION = "## An activation in torch ops (no C++)"


def example() -> tuple[str, str]:
    """The section's Python example and the output the page gives for it."""
    page = (ROOT / "docs" / "adding-a-fusion.md").read_text()
    section = page[page.index(SECTION):].split("\n## ", 1)[0]
    code, printed = re.findall(r"```(?:python)?\n(.*?)```", section, re.DOTALL)[:2]
    return code, printed


def test_the_pages_example_prints_what_the_page_says(tmp_path):
    code, printed = example()
    # Regions are on by default: no FXMLIR_* setting of the run may change that.
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "FXMLIR_"))}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path, env=environ)
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed


class QuickGELU(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)


def test_quick_gelu_regions_compute_what_eager_does(tmp_path, monkeypatch):
    for name in [k for k in os.environ if k.startswith("FXMLIR_")]:
        monkeypatch.delenv(name)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), QuickGELU(), nn.Linear(32, 4))
    x = torch.randn(8, 16)
    expected = model(x)
    expected.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    got = compiled(x)
    got.sum().backward()
    torch.testing.assert_close(got, expected)
    for p, grad in zip(model.parameters(), grads):
        torch.testing.assert_close(p.grad, grad)
    # The activation's ops all went into the regions: none is left outside.
    for stage, region in (("forward", "jit_mul_sigmoid"),
                          ("backward", "jit_mul_sigmoid_backward_add_sum")):
        (folder,) = tmp_path.glob(f"*/graph_*/{stage}")
        summary = json.loads((folder / "summary.json").read_text())
        assert summary["fused_ops"] == {"fxmlir.mlir_jit": 1}, summary
        assert f"@{region}(" in (folder / "final.mlir").read_text()
        after = (folder / "fx_after.py").read_text()
        assert not re.search(r"torch\.ops\.aten\.(sigmoid|sigmoid_backward|mul)\.", after)
