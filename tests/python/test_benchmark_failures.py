"""The benchmark suite's step tables: an implementation that raises loses
its row and names its error; the others are still timed."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's benchmarks/

from benchmarks import report, suites  # noqa: E402

SIZES = replace(suites.SIZES["cpu"], warmup=1, step_reps=4)


def _raising_on_call(number: int):
    calls = 0

    def impl() -> None:
        nonlocal calls
        calls += 1
        if calls == number:
            raise RuntimeError(f"call {number} broke")
    return impl


@pytest.mark.parametrize("number", [1, 7], ids=["first-call", "timed-call"])
def test_a_failing_implementation_loses_its_row_alone(number):
    impls = {"eager": lambda: None, "broken": _raising_on_call(number), "other": lambda: None}
    result = suites._step_results("case", "f32", "cpu", SIZES, impls, lambda fn: fn(), [], None)
    assert list(result.timings) == ["eager", "other"]
    assert all(len(t.samples) == SIZES.step_reps for t in result.timings.values())
    assert result.extra["broken"] == {"error": f"RuntimeError: call {number} broke"}
    table = report._step_table([result])
    assert f"- case, f32, broken failed: RuntimeError: call {number} broke" in table
    assert "| other |" in table and "| broken |" not in table


def test_a_failing_eager_fails_the_table():
    impls = {"eager": _raising_on_call(5), "other": lambda: None}
    with pytest.raises(Exception, match="eager: RuntimeError: call 5 broke"):
        suites._step_results("case", "f32", "cpu", SIZES, impls, lambda fn: fn(), [], None)
