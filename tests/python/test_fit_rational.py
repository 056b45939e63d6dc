"""tools/fit_rational.py: the committed coefficients of the CPU kernels' erf
and tanh (csrc/kernels/common/RationalFits.inc) are the tool's fit."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="tools/fit_rational.py fits with numpy")

ROOT = Path(__file__).resolve().parents[2]


def _load_tool():
    spec = importlib.util.spec_from_file_location(
        "fit_rational", ROOT / "tools" / "fit_rational.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fit_rational = _load_tool()


def test_committed_coefficients_are_the_fit(capsys) -> None:
    assert fit_rational.main(["--check"]) == 0, capsys.readouterr().err


def test_check_names_a_changed_coefficient(tmp_path: Path, capsys) -> None:
    assert fit_rational.main(["--root", str(tmp_path), "--check"]) == 1
    assert fit_rational.main(["--root", str(tmp_path)]) == 0
    path = tmp_path / fit_rational.OUTPUT
    text = path.read_text()
    first = fit_rational.constants(text)["kTanhQ"][1]
    path.write_text(text.replace(f"{first!r}f", f"{first * 1.001!r}f", 1))
    assert fit_rational.main(["--root", str(tmp_path), "--check"]) == 1
    assert "(kTanhP and kTanhQ: relative error" in capsys.readouterr().err


def test_constants_reads_scalars_and_arrays() -> None:
    text = "constexpr float kXClamp = 2.5f;\nconstexpr float kXP[] = {\n    1.0f,\n    -2e-06f,\n};\n"
    assert fit_rational.constants(text) == {"kXClamp": [2.5], "kXP": [1.0, -2e-06]}
