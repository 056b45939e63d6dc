"""The installed package: its metadata pins the torch it was built against,
names its license and authors and its commands, and every binary it ships
finds its libraries relative to itself."""

import importlib.metadata
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import fxmlir

PACKAGE = Path(fxmlir.__file__).parent
BINARIES = sorted([*PACKAGE.glob("*.so"), PACKAGE / "fxmlir-opt"])


def test_requires_the_torch_it_was_built_against():
    release = Version(torch.__version__).public
    required = [r for r in importlib.metadata.requires("fxmlir") if "extra ==" not in r]
    assert required == [f"torch=={release}"]


def test_this_torch_is_a_supported_one():
    assert Version(torch.__version__).public in SpecifierSet(fxmlir.SUPPORTED_TORCH)
    assert importlib.metadata.version("fxmlir") == fxmlir.__version__


def test_metadata_names_license_authors_and_commands():
    metadata = importlib.metadata.metadata("fxmlir")
    assert metadata["License-Expression"] == "BSD-3-Clause"
    assert metadata["Author"]
    assert "LICENSE" in metadata.get_all("License-File")
    scripts = {e.name: e.value for e in importlib.metadata.entry_points(group="console_scripts")
               if e.value.startswith("fxmlir.")}
    assert scripts == {"fxmlir": "fxmlir.cli:main", "fxmlir-opt": "fxmlir.cli:opt"}
    # The benchmarks' chart needs matplotlib: an extra, not a dependency.
    assert "benchmarks" in metadata.get_all("Provides-Extra")
    assert any(r.startswith("matplotlib") and 'extra == "benchmarks"' in r
               for r in metadata.get_all("Requires-Dist"))


def dynamic_section(binary: Path) -> str:
    return subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils' readelf is not installed")
def test_binaries_have_only_origin_relative_runpaths():
    names = {b.name for b in BINARIES}
    assert {"_C", "libFxmlirCore.so", "libfxmlir_ops.so", "libfxmlir_jit_ops.so",
            "fxmlir-opt"} <= \
        {n.split(".")[0] if n.startswith("_C") else n for n in names}
    for binary in BINARIES:
        section = dynamic_section(binary)
        assert "(RPATH)" not in section, binary  # RUNPATH only: LD_LIBRARY_PATH still wins
        for line in section.splitlines():
            if "(RUNPATH)" in line:
                paths = line.split("[", 1)[1].rstrip("]").split(":")
                assert all(p.startswith("$ORIGIN") for p in paths), (binary, paths)
    # The fused kernels' library links no MLIR or LLVM (the core) and finds
    # torch's libraries in the torch package next to fxmlir; mlir_jit's
    # library finds the core beside it.
    ops = dynamic_section(PACKAGE / "libfxmlir_ops.so")
    assert "Library runpath: [$ORIGIN/../torch/lib]" in ops
    assert "libFxmlirCore" not in ops and "libMLIR" not in ops and "libLLVM" not in ops
    jit_ops = dynamic_section(PACKAGE / "libfxmlir_jit_ops.so")
    assert "Library runpath: [$ORIGIN:$ORIGIN/../torch/lib]" in jit_ops
    assert "Shared library: [libFxmlirCore.so]" in jit_ops


@pytest.mark.skipif(shutil.which("objdump") is None, reason="binutils' objdump is not installed")
def test_cpu_kernels_inline_their_element_functions():
    # A CPU kernel that calls its element lambda runs one call per element
    # and does not vectorize (exact GELU's gradient: 10x slower). Every
    # target clone must inline it (FXMLIR_INLINE_LAMBDA, TargetClones.h).
    disassembly = subprocess.run(["objdump", "-d", str(PACKAGE / "libfxmlir_ops.so")],
                                 capture_output=True, text=True, check=True).stdout
    # Lambdas local to a function of fxmlir::kernels::cpu, called.
    calls = set(re.findall(r"\bcall\s+\w+ <(_ZZN6fxmlir7kernels3cpu\w*_clE\w*)", disassembly))
    assert not calls, sorted(calls)[:3]
    assert "biasKernel" in disassembly  # the kernels are there, symbols and all


def test_version_command_and_type_hints_marker():
    result = subprocess.run([sys.executable, "-m", "fxmlir", "--version"], capture_output=True,
                            text=True)
    assert result.returncode == 0
    assert result.stdout.strip() == (f"fxmlir {fxmlir.__version__} "
                                     f"(supports torch {fxmlir.SUPPORTED_TORCH})")
    # PEP 561: type checkers read the package's hints.
    assert (Path(fxmlir.__file__).parent / "py.typed").is_file()


def test_backend_documents_and_types_every_option():
    import inspect

    from fxmlir.config import OPTIONS

    doc = inspect.getdoc(fxmlir.backend)
    assert all(f"\n{name}: " in doc for name in OPTIONS)
    assert "Unpack[BackendOptions]" in str(inspect.signature(fxmlir.backend))


@pytest.mark.parametrize("installed, requirement", [
    ("2.11.0+cu130", "torch==2.11.0+cu130"),  # a supported CUDA build stays
    ("2.13.0", "torch==2.13.0"),
    ("2.10.1", "torch==2.13.0"),  # unsupported: the pinned CPU build
    ("2.14.0", "torch==2.13.0"),
    ("none", "torch==2.13.0"),
])
def test_setup_keeps_a_supported_torch(installed, requirement):
    script = Path(__file__).parents[2] / "scripts" / "torch_requirement.py"
    result = subprocess.run([sys.executable, str(script), installed], capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == requirement
