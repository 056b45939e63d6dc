"""Prints the torch requirement scripts/setup.sh installs: the installed
torch when fxmlir supports it (a CUDA build stays), else the pinned CPU
build. `python3 scripts/torch_requirement.py [VERSION]` decides for VERSION
instead of the installed one ("none": no torch)."""

import importlib.metadata
import re
import sys
from pathlib import Path

PINNED = "torch==2.13.0"


def minor(version: str) -> tuple[int, int]:
    major, minor_ = re.match(r"(\d+)\.(\d+)", version).groups()
    return int(major), int(minor_)


def requirement(version: str | None) -> str:
    spec: dict = {}
    exec((Path(__file__).parents[1] / "python" / "fxmlir" / "_version.py").read_text(), spec)
    low, high = re.fullmatch(r">=(\d+\.\d+),<(\d+\.\d+)", spec["SUPPORTED_TORCH"]).groups()
    if version and minor(low) <= minor(version) < minor(high):
        return f"torch=={version}"
    return PINNED


def installed() -> str | None:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


if __name__ == "__main__":
    given = sys.argv[1] if len(sys.argv) > 1 else installed()
    print(requirement(None if given == "none" else given))
