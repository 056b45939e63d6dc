"""benchmarks.without_pass: its arguments are checked before any model is
built, and its op-call counts count."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's benchmarks/

from benchmarks import without_pass  # noqa: E402


def test_an_unknown_pass_is_named_with_the_accepted_ones(capsys) -> None:
    with pytest.raises(SystemExit):
        without_pass.main(["fxmlir-fuse-everything"])
    error = capsys.readouterr().err
    assert "'fxmlir-fuse-everything' is not a pipeline pass" in error
    assert "fxmlir-group-casts" in error


def test_an_unknown_model_is_named(capsys) -> None:
    with pytest.raises(SystemExit):
        without_pass.main(["fxmlir-group-casts", "--models", "gpt2,bert"])
    assert "unknown ['bert']; accepted: gpt2, llama" in capsys.readouterr().err


def test_calls_per_step_counts_each_op() -> None:
    a = torch.randn(4, 4)

    def step() -> None:
        torch.mm(a, a)
        torch.mm(a, a).to(torch.bfloat16)

    counts = without_pass.calls_per_step(step, "cpu")
    assert counts["aten::mm"] == 2 and counts["aten::_to_copy"] == 1
    assert counts["fxmlir::mlir_jit"] == 0
