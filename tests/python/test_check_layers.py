"""tools/check_layers.py, the check that the core's layers call only
downward (run on the real build by ctest's core-layers-call-downward): here
on objects compiled from a few lines, so that it is seen to fail."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "check_layers.py"

pytestmark = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("g++", "nm", "c++filt")),
    reason="needs g++, nm and c++filt (binutils)")


def _objects(tmp_path: Path, sources: dict[str, str]) -> Path:
    """Compiles each `Layer/name.cpp` of `sources` into `Layer/name.cpp.o`
    under tmp_path, as CMake lays out a target's objects."""
    for name, text in sources.items():
        source = tmp_path / "src" / name
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(text)
        obj = tmp_path / "objs" / f"{name}.o"
        obj.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["g++", "-c", str(source), "-o", str(obj)], check=True)
    return tmp_path / "objs"


def _check(objs: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), str(objs)], capture_output=True,
                          text=True)


def test_a_call_upward_is_named(tmp_path):
    objs = _objects(tmp_path, {
        "Core/Api.cpp": "namespace fxmlir { int api() { return 1; } }",
        "Dialect/Op.cpp": "namespace fxmlir { int api(); int verify() { return api(); } }",
    })
    result = _check(objs)
    assert result.returncode == 1, result.stdout
    assert "Dialect/Op.cpp.o (Dialect) calls fxmlir::api(), defined in " \
        "Core/Api.cpp.o (Core)" in result.stdout
    assert "1 call(s) upward" in result.stdout


def test_calls_downward_and_shared_names_pass(tmp_path):
    # A call down is fine; an inline function defined in two layers (weak, a
    # copy in each object) and a local namesake tie nothing.
    objs = _objects(tmp_path, {
        "Core/Api.cpp": "namespace fxmlir { int op(); inline int twin() { return 2; }\n"
                        "static int local() { return 3; }\n"
                        "int api() { return op() + twin() + local(); } }",
        "Dialect/Op.cpp": "namespace fxmlir { inline int twin() { return 2; }\n"
                          "static int local() { return 4; }\n"
                          "int op() { return twin() + local(); } }",
    })
    result = _check(objs)
    assert result.returncode == 0, result.stdout
    assert "2 objects, every call downward" in result.stdout


def test_a_folder_in_no_layer_is_refused(tmp_path):
    objs = _objects(tmp_path, {"Misc/Thing.cpp": "int thing() { return 0; }"})
    result = _check(objs)
    assert result.returncode != 0
    assert "source folder 'Misc' is in no layer" in result.stderr
