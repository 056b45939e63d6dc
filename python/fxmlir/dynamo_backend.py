"""The `fxmlir` torch.compile backend.

Round trips the Dynamo graph before autodiff, then hands it to AOTAutograd
whose forward and backward compilers round-trip the forward and backward
graphs (OneFlow's IRRoundTripBeforeAD and IRRoundTrip).
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Mapping

import torch
import torch.fx as fx
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from fxmlir.config import Options
from fxmlir.roundtrip import round_trip_or_fallback

log = logging.getLogger("fxmlir")


def _graph_id() -> str:
    """The Dynamo compile id (frame/recompile), e.g. "graph_0_1"."""
    compile_id = torch._guards.CompileContext.current_compile_id()
    if compile_id is None:
        return "graph"
    return "graph_" + str(compile_id).replace("/", "_").replace(".", "_")


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
    log.setLevel(opts.log_level.upper())
    if mode is not None:
        log.info("fxmlir: torch.compile mode=%r has no effect on fxmlir", mode)
    _load_fused_ops()
    graph_id = _graph_id()
    graphs = None
    if opts.cudagraphs:
        from fxmlir.cudagraphs import CudaGraphs  # imports Inductor: only when asked

        graphs = CudaGraphs(graph_id, len(example_inputs))
    if "before_autodiff" in opts.stages:
        gm = round_trip_or_fallback(gm, graph_id, "before_autodiff", opts)

    def compiler(stage: str) -> Callable[[fx.GraphModule, list[Any]], Callable[..., Any]]:
        def compile_graph(graph: fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
            selected = "forward" if stage == "inference" else stage
            compiled = graph
            if selected in opts.stages:
                compiled = round_trip_or_fallback(graph, graph_id, stage, opts)
            run = make_boxed_func(compiled.forward)
            if graphs is None:
                return run
            if stage == "backward":
                return graphs.backward(graph, run, inputs)
            return graphs.forward(stage, graph, run, inputs)
        return compile_graph

    return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                        inference_compiler=compiler("inference"))(gm, example_inputs)


def backend(**options: Any) -> Callable[..., Any]:
    """A backend with options: torch.compile(m, backend=fxmlir.backend(passes="none"))."""
    Options.from_env().updated(options)  # reject bad options now, not at first call
    return functools.partial(fxmlir_backend, options=options)
