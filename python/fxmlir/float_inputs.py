"""Python floats Dynamo hands over as tensors, specialized, and scalar
arithmetic on constants folded.

Under `dynamic=True` Dynamo passes a model's float attributes and globals
(dropout p, LayerNorm eps, attention scaling, `math.pi` in GPT-2's GELU) as
0-d CPU tensor inputs read with `.item()`, without guarding their values: a
graph sees symbols where eager code had constants, and fusions that need a
constant (GELU's sqrt(2/pi), a dropout's p) do not match. The graph is
compiled with the values of its first call written in as constants, and
each call checks that the inputs still hold them; one that does not runs a
graph compiled without the specialization, compiled on that call.
"""

from __future__ import annotations

import copy
import logging
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
from torch.utils._pytree import tree_map

log = logging.getLogger("fxmlir")

# Scalar functions of Python numbers a graph may apply to an `.item()`:
# folded once their arguments are constants.
_SCALAR_FUNCTIONS = {
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.pow, operator.neg, operator.mod, math.sqrt, torch._sym_sqrt,
    torch.sym_float, torch.sym_max, torch.sym_min,
}


@dataclass(frozen=True)
class Specialized:
    """A graph with float inputs written in, and the values it assumes, by
    input index."""

    graph: fx.GraphModule
    values: dict[int, float]

    def holds(self, args: tuple[Any, ...] | list[Any]) -> bool:
        """Whether the float inputs of a call hold the assumed values."""
        return all(args[i].item() == value for i, value in self.values.items())


def _is_float_input(node: fx.Node, example: Any) -> bool:
    """A 0-d CPU float tensor input whose every use is `.item()`."""
    return (node.op == "placeholder" and isinstance(example, torch.Tensor)
            and example.dim() == 0 and example.device.type == "cpu"
            and example.is_floating_point() and bool(node.users)
            and all(user.op == "call_method" and user.target == "item" for user in node.users))


def _substitute(node: fx.Node, value: float) -> None:
    """Uses of `node` become the constant `value`; `node` goes."""
    for user in list(node.users):
        user.args = tree_map(lambda a: value if a is node else a, user.args)
        user.kwargs = tree_map(lambda a: value if a is node else a, user.kwargs)
    node.graph.erase_node(node)


def _fold_scalars(graph: fx.Graph) -> bool:
    """Folds scalar functions whose arguments are all constants (Dynamo
    leaves `2.0 / 3.141592653589793` as a node when it specializes a float
    it had made an input); whether it folded any."""
    folded = False
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in _SCALAR_FUNCTIONS or node.kwargs:
            continue
        if all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in node.args):
            _substitute(node, node.target(*node.args))
            folded = True
    return folded


def specialize(gm: fx.GraphModule, example_inputs: list[Any]) -> Specialized | None:
    """`gm` with its float inputs' first values written in and scalar
    arithmetic on constants folded; None when it has neither."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    chosen = [i for i, (node, example) in enumerate(zip(placeholders, example_inputs))
              if _is_float_input(node, example)]
    graph = copy.deepcopy(gm.graph)
    copies = [n for n in graph.nodes if n.op == "placeholder"]
    values = {}
    for i in chosen:
        values[i] = example_inputs[i].item()
        for item in list(copies[i].users):
            _substitute(item, values[i])
    if not _fold_scalars(graph) and not values:
        return None
    graph.lint()
    return Specialized(fx.GraphModule(gm, graph), values)


def guarded(specialized: Specialized, fast: Callable[..., Any],
            general: Callable[[], Callable[..., Any]], graph: str) -> Callable[..., Any]:
    """Calls `fast` while the float inputs hold the specialized values, else
    the graph `general()` compiles (once, on the first such call)."""
    if not specialized.values:  # constants folded only: nothing to check
        return fast
    compiled: list[Callable[..., Any]] = []

    def other() -> Callable[..., Any]:
        if not compiled:
            log.info("fxmlir: %s: a float input changed value (%s assumed): compiling the "
                     "graph without them written in", graph, specialized.values)
            compiled.append(general())
        return compiled[0]

    if getattr(fast, "_boxed_call", False):  # called with the list of inputs
        def boxed(args: list[Any]) -> Any:
            return (fast if specialized.holds(args) else other())(args)

        boxed._boxed_call = True  # type: ignore[attr-defined]
        return boxed

    def call(*args: Any) -> Any:
        return (fast if specialized.holds(args) else other())(*args)

    return call
