"""One round trip: FX graph -> fxmlir module (import) -> the stage's passes
(run by the core) -> FX graph (export).

Any failure falls back to the original graph (fxmlir.fallback's policy), with
the failure's folder written (fxmlir.failure_dump); a graph's JIT regions
compile ahead, during the round trip (fxmlir.compile_ahead).
"""

from __future__ import annotations

import contextlib
import gc
import json
import time
from typing import Iterator, Mapping

import torch.fx as fx

from fxmlir import _C, cpu_products, explain, logs, progress
from fxmlir.autocast import make_casts_explicit
from fxmlir.compile_ahead import compile_regions
from fxmlir.config import Options
from fxmlir.dump import Dumper
from fxmlir.exporter import export_graph
from fxmlir.failure_dump import dump_failure, dump_region_failure
from fxmlir.fallback import FallbackError, FallbackWarning, fall_back  # noqa: F401
from fxmlir.importer import import_graph
from fxmlir.op_graph_dot import module_dot
from fxmlir.op_kinds import is_fused_op
from fxmlir.passes import EAGER_RANDOM, OUTLINE, Selection
from fxmlir.report import RoundTripRecord
from fxmlir.standalone import COMPARE_SOURCE, standalone_source
from fxmlir.subgraph_bodies import round_trip_bodies

# The device types JIT regions are outlined on (where the selection runs
# fxmlir-outline-jit-regions): CPU and CUDA tensors. On an H200 regions made
# the bf16 autocast steps 1.10x (GPT-2) and 1.45x (LLaMA-style) faster than
# without them, f32 LLaMA-style 1.07x, f32 GPT-2 0.99x (docs/benchmarks.md).
REGION_DEVICE_TYPES = ["cpu", "cuda"]


def _op_counts(module: _C.Module) -> dict[str, int]:
    return {k: v for k, v in module.op_counts().items() if k != "func.return"}


def _fused_counts(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if is_fused_op(k)}


