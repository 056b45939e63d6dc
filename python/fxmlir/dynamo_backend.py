"""The `fxmlir` torch.compile backend.

Round trips the Dynamo graph before autodiff, then hands it to AOTAutograd
whose forward and backward compilers round-trip the forward and backward
graphs (OneFlow's IRRoundTripBeforeAD and IRRoundTrip).
"""

from __future__ import annotations

import functools
import logging
import re
import weakref
from typing import TYPE_CHECKING, Any, Callable, Mapping

import torch
import torch.fx as fx
from torch._dynamo.backends.common import aot_autograd
from torch._dynamo.exc import RestartAnalysis
from torch._functorch.partitioners import default_partition, min_cut_rematerialization_partition

from fxmlir import fallback, float_inputs, logs, missing_tangents, returned_logits, stage_cache
from fxmlir.config import REMOVED, BackendOptions, Options
from fxmlir.dump import summary_fields
from fxmlir.dynamo_logging import skip_transformers_warning_once
from fxmlir.failure_dump import dump_run_failure, dump_trace_failure
from fxmlir.fallback import FallbackError
from fxmlir.memory import saved_for_backward
from fxmlir.mutation import writes_an_input
from fxmlir.partition import prepared
from fxmlir.roundtrip import round_trip_or_fallback
from fxmlir.runtime_fallback import guarded, warn_traced_fallback

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

log = logging.getLogger("fxmlir")
logs.register()  # when the startup hook did not (python -S, a source checkout)
skip_transformers_warning_once()

# How many graphs each compile has handed fxmlir: DDP splits one frame's
# graph into several, all under the same compile id.
_graphs_per_compile: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def _graph_id() -> str:
    """The Dynamo compile id (frame/recompile) and the graph's number in
    that compile: "graph_0_1_0"."""
    context = torch._guards.CompileContext.try_get()
    compile_id = context.compile_id if context is not None else None
    if compile_id is None:
        return "graph"
    number = _graphs_per_compile.get(context, 0)
    _graphs_per_compile[context] = number + 1
    return "graph_" + str(compile_id).replace("/", "_").replace(".", "_") + f"_{number}"


_SOURCE_PARTS = re.compile(r"\._(?:modules|parameters|buffers)\['([^']+)'\]")


def _input_names(gm: fx.GraphModule) -> list[str]:
    """What each placeholder of a Dynamo graph is, in the user's terms: a
    parameter's or buffer's name in its module ("fc1.weight" for
    L['self']._modules['fc1']._parameters['weight']), an argument's name."""
    names = []
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            grapharg = node.meta.get("grapharg")
            source = grapharg.source.name if grapharg is not None and grapharg.source else ""
            source = source() if callable(source) else source
            root = re.match(r"^[LG]\['([^']+)'\](.*)$", source)
            if root is not None:
                path = _SOURCE_PARTS.sub(r".\1", root.group(2))
                source = path[1:] if path.startswith(".") else root.group(1) + path
            names.append(source)
    return names


def _load_fused_ops() -> None:
    """Exported graphs may call torch.ops.fxmlir.*; without the op library
    such graphs fail to export and fall back to the originals."""
    try:
        import fxmlir.ops  # noqa: F401
    except ImportError as e:
        log.warning("fxmlir: fused ops unavailable (%s); fused graphs will fall back", e)


def fxmlir_backend(gm: fx.GraphModule, example_inputs: list[Any],
                   options: Mapping[str, Any] | None = None, mode: str | None = None,
                   ) -> Callable[..., Any]:
    """torch.compile backend; `options` as in fxmlir.config.Options."""
    opts = Options.from_env().updated(options)
    if mode is not None:
        log.info("fxmlir: torch.compile mode=%r has no effect on fxmlir", mode)
    _load_fused_ops()
    specialized = float_inputs.specialize(gm, example_inputs)
    if specialized is None:
        return _compile_step(gm, example_inputs, opts)
    return float_inputs.guarded(specialized,
                                _compile_step(specialized.graph, example_inputs, opts),
                                lambda: _compile_step(gm, example_inputs, opts),
                                "a graph with float inputs")


