"""fxmlir's logs, through torch._logging like torch's own.

    TORCH_LOGS=fxmlir         INFO: one line per round trip, the routing of torch.compile
    TORCH_LOGS=+fxmlir        DEBUG as well (fallback tracebacks)
    TORCH_LOGS=fxmlir_ir      artifact: each round trip's module before and after its passes
    TORCH_LOGS=fxmlir_summary artifact: a table of the process's round trips, at exit
    TORCH_TRACE=dir           structured trace (tlparse): each round trip's passes, fused
                              ops and times, its final module, and each fallback

Torch parses TORCH_LOGS when it is imported, so the names must be registered
by then: the startup hook (fxmlir._autoload) calls register() while torch
sets up its logging. Without the hook, `fxmlir` and `+fxmlir` still work
(torch accepts any module name) but the artifacts are unknown to torch.
"""

from __future__ import annotations

import atexit
import logging
from typing import Any, Callable

from fxmlir.report import RoundTripRecord, format_table, fused_text, record_rows

LOG = "fxmlir"
ARTIFACTS = {
    "fxmlir_ir": "fxmlir: each round trip's module as imported and after its passes",
    "fxmlir_summary": "fxmlir: a table of every round trip of the process, printed at exit",
}

log = logging.getLogger(LOG)


def register() -> None:
    """Registers the `fxmlir` log and its artifacts with torch._logging
    (idempotent). Imports only torch._logging._internal, so it can run
    while torch itself is being imported."""
    from torch._logging._internal import log_registry, register_artifact, register_log

    if not log_registry.is_log(LOG):
        register_log(LOG, LOG)
    for name, description in ARTIFACTS.items():
        if not log_registry.is_artifact(name):
            register_artifact(name, description, visible=True, off_by_default=True)


def _artifact(name: str) -> logging.Logger | None:
    """The artifact's logger when TORCH_LOGS (or set_logs) names it, else None."""
    import torch._logging
    from torch._logging._internal import log_state

    register()
    if not log_state.is_artifact_enabled(name):
        return None
    return torch._logging.getArtifactLogger(LOG, name)


def wants_ir() -> bool:
    """Whether the fxmlir_ir artifact logs each module as imported."""
    return _artifact("fxmlir_ir") is not None


def _trace(name: str, payload: Callable[[], Any], encoding: str = "json") -> None:
    """A structured-trace artifact (no-op unless TORCH_TRACE is set)."""
    from torch._logging import trace_structured

    trace_structured("artifact", metadata_fn=lambda: {"name": name, "encoding": encoding},
                     payload_fn=payload)


# The round trips of this process, kept only while the summary is asked for.
_records: list[RoundTripRecord] = []


def round_trip_done(record: RoundTripRecord, summary: dict[str, Any],
                    module_before: Callable[[], str], module_after: Callable[[], str]) -> None:
    """Logs a finished round trip: the INFO line, the IR artifact, the
    structured trace and the summary's row; its times go to the parts the
    slow-compile warning names."""
    from fxmlir import progress  # here: progress imports this module

    progress.round_trip_times(summary["time_ms"])
    fused = record.fused_text if record.fused_ops else "no new fusions"
    if record.fused_earlier:
        fused += f"; fused earlier: {fused_text(record.fused_earlier)}"
    log.info("fxmlir: %s round trip: %d ops -> %d ops (%s) in %.1f ms", record.graph,
             record.ops_before, record.ops_after, fused, record.time_ms)
    ir = _artifact("fxmlir_ir")
    if ir is not None:
        ir.debug("fxmlir: %s imported:\n%s\nfxmlir: %s after its passes:\n%s", record.graph,
                 module_before(), record.graph, module_after())
    slug = record.graph.replace("/", "_")
    _trace(f"fxmlir_{slug}_round_trip", lambda: summary)
    _trace(f"fxmlir_{slug}_final_mlir", module_after, encoding="string")
    _keep(record)


def fallback(record: RoundTripRecord) -> None:
    """Logs a round trip that kept the original graph, from the except
    clause that caught its failure (the warning itself is the caller's)."""
    log.debug("fxmlir: %s round trip failure", record.graph, exc_info=True)
    _trace(f"fxmlir_{record.graph.replace('/', '_')}_fallback",
           lambda: {"graph": record.graph, "stage": record.stage, "reason": record.fallback})
    _keep(record)


def _keep(record: RoundTripRecord) -> None:
    if _artifact("fxmlir_summary") is None:
        return
    if not _records:
        atexit.register(_log_summary)
    _records.append(record)


def _log_summary() -> None:
    summary = _artifact("fxmlir_summary")
    if summary is not None:
        summary.debug("fxmlir: round trips of this process\n%s",
                      format_table(record_rows(_records)))
