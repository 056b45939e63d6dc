"""Logging calls Dynamo must not trace: transformers' `logger.warning_once`,
and keeping torch's own compile log working once it is skipped."""

from __future__ import annotations

import logging

import torch

log = logging.getLogger("fxmlir")


def skip_transformers_warning_once() -> None:
    """Has Dynamo skip transformers' `logger.warning_once` (a method it adds
    to logging.Logger) instead of breaking the graph there. GPT2LMHeadModel
    calls it in every forward (its `loss_type=None` warning), between the LM
    head and the loss, which then land in two graphs and cannot fuse
    (fxmlir-fuse-linear-cross-entropy). Only that message is lost, inside
    compiled code; a no-op before transformers is imported."""
    warning_once = getattr(logging.Logger, "warning_once", None)
    ignored = torch._dynamo.config.ignore_logging_functions
    if warning_once is not None and warning_once not in ignored:
        ignored.add(warning_once)
        log.debug("fxmlir: Dynamo skips transformers' logger.warning_once")
        keep_compile_metrics_serializable()


def keep_compile_metrics_serializable() -> None:
    """torch 2.11's record of each compile writes Dynamo's config as JSON
    with ignore_logging_functions in it (2.13 leaves that set out), so a
    function in the set made every compile log a TypeError traceback. On
    such a torch its config dump leaves the set out; elsewhere nothing
    changes."""
    utils = torch._dynamo.utils
    dump = getattr(utils, "_get_dynamo_config_for_logging", None)
    if dump is None or getattr(dump, "__fxmlir_wrapped__", False):
        return
    try:
        dump()
        return
    except TypeError:
        pass

    def dump_without_logging_functions() -> str | None:
        with torch._dynamo.config.patch(ignore_logging_functions=set()):
            return dump()

    dump_without_logging_functions.__fxmlir_wrapped__ = True  # type: ignore[attr-defined]
    utils._get_dynamo_config_for_logging = dump_without_logging_functions
    log.debug("fxmlir: Dynamo's compile metrics leave ignore_logging_functions out")