def _compile_step(gm: fx.GraphModule, example_inputs: list[Any],
                  opts: Options) -> Callable[..., Any]:
    """The graph's round trips before and after autodiff, and AOTAutograd."""
    graph_id = _graph_id()
    names = _input_names(gm)
    graphs = None
    if opts.cudagraphs:
        from fxmlir.cudagraphs import CudaGraphs  # imports Inductor: only when asked

        graphs = CudaGraphs(graph_id, len(example_inputs))
    dynamo_graph = gm
    if "before_autodiff" in opts.stages:
        placeholders = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        gm = round_trip_or_fallback(gm, graph_id, "before_autodiff", opts,
                                    input_names=dict(zip(placeholders, names)))
    # AOTAutograd's primals are the Dynamo graph's inputs, in order.
    primals = {f"primals_{i + 1}": name for i, name in enumerate(names) if name}
    cache = stage_cache.enabled(opts)

    def compiled_run(graph: fx.GraphModule, stage: str,
                     label: str | None = None) -> tuple[fx.GraphModule, Callable[..., Any]]:
        """The stage's graph round-tripped (if the stage is selected) and its
        run, falling back to `graph` at run time."""
        selected = "forward" if stage == "inference" else stage
        label = label or stage
        compiled = graph
        if selected in opts.stages:
            # What the forward saves for backward: its summary's, for `fxmlir report`.
            saved = saved_for_backward(graph) if stage == "forward" else None
            with summary_fields(graph_id, label, saved_for_backward=saved):
                compiled = round_trip_or_fallback(graph, graph_id, stage, opts, label,
                                                  input_names=primals)
        return compiled, guarded(compiled, graph, f"{graph_id}/{label}", opts.strict,
                                 lambda inputs, reason: dump_run_failure(
                                     opts, graph_id, selected, reason, compiled, inputs),
                                 programs=opts.graph_programs)

    def backward_taking_none(graph: fx.GraphModule, full: Callable[..., Any] | None
                             ) -> missing_tangents.Backward:
        return missing_tangents.Backward(
            graph, full, lambda variant, label: compiled_run(variant, "backward", label)[1],
            f"{graph_id}/backward", opts.strict)

    def compiler(stage: str) -> Callable[[fx.GraphModule, list[Any]], Callable[..., Any]]:
        def compile_graph(graph: fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
            fallbacks = fallback.count()
            # A backward whose untaken gradients may be None (not with CUDA
            # graphs, which replay every tangent): compiled at its first call
            # for the tangents that call has, except where the cache stores it.
            takes_none = stage == "backward" and graphs is None
            if takes_none and not cache:
                return backward_taking_none(graph, None)
            compiled, run = compiled_run(graph, stage)
            if takes_none:
                run = backward_taking_none(graph, run)
            if cache:
                return stage_cache.CompiledStage(run, compiled, graph, f"{graph_id}/{stage}",
                                                 opts.strict, fallback.count() == fallbacks,
                                                 programs=opts.graph_programs)
            if graphs is None:
                return run
            if stage == "backward":
                return graphs.backward(graph, run, inputs)
            return graphs.forward(stage, graph, run, inputs)
        return stage_cache.serializable(compile_graph) if cache else compile_graph

    # Min-cut rematerialization (as Inductor and aot_eager): the forward saves
    # what is costly to recompute and the backward recomputes the rest, which
    # its JIT regions fuse; AOTAutograd's default saved more than eager keeps.
    # Not for a graph that writes one of its inputs in place: it may
    # recompute from an input the step has written since (autograd's version
    # check fails). Writes to memory the graph allocates are no such risk.
    partition = default_partition if writes_an_input(dynamo_graph.graph) \
        else min_cut_rematerialization_partition
    partition = prepared(partition)
    aot = aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                       inference_compiler=compiler("inference"), partition_fn=partition)

    def autodiff(graph: fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
        if not cache:
            return _releasing(aot(graph, inputs))
        with stage_cache.caching(graph, opts):  # a warm restart skips AOTAutograd's work
            return _releasing(aot(graph, inputs))

    if gm is dynamo_graph:
        return autodiff(gm, example_inputs)
    try:
        heads = returned_logits.detach(gm)
        compiled = autodiff(gm, example_inputs)
        return returned_logits.reattached(compiled, heads) if heads else compiled
    except RestartAnalysis:  # Dynamo's signal to trace the frame again, not a failure
        raise
    except FallbackError:  # strict: a later stage's fallback, which names that stage
        raise
    except Exception as error:  # the round-tripped graph does not trace: keep Dynamo's
        warn_traced_fallback(f"{graph_id}/before_autodiff", error, opts.strict,
                             lambda reason: dump_trace_failure(opts, graph_id, reason, gm))
        return autodiff(dynamo_graph, example_inputs)


def _releasing(compiled: Callable[..., Any]) -> Callable[..., Any]:
    """`compiled` (AOTAutograd's) with autograd told to pass its backward
    None for the outputs nobody differentiates (fxmlir.missing_tangents)."""
    @functools.wraps(compiled)
    def run(*args: Any) -> Any:
        outputs = compiled(*args)
        missing_tangents.release(outputs)
        return outputs

    return run


def backend(**options: Unpack[BackendOptions]) -> Callable[..., Any]:
    """A torch.compile backend with options, which override the FXMLIR_*
    environment variables; bad ones are errors now, not at the first call:

        torch.compile(model, backend=fxmlir.backend(dump_dir="dumps", strict=True))

    passes: "default", "none", "a,b" (only these), "-a,+b" (edits of each
        stage's default pipeline) or "default,a,-b" (fxmlir.passes.describe()
        lists them); a string or a list.
    stages: where round trips run: before_autodiff, forward, backward.
    dump_dir: a folder for IR dumps (`fxmlir report` / `fxmlir show` read it).
    codegen: JIT regions after autodiff, on CPU and CUDA tensors where the
        cost model says they pay; unset: with the default pipelines; True:
        with any passes; False: none.
    cudagraphs: replay compiled CUDA graphs through torch's CUDA graph trees.
    strict: a fallback raises fxmlir.fallback.FallbackError (for CI).
    eager_random: fused dropouts draw eager's masks (eager's losses).
    graph_programs: compiled graphs' bodies run as C++ op calls (default);
        False: as their generated Python.
    Switches take True/False or "1"/"0"/"true"/"false"/"yes"/"no"/"on"/"off".
    """
    Options.from_env().updated(options)  # reject bad options now, not at first call
    skip_transformers_warning_once()  # transformers imported since this module
    # Equal options give the same callable: Dynamo recompiles for a new one.
    # Removed settings are ignored (and warned of), so they key nothing.
    key = tuple(sorted((name, tuple(value) if isinstance(value, list) else value)
                       for name, value in options.items() if name not in REMOVED))
    return _compiler(key)


@functools.lru_cache(maxsize=64)
def _compiler(options: tuple[tuple[str, Any], ...]) -> Callable[..., Any]:
    compiler = functools.partial(fxmlir_backend, options=dict(options))
    compiler.__fxmlir_backend__ = True  # type: ignore[attr-defined]  # FXMLIR_ROUND_TRIP keeps it
    return compiler
