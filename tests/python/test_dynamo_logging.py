"""Dynamo skips transformers' logger.warning_once for fxmlir, and torch's
compile log keeps working with a function in ignore_logging_functions."""

from __future__ import annotations

import functools
import json
import logging

import pytest
import torch
import torch._dynamo.utils as dynamo_utils

import fxmlir
from fxmlir import dynamo_logging


@functools.lru_cache(None)
def _a_cached_logging_function(message: str) -> None:  # as transformers' warning_once
    logging.getLogger("test").warning(message)


def _config_dump_as_torch_2_11() -> str:
    """torch 2.11's dump: sets as sorted lists, ignore_logging_functions kept."""
    config = torch._dynamo.config.get_config_copy()
    return json.dumps({key: sorted(value, key=id) if isinstance(value, set) else value
                       for key, value in config.items()
                       if key == "ignore_logging_functions"}, sort_keys=True)


def test_a_dump_that_cannot_write_the_set_leaves_it_out(monkeypatch):
    monkeypatch.setattr(dynamo_utils, "_get_dynamo_config_for_logging",
                        _config_dump_as_torch_2_11)
    with torch._dynamo.config.patch(ignore_logging_functions={_a_cached_logging_function}):
        with pytest.raises(TypeError):
            dynamo_utils._get_dynamo_config_for_logging()
        dynamo_logging.keep_compile_metrics_serializable()
        assert json.loads(dynamo_utils._get_dynamo_config_for_logging()) == {
            "ignore_logging_functions": []}
        # Dynamo itself still skips the function.
        assert torch._dynamo.config.ignore_logging_functions == {_a_cached_logging_function}
        wrapped = dynamo_utils._get_dynamo_config_for_logging
        dynamo_logging.keep_compile_metrics_serializable()  # wraps once
        assert dynamo_utils._get_dynamo_config_for_logging is wrapped


def test_a_dump_that_writes_the_set_is_kept(monkeypatch):
    def dump() -> str:
        return "{}"

    monkeypatch.setattr(dynamo_utils, "_get_dynamo_config_for_logging", dump)
    dynamo_logging.keep_compile_metrics_serializable()
    assert dynamo_utils._get_dynamo_config_for_logging is dump


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_compile_skipping_a_logging_function_logs_no_error():
    """On this torch: the compile's metrics log no TypeError traceback
    (torch's loggers do not propagate to pytest's caplog)."""
    def step(x):
        _a_cached_logging_function("inside a compiled frame")
        return torch.tanh(x) * 2

    records = _Records()
    dynamo_log = logging.getLogger("torch._dynamo")
    torch._dynamo.reset()
    with torch._dynamo.config.patch(ignore_logging_functions={_a_cached_logging_function}):
        dynamo_logging.keep_compile_metrics_serializable()
        dynamo_log.addHandler(records)
        try:
            compiled = torch.compile(step, backend=fxmlir.backend(stages=["forward"]))
            x = torch.randn(8)
            torch.testing.assert_close(compiled(x), step(x))
        finally:
            dynamo_log.removeHandler(records)
    assert not records.messages
