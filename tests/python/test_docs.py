"""The README's opening numbers are those of docs/benchmarks.md's tables:
when a benchmark run replaces them, this test says the README is stale."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def first_call_s(table: str, model: str, implementation: str) -> float:
    """The first call of the model's f32 step, from its first row (one
    thread, where the table has a threads column)."""
    row = re.search(rf"^\| {re.escape(model)} \| f32 \|(?: \d+ \|)? {implementation} \|"
                    r".*\| ([\d.]+) \|$", table, re.MULTILINE)
    assert row, (model, implementation)
    return float(row.group(1))


def test_readme_quotes_the_benchmark_pages_compile_times():
    table = (ROOT / "docs" / "benchmarks.md").read_text()
    opening = (ROOT / "README.md").read_text().split("\n\n")[2]  # after the commands
    gpt2, llama = "GPT-2 (4 layers, 512 wide)", "LLaMA-style (4 layers, 512 wide)"
    quoted = (f"first call took {first_call_s(table, gpt2, 'fxmlir'):.1f} s against "
              f"Inductor's {first_call_s(table, gpt2, 'Inductor'):.1f} s and a LLaMA-style "
              f"one {first_call_s(table, llama, 'fxmlir'):.1f} s against "
              f"{first_call_s(table, llama, 'Inductor'):.1f} s")
    assert quoted in " ".join(opening.split())
