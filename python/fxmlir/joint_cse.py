"""Common subexpressions of AOTAutograd's joint graph, eliminated before the
partition, without Inductor.

AOTAutograd's own CSE (torch._functorch.compile_utils.fx_graph_cse) imports
Inductor's pattern matcher, half a second of a process's first call, so
fxmlir turns it off. The partition still needs it: min-cut chooses what to
save and what to recompute on the joint graph, and duplicates there make
different choices (LLaMA-style: a dynamic-shape graph got one JIT region
more than its fixed-shape twin). This is that CSE for the graphs fxmlir
compiles, on the same rules: nothing random or allocated uninitialized,
nothing whose storage the graph returns (distinct outputs stay distinct
tensors), no unbacked symbols; and no CSE at all in a graph that writes in
place (torch tracks mutation regions for that; fxmlir does not).
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx
from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
from torch.multiprocessing.reductions import StorageWeakRef

_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _storage(node: fx.Node) -> StorageWeakRef | None:
    value = node.meta.get("val")
    if not isinstance(value, torch.Tensor):
        return None
    try:
        return StorageWeakRef(value.untyped_storage())
    except NotImplementedError:  # no storage (a sparse or nested tensor)
        return None


def _pure(node: fx.Node) -> bool:
    """Whether two calls of `node`'s op on the same arguments are one."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return True
    target = node.target
    if not isinstance(target, torch._ops.OpOverload) or target._schema.is_mutable:
        return False
    if torch.Tag.nondeterministic_seeded in target.tags or \
            target.overloadpacket is torch.ops.aten.empty:
        return False
    value = node.meta.get("val")
    return not (isinstance(value, _SYMBOLIC) and free_unbacked_symbols(value))


def _key(value: Any) -> Any:
    """A hashable form of an argument (lists as tuples)."""
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _key(v)) for k, v in value.items()))
    return value


def _writes_in_place(graph: fx.Graph) -> bool:
    return any(isinstance(n.target, torch._ops.OpOverload) and n.target._schema.is_mutable
               for n in graph.nodes if n.op == "call_function")


def eliminate_common_subexpressions(graph: fx.Graph) -> None:
    """Replaces each pure call that repeats an earlier one by it, in place."""
    if _writes_in_place(graph):
        return
    returned = {s for s in map(_storage, graph.output_node().all_input_nodes) if s is not None}
    first: dict[Any, fx.Node] = {}
    for node in list(graph.nodes):
        if not _pure(node) or _storage(node) in returned:
            continue
        try:
            key = (node.target, _key(node.args), _key(node.kwargs))
            earlier = first.setdefault(key, node)
        except TypeError:  # an argument that cannot be hashed
            continue
        if earlier is not node:
            node.replace_all_uses_with(earlier)
            graph.erase_node(node)
