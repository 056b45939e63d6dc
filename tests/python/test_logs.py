"""fxmlir logs through torch._logging: TORCH_LOGS names, the structured
trace, the end-of-run summary; each checked in a fresh process, as torch
reads TORCH_LOGS and TORCH_TRACE when it is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Two compiles (the second a recompile of Sequential.forward, compile id
# 0/1): the second must not reset the level the first saw.
SCRIPT = textwrap.dedent("""
    import torch, torch.nn as nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 2))
    torch.compile(model, backend="fxmlir")(torch.randn(4, 8)).sum().backward()
    other = nn.Sequential(nn.Linear(8, 4), nn.ReLU())
    torch.compile(other, backend="fxmlir")(torch.randn(4, 8)).sum().backward()
""")


def run(env: dict[str, str], cwd: Path, script: str = SCRIPT) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "FXMLIR_"))}
    result = subprocess.run([sys.executable, "-c", script], env={**environ, **env}, cwd=cwd,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result


def round_trip_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "round trip:" in line]


def test_nothing_is_logged_by_default(tmp_path):
    assert round_trip_lines(run({}, tmp_path).stderr) == []


def test_torch_logs_fxmlir_gives_one_info_line_per_round_trip(tmp_path):
    stderr = run({"TORCH_LOGS": "fxmlir"}, tmp_path).stderr
    lines = round_trip_lines(stderr)
    # Two compiles, three stages each.
    assert len(lines) == 6, stderr
    assert all(line.startswith("I") for line in lines)
    # Each fused op in the line of the stage that made it; the forward
    # graph's came from before autodiff (it claimed them as its own).
    for graph, fused in (("graph_0_0_0", "fused_bias_act"),
                         ("graph_0_1_0", "fused_bias_act")):
        assert any(f"{graph}/before_autodiff round trip: " in line and f"({fused} x1)" in line
                   for line in lines), lines
        assert any(f"{graph}/forward round trip: " in line
                   and f"(no new fusions; fused earlier: {fused} x1)" in line
                   for line in lines), lines
    assert "round trip failure" not in stderr  # DEBUG stays off


def test_debug_level_survives_later_compiles(tmp_path):
    # Simulate a failure in the second compile: its DEBUG traceback shows
    # only if the level set by TORCH_LOGS=+fxmlir was not reset.
    script = SCRIPT.replace("other = ", '''import fxmlir.roundtrip
def fail(*args, **kwargs):
    raise RuntimeError("injected")
fxmlir.roundtrip.export_graph = fail
other = ''')
    stderr = run({"TORCH_LOGS": "+fxmlir"}, tmp_path, script).stderr
    assert "graph_0_1_0/before_autodiff round trip failure" in stderr, stderr
    assert "RuntimeError: injected" in stderr


def test_the_summary_artifact_prints_a_table_at_exit(tmp_path):
    stderr = run({"TORCH_LOGS": "fxmlir_summary"}, tmp_path).stderr
    assert round_trip_lines(stderr) == []  # the artifact alone: no INFO lines
    table = stderr[stderr.index("round trips of this process"):]
    assert "ops before" in table and "fused ops" in table
    assert "fused_bias_act x1" in table and "fused_bias_act x1" in table
    assert len([line for line in table.splitlines() if "graph_" in line]) == 6


def test_the_ir_artifact_prints_the_modules(tmp_path):
    stderr = run({"TORCH_LOGS": "fxmlir_ir"}, tmp_path).stderr
    assert "graph_0_0_0/forward after its passes" in stderr
    assert "fxmlir.fused_bias_act" in stderr


def test_structured_trace_has_round_trips_and_fallbacks(tmp_path):
    script = SCRIPT.replace("other = ", '''import fxmlir.roundtrip
fxmlir.roundtrip.export_graph = None  # every later round trip fails
other = ''')
    run({"TORCH_TRACE": str(tmp_path / "trace")}, tmp_path, script)
    entries = [json.loads(line.split(" ", 4)[4]) for log in (tmp_path / "trace").iterdir()
               for line in log.read_text().splitlines() if "fxmlir_" in line and "{" in line]
    names = {e["artifact"]["name"]: e for e in entries if "artifact" in e}
    assert "fxmlir_graph_0_0_0_forward_round_trip" in names
    assert "fxmlir_graph_0_0_0_forward_final_mlir" in names
    assert "fxmlir_graph_0_1_0_before_autodiff_fallback" in names
    # tlparse groups them by compile id.
    first = names["fxmlir_graph_0_0_0_forward_round_trip"]
    fallback = names["fxmlir_graph_0_1_0_before_autodiff_fallback"]
    assert (first["frame_id"], first["frame_compile_id"]) == (0, 0)
    assert (fallback["frame_id"], fallback["frame_compile_id"]) == (0, 1)


def test_the_retired_log_level_variable_says_what_replaced_it(tmp_path):
    """It stopped the compile (a ValueError inside BackendCompilerFailed): now
    it warns once per process and the compiles go on."""
    result = run({"FXMLIR_LOG_LEVEL": "info"}, tmp_path)
    assert result.stderr.count("FXMLIR_LOG_LEVEL was removed and is ignored") == 1, \
        result.stderr
    assert "TORCH_LOGS=fxmlir" in result.stderr


@pytest.mark.parametrize("settings", ["fxmlir_ir", "fxmlir_summary"])
def test_torch_knows_the_artifacts(settings, tmp_path):
    # torch rejects unknown TORCH_LOGS names at import: the startup hook
    # registered ours before that.
    run({"TORCH_LOGS": settings}, tmp_path, "import torch")


def slow_script(step_s: float, total_s: float) -> str:
    """SCRIPT with the feedback thresholds lowered, as on a slow machine."""
    return (f"import fxmlir.progress as p\np.SLOW_STEP_S = {step_s}\n"
            f"p.SLOW_TOTAL_S = {total_s}\n" + SCRIPT)


def test_a_slow_round_trip_says_what_it_is_doing(tmp_path):
    stderr = run({"TORCH_LOGS": "fxmlir"}, tmp_path, slow_script(0.0, 1e9)).stderr
    lines = [line for line in stderr.splitlines() if "so far)" in line]
    assert any("graph_0_0_0/forward: round trip of " in line and " nodes (over 0 s so far)"
               in line for line in lines), stderr
    assert all(line.startswith("I") for line in lines)
    assert "round trips have taken" not in stderr


def test_a_long_compile_warns_once_how_to_see_why(tmp_path):
    stderr = run({}, tmp_path, slow_script(1e9, 0.0)).stderr
    warnings = [line for line in stderr.splitlines() if "round trips have taken" in line]
    assert len(warnings) == 1, stderr
    assert "TORCH_LOGS=fxmlir" in warnings[0] and warnings[0].startswith("W")
    assert "passes " in warnings[0] and "import " in warnings[0]  # where the time went
    assert "so far)" not in stderr  # INFO stays off by default


def test_steps_in_flight_share_one_watchdog_thread():
    import threading

    import fxmlir.progress

    with fxmlir.progress.timed("a step"), fxmlir.progress.timed("a step inside it"):
        threads = threading.enumerate()
    assert not any(isinstance(t, threading.Timer) for t in threads)
    assert sum(t.name == "fxmlir-progress" for t in threads) == 1
