"""The JIT's disk cache trusts nothing it reads: a process that finds a
truncated, edited or misplaced entry under FXMLIR_CACHE_DIR gives eager's
outputs and gradients, rebuilds the entry and warns once; a cache directory
it cannot write, or must not trust (another user's, or writable by group or
others), costs only the disk cache. Each process runs apart: before the
cache verified, some of these crashed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# A training step whose forward and backward are JIT regions: compiled with
# fxmlir.backend(codegen=True), its outputs and gradients against eager's.
_STEP = r"""
import json, sys, warnings
import torch
import fxmlir
from fxmlir import jit

def step(x, w):
    return torch.tanh(x * w) * 1.5 + torch.sigmoid(x) * w

torch.manual_seed(0)
x = torch.randn(8, 64, requires_grad=True)
w = torch.randn(64, requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = torch.compile(step, backend=BACKEND)(x, w)
    out.sum().backward()
got = [out.detach(), x.grad, w.grad]
x.grad = w.grad = None
ref = step(x, w)
ref.sum().backward()
want = [ref.detach(), x.grad, w.grad]
stats = jit.stats()
print(json.dumps({
    "error": max((g - r).abs().max().item() for g, r in zip(got, want)),
    "warnings": [f"{type(w.message).__name__}: {w.message}" for w in caught
                 if "fxmlir" in str(w.message)],
    "compiled": stats["compiled"], "disk_hits": stats["disk_hits"],
    "disk_discarded": stats["disk_discarded"],
}))
"""


# The same step's forward as JIT regions only (fxmlir.jit.outline, no
# torch.compile), for the functions named on the command line.
_OUTLINED = r"""
import json, sys, warnings
import torch
from fxmlir import jit

functions = {
    "step": lambda x, w: torch.tanh(x * w) * 1.5 + torch.sigmoid(x) * w,
    "other": lambda x, w: torch.sigmoid(x * w) - x,
}
torch.manual_seed(0)
x, w = torch.randn(8, 64), torch.randn(64)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    errors = [(jit.outline(functions[n], x, w)(x, w)[0] - functions[n](x, w)).abs().max().item()
              for n in sys.argv[1:]]
stats = jit.stats()
print(json.dumps({
    "error": max(errors),
    "warnings": [f"{type(w.message).__name__}: {w.message}" for w in caught
                 if "fxmlir" in str(w.message)],
    "compiled": stats["compiled"], "disk_hits": stats["disk_hits"],
    "disk_discarded": stats["disk_discarded"],
}))
"""


def _run(cache: Path, codegen: bool = True, read_only: bool = False,
         outlined: tuple[str, ...] = ()) -> dict:
    """Runs the step in a fresh process (with `outlined`, those functions
    through fxmlir.jit.outline); returns what it printed, after checking that
    it exited normally. `read_only`: the cache directory cannot be written."""
    env = dict(os.environ, FXMLIR_CACHE_DIR=str(cache))
    env.pop("FXMLIR_ROUND_TRIP", None)
    backend = "fxmlir.backend(codegen=True)" if codegen else '"fxmlir"'
    command = [sys.executable, "-c", _OUTLINED, *outlined] if outlined else \
        [sys.executable, "-c", _STEP.replace("BACKEND", backend)]
    if read_only:
        if os.geteuid() != 0:
            cache.chmod(0o555)
        else:
            # Permissions do not bind root: a read-only bind mount in a mount
            # namespace of the process's own does.
            if shutil.which("unshare") is None:
                pytest.skip("root without unshare cannot make a read-only directory")
            command = ["unshare", "-m", "sh", "-c",
                       'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$@"',
                       str(cache), *command]
    run = subprocess.run(command, capture_output=True, text=True, env=env,
                         cwd=tempfile.gettempdir())
    assert run.returncode == 0, f"rc {run.returncode}\n{run.stderr[-3000:]}"
    result = json.loads(run.stdout.strip().splitlines()[-1])
    # The op's own compiles warn through torch, in Python only when its
    # caller handles warnings (autograd functions do), else on stderr.
    result["warnings"] += [line for line in run.stderr.splitlines() if "fxmlir JIT:" in line]
    return result


@pytest.fixture
def cache() -> Path:
    """A cache directory filled by a first process."""
    path = Path(tempfile.mkdtemp(prefix="fxmlir-jit-cache-test-"))
    first = _run(path)
    assert first["error"] < 1e-5 and first["compiled"] >= 2, first
    assert first["warnings"] == [], first
    yield path
    path.chmod(0o755)
    shutil.rmtree(path)


def _entries(cache: Path) -> list[Path]:
    """The entries (path without extension), largest object first."""
    return sorted((p.with_suffix("") for p in cache.glob("*.sig")),
                  key=lambda p: -p.with_suffix(".o").stat().st_size)


def _checksum(entry: Path) -> tuple[list[bytes], bytes]:
    """The lines of the entry's signature file, and the checksum line its
    key, signature and object call for."""
    lines = entry.with_suffix(".sig").read_bytes().split(b"\n")
    body = b"\n".join(lines[4:])
    digest = hashlib.sha256(entry.name.encode() + b"\n" + body
                            + entry.with_suffix(".o").read_bytes()).hexdigest()
    return lines, b"sha256 " + digest.encode()


def _verifies(entry: Path) -> bool:
    lines, checksum = _checksum(entry)
    return lines[:2] == [b"fxmlir-jit-entry 4", b"key " + entry.name.encode()] \
        and lines[3] == checksum


def _rechecksum(entry: Path) -> None:
    """Makes the checksum right for the files as they are."""
    lines, lines[3] = _checksum(entry)
    entry.with_suffix(".sig").write_bytes(b"\n".join(lines))


def _expect_rebuilt(cache: Path, reason: str) -> None:
    """A second process gives eager's numbers, warns once naming `reason`,
    and leaves every entry verified for the third, which compiles nothing."""
    second = _run(cache)
    assert second["error"] < 1e-5, second
    assert len(second["warnings"]) == 1, second
    assert "fxmlir JIT: discarded the cache entry" in second["warnings"][0], second
    assert reason in second["warnings"][0], second
    assert (second["compiled"], second["disk_discarded"]) == (1, 1), second
    assert all(_verifies(entry) for entry in _entries(cache))
    third = _run(cache)
    assert (third["compiled"], third["warnings"], third["error"] < 1e-5) == (0, [], True), third


def test_truncated_object_is_rebuilt(cache: Path) -> None:
    obj = _entries(cache)[0].with_suffix(".o")
    data = obj.read_bytes()
    obj.write_bytes(data[: len(data) // 2])
    _expect_rebuilt(cache, f"bytes, its entry says {len(data)}")


def test_flipped_constant_is_rebuilt(cache: Path) -> None:
    # The step's 1.5, a float constant of the forward region's code, made 2.5.
    needle, replacement = struct.pack("<f", 1.5), struct.pack("<f", 2.5)
    holders = [e for e in _entries(cache) if needle in e.with_suffix(".o").read_bytes()]
    assert holders, "no object holds the constant 1.5"
    obj = holders[0].with_suffix(".o")
    obj.write_bytes(obj.read_bytes().replace(needle, replacement))
    _expect_rebuilt(cache, "checksum")


def test_another_regions_object_is_rebuilt(cache: Path) -> None:
    first, second, *_ = _entries(cache)
    shutil.copyfile(second.with_suffix(".o"), first.with_suffix(".o"))
    _expect_rebuilt(cache, "its entry says")


def test_another_regions_entry_is_rebuilt(cache: Path) -> None:
    first, second, *_ = _entries(cache)
    for suffix in (".o", ".sig"):
        shutil.copyfile(second.with_suffix(suffix), first.with_suffix(suffix))
    _expect_rebuilt(cache, "written for another key")


def _edit_result_dims(entry: Path) -> None:
    """The first result's static dims times 64."""
    sig = entry.with_suffix(".sig")
    lines = sig.read_text().split("\n")
    at = lines.index(next(line for line in lines if line.startswith("results "))) + 1
    words = lines[at].split()
    # <dtype> <summed> <rank> <dims...>
    words[3:] = [w if ":" in w else str(int(w) * 64) for w in words[3:]]
    assert words != lines[at].split(), f"no static result dim in {lines[at]!r}"
    lines[at] = " ".join(words)
    sig.write_text("\n".join(lines))


def _entry_with_static_result(cache: Path) -> Path:
    for entry in _entries(cache):
        text = entry.with_suffix(".sig").read_text()
        results = text.split("results ", 1)[1].split("\n")[1:]
        if any(not w.count(":") for line in results for w in line.split()[3:]):
            return entry
    raise AssertionError("no entry has a static result dim")


def test_edited_signature_is_rebuilt(cache: Path) -> None:
    _edit_result_dims(_entry_with_static_result(cache))
    _expect_rebuilt(cache, "checksum")


def test_signature_other_than_the_functions_is_rebuilt(cache: Path) -> None:
    # Checksum made right: the check against the function's analysis finds it.
    entry = _entry_with_static_result(cache)
    _edit_result_dims(entry)
    _rechecksum(entry)
    _expect_rebuilt(cache, "signature of its entry is not the function's")


def test_unlinkable_object_names_the_missing_symbol(cache: Path) -> None:
    # An undefined symbol renamed to one no library defines, checksum made
    # right: ORC's reason (reported to its session, not returned by the
    # lookup) reaches the warning.
    for entry in _entries(cache):
        obj = entry.with_suffix(".o")
        data = obj.read_bytes()
        for name in (b"expf", b"tanhf", b"memcpy", b"memset", b"malloc", b"free"):
            if b"\0" + name + b"\0" in data:
                missing = name[:-1] + b"Q"
                obj.write_bytes(data.replace(b"\0" + name + b"\0", b"\0" + missing + b"\0"))
                _rechecksum(entry)
                _expect_rebuilt(cache, f"Symbols not found: [ {missing.decode()} ]")
                return
    pytest.fail("no object calls a library function")


def test_read_only_filled_cache_dir_loads_and_compiles_into_memory(tmp_path: Path) -> None:
    # A region on disk loads; a new one compiles into memory, one warning.
    first = _run(tmp_path, outlined=("step",))
    assert (first["compiled"], first["warnings"]) == (1, []), first
    run = _run(tmp_path, read_only=True, outlined=("step", "other"))
    assert run["error"] < 1e-5, run
    assert (run["disk_hits"], run["compiled"]) == (1, 1), run
    assert len(run["warnings"]) == 1, run
    assert "cannot write to the cache directory" in run["warnings"][0], run
    assert "kept in memory" in run["warnings"][0], run


def test_uncreatable_cache_dir_keeps_code_in_memory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    run = _run(tmp_path / "file" / "cache", outlined=("step", "other"))
    assert run["error"] < 1e-5 and run["compiled"] == 2, run
    assert len(run["warnings"]) == 1, run
    assert "cannot create the directory" in run["warnings"][0], run


@pytest.mark.parametrize("codegen", [False, True])
def test_read_only_filled_cache_dir_is_no_compile_failure(cache: Path, codegen: bool) -> None:
    # It once failed torch.compile with BackendCompilerFailed, codegen or not.
    run = _run(cache, codegen=codegen, read_only=True)
    assert run["error"] < 1e-5, run
    assert run["warnings"] == [], run


def _expect_refused(run: dict, cache: Path, reason: str) -> str:
    """The process compiled into memory, loading and discarding nothing,
    with one warning naming `cache` and `reason`; returns the warning."""
    assert run["error"] < 1e-5, run
    assert (run["disk_hits"], run["disk_discarded"]) == (0, 0), run
    assert len(run["warnings"]) == 1, run
    warning = run["warnings"][0]
    assert f"fxmlir JIT: not using the cache directory '{cache}'" in warning, warning
    assert reason in warning, warning
    assert "kept in memory for this process only" in warning, warning
    assert "discarded" not in warning, warning
    return warning


def test_file_as_cache_dir_keeps_code_in_memory(tmp_path: Path) -> None:
    # It once warned of discarded entries that never existed, one per region.
    file = tmp_path / "file"
    file.write_text("not a cache")
    run = _run(file, outlined=("step", "other"))
    _expect_refused(run, file, "it is a file, not a directory")
    assert run["compiled"] == 2, run
    assert file.read_text() == "not a cache"


def test_cache_dir_writable_by_others_is_refused(tmp_path: Path) -> None:
    # Created private, entries included; made writable by all, its entry,
    # which another user could have planted, is not loaded.
    cache = tmp_path / "cache"
    first = _run(cache, outlined=("step",))
    assert (first["compiled"], first["warnings"]) == (1, []), first
    assert cache.stat().st_mode & 0o777 == 0o700
    entries = sorted(p.name for p in cache.iterdir())
    assert len(entries) == 2, entries
    assert all((cache / name).stat().st_mode & 0o777 == 0o600 for name in entries), entries
    cache.chmod(0o777)
    run = _run(cache, outlined=("step",))
    warning = _expect_refused(run, cache, "writable by group or others (mode 0777)")
    assert f"chmod go-w '{cache}'" in warning, warning
    assert run["compiled"] == 1, run
    assert sorted(p.name for p in cache.iterdir()) == entries
