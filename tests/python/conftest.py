"""Shared fixtures of the pytest suite."""

import os

import pytest
import torch
import torch._functorch.config

# The processes tests start run their round trips too (see no_warm_start_cache);
# torch read the variable at its import: this process is not affected.
os.environ["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles from scratch. Without this, compiled code objects
    shared across tests (one model class, parametrized by device and backend)
    pile up cache entries until Dynamo's recompile limit (8 per code object)
    fails the later `fullgraph=True` compiles."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture(autouse=True)
def no_warm_start_cache():
    """Each test's round trips run: with AOTAutograd's disk cache on
    (fxmlir/stage_cache.py), a graph an earlier test compiled with the same
    settings would come back from it, without the round trips, warnings and
    records the test looks for. test_stage_cache.py turns it on."""
    with torch._functorch.config.patch(enable_autograd_cache=False):
        yield


def pytest_addoption(parser):
    parser.addoption(
        "--cuda-only", action="store_true",
        help="run only the tests that need CUDA (a skipif mark whose reason names "
             "CUDA or a GPU, or a \"cuda\" device parameter): the GPU session's "
             "selection (scripts/gpu_session.sh)")


def _needs_cuda(item) -> bool:
    """A test a machine without CUDA skips, or runs only where there is
    CUDA (a "cuda" device parameter)."""
    params = getattr(item, "callspec", None)
    if params and any(str(value) == "cuda" for value in params.params.values()):
        return True
    return any(any(word in str(mark.kwargs.get("reason", "")) for word in ("CUDA", "GPU"))
               for mark in item.iter_markers("skipif"))


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--cuda-only"):
        return
    kept = [item for item in items if _needs_cuda(item)]
    config.hook.pytest_deselected(items=[item for item in items if not _needs_cuda(item)])
    items[:] = kept
