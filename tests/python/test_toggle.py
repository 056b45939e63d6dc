"""FXMLIR_ROUND_TRIP is read when torch.compile (or torch._dynamo.optimize)
runs, so a script can set it after `import torch`; one line confirms the
routing; processes that never import torch pay nothing for the hook."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

ROUTED = textwrap.dedent("""
    import os, torch, torch.nn as nn
    import torch._dynamo
    os.environ["FXMLIR_ROUND_TRIP"] = "1"   # after import torch
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU())
    x = torch.randn(4, 8)
    for compiled in (torch.compile(model, mode="max-autotune"),
                     torch._dynamo.optimize("inductor")(model)):
        torch.testing.assert_close(compiled(x), model(x))
        torch._dynamo.reset()
""")


def run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "FXMLIR_"))}
    return subprocess.run([sys.executable, "-c", code], env={**environ, **env},
                          capture_output=True, text=True, timeout=300)


def test_set_inside_the_script_routes_compile_and_optimize():
    result = run(ROUTED, {"TORCH_LOGS": "fxmlir"})
    assert result.returncode == 0, result.stderr
    stderr = result.stderr
    # One confirmation per entry point, and the round trips that prove it.
    assert stderr.count("FXMLIR_ROUND_TRIP=1: torch.compile(backend='inductor') routed "
                        "to fxmlir") == 1, stderr
    assert stderr.count("FXMLIR_ROUND_TRIP=1: torch._dynamo.optimize(backend='inductor') "
                        "routed to fxmlir") == 1, stderr
    assert stderr.count("graph_0_0_0/before_autodiff round trip") == 2, stderr


def test_unset_leaves_torch_compile_alone():
    script = ROUTED.replace('os.environ["FXMLIR_ROUND_TRIP"] = "1"', "pass").replace(
        'torch.compile(model, mode="max-autotune")', 'torch.compile(model, backend="eager")'
    ).replace('torch._dynamo.optimize("inductor")', 'torch._dynamo.optimize("eager")')
    result = run(script, {"TORCH_LOGS": "fxmlir"})
    assert result.returncode == 0, result.stderr
    assert "routed" not in result.stderr and "round trip" not in result.stderr


def test_a_bad_value_names_the_variable_at_compile():
    result = run(ROUTED.replace('"1"   # after', '"maybe"   # after'), {})
    assert result.returncode != 0
    assert ("FXMLIR_ROUND_TRIP='maybe' is invalid; accepted values: 1, true, yes, on, 0, "
            "false, no, off (any case)") in result.stderr


def test_switch_spellings_route_too():
    """FXMLIR_ROUND_TRIP=true was an error: only 0 and 1 were accepted."""
    result = run(ROUTED.replace('"1"   # after', '"True"   # after'), {"TORCH_LOGS": "fxmlir"})
    assert result.returncode == 0, result.stderr
    assert "torch.compile(backend='inductor') routed to fxmlir" in result.stderr


def startup_seconds(env: dict[str, str], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        run("pass", env)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("value", ["0", "1"])
def test_the_toggle_costs_no_startup_time(value):
    # Importing torch takes over a second; the hook must not.
    assert startup_seconds({"FXMLIR_ROUND_TRIP": value}) < 0.5