def round_trip(gm: fx.GraphModule, graph_id: str, stage: str, options: Options,
               latest: list[str | _C.Module] | None = None,
               label: str | None = None,
               input_names: Mapping[str, str] | None = None) -> fx.GraphModule:
    """The graph after its round trip with the stage's passes; raises on any
    failure. `latest`, if given, receives the module (its JSON graph, then the
    object) for
    failure dumps. `label` names the graph in dumps (the stage by default; a
    subgraph body's name). `input_names` labels placeholders in the dumped
    op graph (parameter names by placeholder name)."""
    label = label or stage
    with progress.timed(f"{graph_id}/{label}: round trip of {len(gm.graph.nodes)} nodes"), \
            _collector_paused():
        return _round_trip(gm, graph_id, stage, options, [] if latest is None else latest,
                           label, input_names)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused for the round trip: it allocates tens
    of thousands of short-lived objects (JSON values, FX nodes) that free
    themselves, and each collection they would set off walks all of torch's
    objects too (3.5 of 63 ms on the 1004-node round-trip benchmark)."""
    if not gc.isenabled():  # paused by the caller, or an enclosing round trip
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _round_trip(gm: fx.GraphModule, graph_id: str, stage: str, options: Options,
                latest: list[str | _C.Module], label: str,
                input_names: Mapping[str, str] | None) -> fx.GraphModule:
    if stage == "before_autodiff":  # AOTAutograd's graphs have explicit casts
        gm = make_casts_explicit(gm)
    gm = round_trip_bodies(gm, lambda body, name: round_trip_or_fallback(
        body, f"{graph_id}/{label}", stage, options, label=name))
    dumper = Dumper(options.dump_dir, graph_id, label, stage)
    times: dict[str, float] = {}
    context = _C.Context()
    start = time.perf_counter()
    imported = import_graph(gm, label, context.is_registered_op)
    graph_json = json.dumps(imported.graph)
    latest.append(graph_json)
    module = context.import_graph(graph_json, f"{graph_id}/{label}")
    latest.append(module)
    # The module as imported, before its passes change it: for the dump and
    # TORCH_LOGS=fxmlir_ir alone (printing costs what the import does).
    imported_text = module.print(fx_names=True) if dumper.enabled or logs.wants_ir() else ""
    dumper.write("input.mlir", imported_text)
    times["import"] = (time.perf_counter() - start) * 1e3
    ops_before = _op_counts(module)
    dumper.module("imported", lambda: module.print(fx_names=True))
    selection = _selection(options)
    explain.collect(module, selection, REGION_DEVICE_TYPES, stage,
                    f"{graph_id}/{label}")
    passes = list(selection.for_stage(stage))
    if passes:
        # The stage's pipeline, built by the core; one PassManager, whose
        # instrumentation reports each pass's time and, when dumping, the
        # module it left.
        runs = module.run_stage(stage, **selection.stage_options(stage),
                                region_device_types=REGION_DEVICE_TYPES,
                                widened_product_dtypes=cpu_products.widened_dtypes(),
                                snapshots=dumper.enabled)
        for run in runs:
            times[run.pass_name] = times.get(run.pass_name, 0.0) + run.milliseconds
            dumper.module(run.pass_name, run.module_after)
    regions, regions_failed = compile_regions(
        module, times, f"{graph_id}/{label}", options.strict,
        lambda region, reason: dump_region_failure(options, graph_id, label, stage, region,
                                                   reason))
    start = time.perf_counter()
    module_json = json.loads(module.to_json())
    # AOTAutograd's graphs run as they are: their sums may reuse a buffer.
    exported = export_graph(module_json, imported, gm, regions,
                            in_place_sums=stage != "before_autodiff")
    times["export"] = (time.perf_counter() - start) * 1e3
    ops_after = _op_counts(module)
    summary = {
        "graph": graph_id, "label": label, "stage": stage, "passes": passes,
        "ops_before": ops_before, "ops_after": ops_after,
        "fused_ops": _fused_counts(ops_after),
        "regions_left_to_eager": regions_failed,
        "typed_ops_imported": imported.typed_ops,
        "generic_ops_imported": imported.generic_ops,
        "mutation_ops_imported": imported.mutation_ops,
        "time_ms": {k: round(v, 3) for k, v in times.items()},
    }
    dumper.write("final.mlir", lambda: module.print(fx_names=True))
    dumper.graph(lambda: module_dot(module_json, imported.func_name, gm, input_names or {}),
                 sum(ops_after.values()))
    dumper.write("fx_before.py", lambda: standalone_source(gm, f"{graph_id}/{label}", "before"))
    dumper.write("fx_after.py",
                 lambda: standalone_source(exported, f"{graph_id}/{label}", "after"))
    dumper.write("compare.py", COMPARE_SOURCE)
    dumper.finish(summary)
    logs.round_trip_done(RoundTripRecord.from_summary(summary), summary,
                         lambda: imported_text, lambda: str(module))
    return exported


def _selection(options: Options) -> Selection:
    """The passes chosen, with the passes of the eager_random and codegen
    settings: codegen unset follows the pass selection (JIT regions on with
    the default pipelines, edited or not; off with an explicit list of passes
    without fxmlir-outline-jit-regions)."""
    selection = options.passes
    if options.eager_random:
        selection = selection.adding(EAGER_RANDOM)
    if options.codegen is True:
        selection = selection.adding(OUTLINE)
    elif options.codegen is False:
        selection = selection.removing(OUTLINE)
    return selection




def round_trip_or_fallback(gm: fx.GraphModule, graph_id: str, stage: str,
                           options: Options, label: str | None = None,
                           input_names: Mapping[str, str] | None = None) -> fx.GraphModule:
    """round_trip(), or `gm` itself with a FallbackWarning if that fails;
    when only a JIT region fails to compile, the round trip without JIT
    regions."""
    latest: list[str | _C.Module] = []
    label = label or stage
    try:
        return round_trip(gm, graph_id, stage, options, latest, label, input_names)
    except FallbackError:  # strict, from a JIT region or a subgraph body
        raise
    except Exception as e:  # noqa: BLE001 - any failure must fall back
        reason = f"{type(e).__name__}: {e}"
        where = dump_failure(options, graph_id, label, stage, reason, gm, latest)
        fall_back(f"fxmlir: {graph_id}/{label} graph kept as is: {reason} ({where})",
                  options.strict, e)
        logs.fallback(RoundTripRecord(graph=f"{graph_id}/{label}", stage=stage,
                                      fallback=reason))
        return gm
