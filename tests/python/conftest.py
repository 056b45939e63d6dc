"""Shared fixtures of the pytest suite."""

import pytest
import torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles from scratch. Without this, compiled code objects
    shared across tests (one model class, parametrized by device and backend)
    pile up cache entries until Dynamo's recompile limit (8 per code object)
    fails the later `fullgraph=True` compiles."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
