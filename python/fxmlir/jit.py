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

from fxmlir import _C, aten_calls, importer, schema
import fxmlir.jit_ops  # noqa: F401  (loads torch.ops.fxmlir.mlir_jit)

__all__ = ["JitGraph", "outline", "stats"]


def _view_overload(name: str) -> torch._ops.OpOverload | None:
    """The ATen op of a view a region leaves outside it (a detach, a
    reshape: its result aliases its input); None for any other op."""
    overload = schema.op_from_mlir_name(name)
    returns = overload._schema.returns if overload is not None else []
    return overload if len(returns) == 1 and returns[0].alias_info is not None else None


class JitGraph:
    """A graph whose every op is an outlined region, run by mlir_jit, or a
    view of a region's result (taken after it, as eager takes it)."""

    def __init__(self, module: _C.Module) -> None:
        graph = json.loads(module.to_json())["functions"][0]
        names = {op["name"] for op in graph["ops"]} - {"fxmlir.mlir_jit"}
        self._views = {name: _view_overload(name) for name in names}
        others = sorted(name for name, view in self._views.items() if view is None)
        if others:
            raise ValueError(f"ops left outside JIT regions: {', '.join(others)}")
        self._graph = graph
        self.functions = {region.name: region.text for region in module.jit_regions()}

    @property
    def regions(self) -> list[str]:
        """The outlined functions in call order."""
        return [op["attributes"]["callee"]["symbol"] for op in self._graph["ops"]
                if op["name"] == "fxmlir.mlir_jit"]

    def __call__(self, *args: torch.Tensor) -> list[torch.Tensor]:
        values = {arg["id"]: value for arg, value in zip(self._graph["arguments"], args)}
        for op in self._graph["ops"]:
            operands = [values[i] for i in op["operands"]]
            if op["name"] == "fxmlir.mlir_jit":
                name = op["attributes"]["callee"]["symbol"]
                results = torch.ops.fxmlir.mlir_jit(self.functions[name], name, operands)
            else:
                view = self._views[op["name"]]
                call_args, kwargs = aten_calls.unbind_arguments(view, operands,
                                                                op["attributes"])
                results = [view(*call_args, **kwargs)]
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
    module = context.import_graph(json.dumps(imported.graph))
    module.outline_jit_regions(min_ops=min_ops, cost_model=cost_model)
    return JitGraph(module)


def stats() -> dict[str, Any]:
    """Counters of the process's JIT: compiles, cache hits, disk cache
    entries discarded (they did not verify, and were rebuilt), seconds
    spent."""
    return _C.jit_stats()
