"""Builds fxmlir: CMake builds the MLIR core, fxmlir-opt, fxmlir._C and the
torch op library into build/package/fxmlir; setuptools ships them with the
Python sources of python/fxmlir.

Environment (build time only):
  FXMLIR_BUILD_DIR   CMake build directory (default: build)
  FXMLIR_CMAKE_ARGS  extra CMake arguments, e.g. for a machine without MLIR:
                     "-DFXMLIR_BUILD_CORE=OFF -DFXMLIR_PREBUILT_CORE=/path"
  FXMLIR_BUILD_COMMIT  the commit recorded in the package's BUILD_COMMIT
                     (default: `git describe --always --dirty` of this tree)
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
VERSION: dict = {}
exec((ROOT / "python" / "fxmlir" / "_version.py").read_text(), VERSION)


def build_commit() -> str:
    """The commit this tree is, for the package's BUILD_COMMIT: what
    `python -m benchmarks` labels its runs with (an installed package may
    be older than the checkout that runs the benchmarks)."""
    if os.environ.get("FXMLIR_BUILD_COMMIT"):
        return os.environ["FXMLIR_BUILD_COMMIT"]
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def built_against_torch() -> str:
    """`torch==X.Y.Z` for the torch this build links (its ABI), after
    checking that fxmlir supports it."""
    import torch
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    release = Version(torch.__version__).public
    if release not in SpecifierSet(VERSION["SUPPORTED_TORCH"]):
        sys.exit(f"fxmlir supports torch {VERSION['SUPPORTED_TORCH']}; this Python has "
                 f"torch {torch.__version__}")
    return f"torch=={release}"


class CMakeExtension(Extension):
    """Stands for everything the CMake project builds."""

    def __init__(self) -> None:
        super().__init__("fxmlir._C", sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        build_dir = Path(os.environ.get("FXMLIR_BUILD_DIR", ROOT / "build"))
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir),
            f"-DPython3_EXECUTABLE={sys.executable}",
            *shlex.split(os.environ.get("FXMLIR_CMAKE_ARGS", "")),
        ]
        if shutil.which("ninja") and not (build_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--parallel"],
                       check=True)
        # Everything under package/fxmlir goes into the installed package.
        target = Path(self.get_ext_fullpath(ext.name)).parent
        target.mkdir(parents=True, exist_ok=True)
        for built in (build_dir / "package" / "fxmlir").iterdir():
            shutil.copy2(built, target / built.name)
        (target / "BUILD_COMMIT").write_text(build_commit() + "\n")


class BuildPyWithStartupHook(build_py):
    """Also installs fxmlir-autoload.pth at the top of site-packages: it makes
    FXMLIR_ROUND_TRIP=1 route torch.compile through fxmlir."""

    def run(self) -> None:
        super().run()
        self.copy_file(str(ROOT / "python" / "fxmlir-autoload.pth"),
                       str(Path(self.build_lib) / "fxmlir-autoload.pth"))


setup(
    name="fxmlir",
    version=VERSION["__version__"],
    description="Round-trip PyTorch training graphs through MLIR and fuse them",
    author="The fxmlir authors",
    license_expression="BSD-3-Clause",
    license_files=["LICENSE"],
    python_requires=">=3.10",
    install_requires=[built_against_torch()],
    # pip install 'fxmlir[benchmarks]': python -m benchmarks draws its chart.
    extras_require={"benchmarks": ["matplotlib"]},
    packages=["fxmlir"],
    package_dir={"": "python"},
    package_data={"fxmlir": ["py.typed"]},  # PEP 561: the package has type hints
    ext_modules=[CMakeExtension()],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPyWithStartupHook},
    entry_points={
        "torch_dynamo_backends": ["fxmlir = fxmlir.dynamo_backend:fxmlir_backend"],
        "console_scripts": ["fxmlir = fxmlir.cli:main", "fxmlir-opt = fxmlir.cli:opt"],
    },
    zip_safe=False,
)
