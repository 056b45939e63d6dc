"""A round-tripped graph's body run as C++ op calls (fxmlir._graph_program).

FX's generated Python pays a frame's work and the binding's argument
parsing on every call, which a small model's step makes hundreds of times
(docs/llama-cpu-profile.md, the per-step overhead). encode() turns a graph
after autodiff into the plain data a GraphProgram is built from: each
node's op and its arguments in schema order (constants, value slots, or
lists of both), each value's last use, and what the graph returns; the
program resolves the ops and converts the constants once.

A graph with a node the program does not run (a Python function, a
submodule, a higher-order op) keeps its generated Python: encode() raises
Unsupported, naming the node. The data pickles (the stage cache keeps it).
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import torch
import torch.fx as fx

from fxmlir.logs import log

try:
    from fxmlir._graph_program import GraphProgram
except ImportError:  # a build that has not this extension: the Python bodies
    GraphProgram = None

# The encoding GraphProgram's constructor takes, as keyword arguments.
Encoding = dict[str, Any]


# What a program takes as inputs (as their traced examples: fake tensors,
# symbolic sizes); fxmlir/_graph_program converts exactly these.
_INPUT_TYPES = (torch.Tensor, torch.SymInt, torch.SymFloat, torch.SymBool, int, float, bool)


# Arithmetic on sizes, which a dynamic shape's graph computes from its
# symbolic ones (fxmlir/symbolic_sizes.py), by the program's names for it.
_ARITHMETIC: dict[Callable[..., Any], str] = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul",
    operator.floordiv: "floordiv", operator.mod: "mod", operator.truediv: "truediv",
    operator.neg: "neg", torch.sym_max: "max", torch.sym_min: "min",
}


class Unsupported(Exception):
    """A graph the program does not run; the message names the node."""


def _attribute(gm: fx.GraphModule, target: str) -> Any:
    value: Any = gm
    for part in target.split("."):
        value = getattr(value, part)
    return value


def _holds_node(value: Any) -> bool:
    if isinstance(value, fx.Node):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_node(item) for item in value)


def encode(gm: fx.GraphModule) -> Encoding:
    """The program of `gm`'s graph; Unsupported for a node it cannot run."""
    nodes = list(gm.graph.nodes)
    position = {node: index for index, node in enumerate(nodes)}
    slots: dict[fx.Node, int] = {}
    last_use: dict[fx.Node, int] = {}
    for node in nodes:
        for used in node.all_input_nodes:
            last_use[used] = position[node]

    def value(item: Any) -> tuple[Any, ...]:
        if isinstance(item, fx.Node):
            return ("s", slots[item])
        if isinstance(item, (list, tuple)) and _holds_node(item):
            return ("l", [value(element) for element in item])
        if isinstance(item, tuple):
            return ("c", list(item))
        return ("c", item)

    def dropped_after(node: fx.Node) -> list[int]:
        """Slots whose values `node` uses last (its own, if nothing uses it)."""
        done = [slots[used] for used in node.all_input_nodes
                if last_use[used] == position[node] and used.op != "get_attr"]
        if not node.users:
            done.append(slots[node])
        return sorted(set(done))

    inputs: list[int] = []
    constants: list[tuple[int, Any]] = []
    encoded: list[tuple[Any, ...]] = []
    output: tuple[Any, ...] | None = None
    for node in nodes:
        if node.op == "output":
            (result,) = node.args
            if isinstance(result, (list, tuple)) and not any(
                    isinstance(item, (list, tuple)) for item in result):
                output = ("t" if isinstance(result, tuple) else "L",
                          [value(item) for item in result])
            elif isinstance(result, fx.Node):
                output = value(result)
            else:
                raise Unsupported(f"the graph returns {type(result).__name__}")
            continue
        slots[node] = len(slots)
        if node.op == "placeholder":
            example = node.meta.get("val")
            if example is not None and not isinstance(example, _INPUT_TYPES):
                raise Unsupported(f"input '{node.name}' is a {type(example).__name__}")
            inputs.append(slots[node] if node.users else -1)
        elif node.op == "get_attr":
            constants.append((slots[node], _attribute(gm, str(node.target))))
        elif node.op == "call_function" and node.target is operator.getitem:
            source, index = node.args
            if not isinstance(source, fx.Node) or not isinstance(index, int):
                raise Unsupported(f"node '{node.name}' takes an item of a constant")
            encoded.append(("item", node.name, slots[source], index, slots[node],
                            dropped_after(node)))
        elif node.op == "call_function" and node.target in _ARITHMETIC:
            encoded.append(("arith", node.name, _ARITHMETIC[node.target],
                            [value(item) for item in node.args], slots[node],
                            dropped_after(node)))
        elif node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            encoded.append(("op", node.name, node.target._schema.name,
                            node.target._schema.overload_name,
                            _arguments(node, value), slots[node], dropped_after(node)))
        else:
            raise Unsupported(f"node '{node.name}' calls {node.target}")
    if output is None:
        raise Unsupported("the graph returns nothing")
    return {"slots": len(slots), "inputs": inputs, "constants": constants,
            "nodes": encoded, "output": output}


def _arguments(node: fx.Node, value: Callable[[Any], tuple[Any, ...]]
               ) -> list[tuple[Any, ...]]:
    """`node`'s arguments in its op's schema order, each as `value` encodes
    it, ("d",) for a default."""
    schema = node.target._schema  # type: ignore[union-attr]
    if len(node.args) > len(schema.arguments) or any(
            name not in {argument.name for argument in schema.arguments}
            for name in node.kwargs):
        raise Unsupported(f"node '{node.name}': arguments {schema.name} does not take")
    encoded = []
    for index, argument in enumerate(schema.arguments):
        if index < len(node.args):
            item = node.args[index]
        elif argument.name in node.kwargs:
            item = node.kwargs[argument.name]
        else:
            encoded.append(("d",))
            continue
        encoded.append(value(item))
    return encoded


def build(encoding: Encoding) -> Callable[[list[Any]], Any] | None:
    """The program's run (it takes the boxed list of inputs and empties it),
    or None where the extension is missing or cannot take an argument."""
    if GraphProgram is None:
        return None
    try:
        return GraphProgram(**encoding).run
    except (TypeError, ValueError, RuntimeError) as error:
        log.debug("fxmlir: generated Python runs the graph: %s", error)
        return None


def forward(gm: fx.GraphModule, graph: str = "the graph"
            ) -> tuple[Callable[[list[Any]], Any], Encoding] | None:
    """`gm`'s body as a program (its run, and its encoding for the stage
    cache), or None: its generated Python runs it (logged, naming `graph`
    and the node)."""
    if GraphProgram is None:
        return None
    try:
        encoding = encode(gm)
    except Unsupported as reason:
        log.info("fxmlir: %s runs as generated Python, not as a graph program: %s",
                 graph, reason)
        return None
    run = build(encoding)
    return None if run is None else (run, encoding)
