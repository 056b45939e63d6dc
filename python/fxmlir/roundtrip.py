"""One round trip: FX graph -> fxmlir module -> passes -> FX graph.

Any failure falls back to the original graph with a warning naming the graph,
the node or op and the reason, and the offending module dumped: training
never stops because of fxmlir. With the `strict` setting (CI) a fallback
raises FallbackError with the same message instead.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping

import torch.fx as fx

from fxmlir import _C, explain, logs, progress
from fxmlir.autocast import make_casts_explicit
from fxmlir.config import Options
from fxmlir.dump import Dumper
from fxmlir.exporter import export_graph
from fxmlir.importer import import_graph
from fxmlir.op_graph_dot import module_dot
from fxmlir.op_kinds import is_fused_op
from fxmlir.passes import EAGER_RANDOM, OUTLINE, Selection
from fxmlir.report import RoundTripRecord
from fxmlir.repro_script import repro_source
from fxmlir.standalone import COMPARE_SOURCE, standalone_source
from fxmlir.subgraph_bodies import round_trip_bodies

# How the text of a region on a CUDA device spells its tensors' device.
_CUDA_DEVICE = '#fxmlir.device<"cuda'


class FallbackWarning(UserWarning):
    """fxmlir could not handle a graph and used the original one."""


class FallbackError(RuntimeError):
    """A fallback under the `strict` setting: the FallbackWarning's message,
    raised."""


def fall_back(message: str, strict: bool, cause: BaseException | None = None,
              stacklevel: int = 2) -> None:
    """Warns of a fallback, or raises it under `strict`. `stacklevel` counts
    from the caller, as in warnings.warn."""
    if strict:
        raise FallbackError(message) from cause
    warnings.warn(message, FallbackWarning, stacklevel=stacklevel + 1)


def _op_counts(module: _C.Module) -> dict[str, int]:
    return {k: v for k, v in module.op_counts().items() if k != "func.return"}


def _fused_counts(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if is_fused_op(k)}


def round_trip(gm: fx.GraphModule, graph_id: str, stage: str, options: Options,
               latest: list[str | _C.Module] | None = None,
               label: str | None = None,
               input_names: Mapping[str, str] | None = None) -> fx.GraphModule:
    """The graph after its round trip with the stage's passes; raises on any
    failure. `latest`, if given, receives the module (text, then object) for
    failure dumps. `label` names the graph in dumps (the stage by default; a
    subgraph body's name). `input_names` labels placeholders in the dumped
    op graph (parameter names by placeholder name)."""
    label = label or stage
    with progress.timed(f"{graph_id}/{label}: round trip of {len(gm.graph.nodes)} nodes"):
        return _round_trip(gm, graph_id, stage, options, [] if latest is None else latest,
                           label, input_names)


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
    latest.append(imported.text)
    dumper.write("input.mlir", imported.text)
    module = context.parse(imported.text, f"{graph_id}/{label}.mlir")
    latest.append(module)
    times["import"] = (time.perf_counter() - start) * 1e3
    ops_before = _op_counts(module)
    dumper.module("imported", lambda: module.print(fx_names=True))
    explain.collect(module, options.passes, stage, f"{graph_id}/{label}")
    selection = _selection(options)
    passes = list(selection.for_stage(stage))
    if passes:
        # The stage's pipeline, built by the core; one PassManager, whose
        # instrumentation reports each pass's time and, when dumping, the
        # module it left.
        pipeline = selection.pipeline(stage, _region_device_types(options))
        for run in module.run_pipeline(pipeline, snapshots=dumper.enabled):
            times[run.pass_name] = times.get(run.pass_name, 0.0) + run.milliseconds
            dumper.module(run.pass_name, run.module_after)
    regions = _compile_regions(module, times, f"{graph_id}/{label}", options.strict)
    start = time.perf_counter()
    module_json = json.loads(module.to_json())
    exported = export_graph(module_json, imported, gm, regions)
    times["export"] = (time.perf_counter() - start) * 1e3
    ops_after = _op_counts(module)
    summary = {
        "graph": graph_id, "label": label, "stage": stage, "passes": passes,
        "ops_before": ops_before, "ops_after": ops_after,
        "fused_ops": _fused_counts(ops_after),
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
                         lambda: imported.text, lambda: str(module))
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


def _region_device_types(options: Options) -> tuple[str, ...]:
    """The device types JIT regions are outlined on: CPU tensors (the
    pipeline's default) unless codegen is asked for, which adds CUDA, until
    a GPU run measures its regions."""
    return ("cpu", "cuda") if options.codegen is True else ()


def _compile_regions(module: _C.Module, times: dict[str, float], graph: str,
                     strict: bool) -> dict[str, str]:
    """Compiles each JIT region of `module` now, as mlir_jit would at its
    first call (which then finds the code cached). A region that does not
    compile is put back in the graph, its ops left to eager, with a warning
    naming it and why: it costs only itself, not the graph's other regions.
    Returns the text of the regions kept, by name."""
    if "fxmlir.mlir_jit" not in module.op_counts():
        return {}
    from fxmlir import jit  # loads the op library; only needed with regions

    start = time.perf_counter()
    regions = jit.region_functions(module)
    with progress.timed(f"{graph}: compiling {len(regions)} JIT regions"):
        failures = _compile_each(regions)
    times["jit"] = (time.perf_counter() - start) * 1e3
    for name, reason in failures.items():
        module.inline_jit_region(name)
        del regions[name]
        fall_back(f"fxmlir: {graph}: JIT region @{name} left to eager: {reason}", strict,
                  stacklevel=3)
    return regions


def _compile_each(regions: dict[str, str]) -> dict[str, str]:
    """Compiles the regions in parallel, one per core (the JIT releases the
    GIL and gives each compile its own context); returns why each region
    that did not compile failed, in graph order."""
    workers = min(len(regions), _usable_cores())
    if workers <= 1:
        reasons = [_compile_one(name, text) for name, text in regions.items()]
    else:
        with ThreadPoolExecutor(workers, thread_name_prefix="fxmlir-jit") as pool:
            reasons = list(pool.map(_compile_one, regions.keys(), regions.values()))
    return {name: reason for name, reason in zip(regions, reasons) if reason is not None}


def _usable_cores() -> int:
    """The cores this process may run on (a container's, not the host's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _compile_one(name: str, text: str) -> str | None:
    """Compiles one region; None, or why it does not compile."""
    try:
        # A CUDA region compiles for its device at its first call; its
        # lowering is checked now.
        if _CUDA_DEVICE in text:
            _C.jit_check_cuda(text, name)
        else:
            _C.jit_compile_cpu(text, name)
    except _C.Error as e:
        return str(e)
    return None


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
        where = _dump_failure(options, graph_id, label, stage, reason, gm, latest)
        fall_back(f"fxmlir: {graph_id}/{label} graph kept as is: {reason} ({where})",
                  options.strict, e)
        logs.fallback(RoundTripRecord(graph=f"{graph_id}/{label}", stage=stage,
                                      fallback=reason))
        return gm


def _dump_failure(options: Options, graph_id: str, label: str, stage: str, reason: str,
                  gm: fx.GraphModule, latest: list[str | _C.Module]) -> str:
    """Writes the failed graph's repro.py and the module; says where, or why
    it could not: the fallback itself must never fail."""
    root = options.dump_dir or Path(tempfile.gettempdir()) / "fxmlir-failures"
    dumper = Dumper(root, graph_id, label, stage)

    def repro() -> str:
        try:
            return repro_source(gm, f"{graph_id}/{label}", stage, reason, options)
        except Exception as e:  # noqa: BLE001 - the graph's code is still worth having
            return f"# {reason}\n# no runnable repro: {type(e).__name__}: {e}\n{gm.code}"

    # The module as the failing step left it.
    dumper.failed(reason, repro, (lambda: str(latest[-1])) if latest else None)
    if dumper.error is not None:  # e.g. a folder is a file, or the disk full
        return f"no dump written to {root}: {dumper.error}"
    return f"dumped to {dumper.folder}"
