"""One round trip: FX graph -> fxmlir module -> passes -> FX graph.

Any failure falls back to the original graph with a warning naming the graph,
the node or op and the reason, and the offending module dumped: training
never stops because of fxmlir.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

import torch.fx as fx

from fxmlir import _C
from fxmlir.autocast import make_casts_explicit
from fxmlir.bodies import round_trip_bodies
from fxmlir.config import Options
from fxmlir.dump import Dumper
from fxmlir.exporter import export_graph
from fxmlir.importer import import_graph

log = logging.getLogger("fxmlir")


class FallbackWarning(UserWarning):
    """fxmlir could not handle a graph and used the original one."""


def _op_counts(module: _C.Module) -> dict[str, int]:
    return {k: v for k, v in module.op_counts().items() if k != "func.return"}


def _fused_counts(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items()
            if k.startswith("fxmlir.") and not k.startswith(("fxmlir.aten.", "fxmlir.call"))
            and k not in ("fxmlir.none", "fxmlir.get_attr")}


def round_trip(gm: fx.GraphModule, graph_id: str, stage: str, options: Options,
               latest: list[str | _C.Module] | None = None,
               label: str | None = None) -> fx.GraphModule:
    """The graph after its round trip with the stage's passes; raises on any
    failure. `latest`, if given, receives the module (text, then object) for
    failure dumps. `label` names the graph in dumps (the stage by default; a
    subgraph body's name)."""
    latest = [] if latest is None else latest
    label = label or stage
    if stage == "before_autodiff":  # AOTAutograd's graphs have explicit casts
        gm = make_casts_explicit(gm)
    gm = round_trip_bodies(gm, lambda body, name: round_trip_or_fallback(
        body, f"{graph_id}/{label}", stage, options, label=name))
    dumper = Dumper(options.dump_dir, graph_id, label)
    times: dict[str, float] = {}
    context = _C.Context()
    start = time.perf_counter()
    imported = import_graph(gm, label, context.is_registered_op)
    latest.append(imported.text)
    dumper.write("input.mlir", imported.text)
    module = context.parse(imported.text, f"{graph_id}/{label}.mlir")
    latest.append(module)
    times["import"] = (time.perf_counter() - start) * 1e3
    ops_before = _op_counts(module)
    dumper.module("imported", str(module) if dumper.enabled else "")
    passes = options.passes.for_stage(stage)
    if passes:
        # One PassManager for the stage; MLIR's instrumentation reports each
        # pass's time and, when dumping, the module it left.
        for run in module.run_pipeline(options.passes.pipeline(stage),
                                       snapshots=dumper.enabled):
            times[run.pass_name] = times.get(run.pass_name, 0.0) + run.milliseconds
            dumper.module(run.pass_name, run.module_after)
    start = time.perf_counter()
    exported = export_graph(json.loads(module.to_json()), imported, gm)
    times["export"] = (time.perf_counter() - start) * 1e3
    ops_after = _op_counts(module)
    if dumper.enabled:
        dumper.write("final.mlir", str(module))
        dumper.write("graph.dot", module.to_dot())
        dumper.write("fx_before.py", gm.code)
        dumper.write("fx_after.py", exported.code)
        dumper.summary({
            "graph": graph_id, "stage": stage, "passes": list(passes),
            "ops_before": ops_before, "ops_after": ops_after,
            "fused_ops": _fused_counts(ops_after),
            "typed_ops_imported": imported.typed_ops,
            "generic_ops_imported": imported.generic_ops,
            "mutation_ops_imported": imported.mutation_ops,
            "time_ms": {k: round(v, 3) for k, v in times.items()},
        })
    log.info("fxmlir: %s/%s round trip: %d ops -> %d ops (%s) in %.1f ms", graph_id, label,
             sum(ops_before.values()), sum(ops_after.values()),
             dict(Counter(_fused_counts(ops_after))) or "no fusions", sum(times.values()))
    return exported


def round_trip_or_fallback(gm: fx.GraphModule, graph_id: str, stage: str,
                           options: Options, label: str | None = None) -> fx.GraphModule:
    """round_trip(), or `gm` itself with a FallbackWarning if that fails."""
    latest: list[str | _C.Module] = []
    label = label or stage
    try:
        return round_trip(gm, graph_id, stage, options, latest, label)
    except Exception as e:  # noqa: BLE001 - any failure must fall back
        where = _dump_failure(options, graph_id, label, f"# {type(e).__name__}: {e}\n{gm.code}",
                              latest)
        warnings.warn(f"fxmlir: {graph_id}/{label} graph kept as is: {type(e).__name__}: "
                      f"{e} ({where})", FallbackWarning, stacklevel=2)
        log.debug("fxmlir: round trip failure", exc_info=True)
        return gm


def _dump_failure(options: Options, graph_id: str, label: str, graph: str,
                  latest: list[str | _C.Module]) -> str:
    """Writes the failed graph and module; says where, or why it could not:
    the fallback itself must never fail."""
    folder = options.dump_dir or Path(tempfile.gettempdir()) / "fxmlir-failures"
    folder = folder / graph_id / label
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "failed-graph.py").write_text(graph)
        if latest:  # the module as the failing step left it
            (folder / "failed-module.mlir").write_text(str(latest[-1]))
    except Exception as e:  # noqa: BLE001 - e.g. the folder is a file, or full
        return f"no dump written to {folder}: {type(e).__name__}: {e}"
    return f"dumped to {folder}"
