"""JIT regions from Python: the text a `torch.ops.fxmlir.mlir_jit` call
carries, and `outline`, which runs a function's aten graph as JIT regions
only (for tests and benchmarks; in a round trip the exporter emits the
mlir_jit calls).

    graph = outline(lambda x: torch.tanh(x) * x, torch.randn(8, 64))
    (y,) = graph(torch.randn(32, 64))   # any batch size: dim 0 is dynamic
"""

from __future__ import annotations

import json
from typing import Any, Callable

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from fxmlir import _C, importer, region_text
import fxmlir.jit_ops  # noqa: F401  (loads torch.ops.fxmlir.mlir_jit)

__all__ = ["JitGraph", "function_text", "outline", "region_functions", "stats"]


def region_functions(module: _C.Module) -> dict[str, str]:
    """The text of every outlined region of `module`, by function name."""
    text = str(module)
    return {f["name"]: function_text(text, f["name"])
            for f in json.loads(module.to_json())["functions"]
            if f"func.func private @{f['name']}(" in text}


def function_text(module_text: str, name: str) -> str:
    """The text of `func.func private @name` in a printed module: all that an
    mlir_jit call of it needs."""
    text = region_text.function_text(module_text, name)
    if text is None:
        raise ValueError(f"the module has no function @{name}")
    return text


class JitGraph:
    """A graph whose every op is an outlined region, run by mlir_jit."""

    def __init__(self, module: _C.Module) -> None:
        text = str(module)
        graph, *functions = json.loads(module.to_json())["functions"]
        others = sorted({op["name"] for op in graph["ops"]} - {"fxmlir.mlir_jit"})
        if others:
            raise ValueError(f"ops left outside JIT regions: {', '.join(others)}")
        self._graph = graph
        self.functions = {f["name"]: function_text(text, f["name"]) for f in functions}

    @property
    def regions(self) -> list[str]:
        """The outlined functions in call order."""
        return [op["attributes"]["callee"]["symbol"] for op in self._graph["ops"]]

    def __call__(self, *args: torch.Tensor) -> list[torch.Tensor]:
        values = {arg["id"]: value for arg, value in zip(self._graph["arguments"], args)}
        for op in self._graph["ops"]:
            name = op["attributes"]["callee"]["symbol"]
            results = torch.ops.fxmlir.mlir_jit(
                self.functions[name], name, [values[i] for i in op["operands"]])
            for result, value in zip(op["results"], results):
                values[result["id"]] = value
        return [values[i] for i in self._graph["returns"]]


def outline(fn: Callable[..., Any], *example: torch.Tensor, min_ops: int = 2,
            cost_model: bool = False) -> JitGraph:
    """Traces `fn` to aten ops on `example` and outlines them; raises
    ValueError when some op cannot join a region of at least `min_ops`, or,
    with `cost_model` (as the round trip outlines), one that pays."""
    gm = make_fx(fn)(*example)
    context = _C.Context()
    imported = importer.import_graph(gm, "graph", context.is_registered_op)
    module = context.parse(imported.text)
    module.run_pipeline(f"fxmlir-outline-jit-regions{{min-ops={min_ops} "
                        f"cost-model={str(cost_model).lower()}}}")
    return JitGraph(module)


def stats() -> dict[str, Any]:
    """Counters of the process's JIT: compiles, cache hits, disk cache
    entries discarded (they did not verify, and were rebuilt), seconds
    spent."""
    return _C.jit_stats()
