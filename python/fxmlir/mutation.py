"""Which FX nodes touch memory that the graph writes in place.

Dynamo graphs (before autodiff) are not functional: after `x.add_(1)`, a
second `sin(x)` reads the same FX value as the first but computes something
else. MLIR passes see values, not memory, so CSE would merge the two. Nodes
that read or produce a tensor whose storage some node of the graph writes are
therefore imported as opaque `fxmlir.call`s, which no pass merges, deletes or
moves past one another. Every other node stays typed and keeps its fusions,
so graphs without mutation (all graphs after AOTAutograd but the input
mutations it applies at the end) lose nothing.

Storages come from the nodes' fake values, which share a storage exactly
when the tensors alias (views, in-place results). Values without one fall
back on the op schema's alias annotations, and, for ops without a schema, on
the conservative assumption that a result may alias every tensor input.
"""

from __future__ import annotations

import operator
from typing import Any, Iterable

import torch
import torch.fx as fx
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils import _pytree as pytree

from fxmlir.fake_values import fake_value

# Python operators that write their first argument.
_IN_PLACE_OPERATORS = frozenset({
    operator.setitem, operator.delitem, operator.iadd, operator.isub, operator.imul,
    operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow, operator.imatmul,
    operator.iand, operator.ior, operator.ixor, operator.ilshift, operator.irshift,
})


def _tensors(value: Any) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves(value) if isinstance(t, torch.Tensor)]


def _input_nodes(node: fx.Node) -> list[fx.Node]:
    return [a for a in pytree.tree_leaves((node.args, node.kwargs)) if isinstance(a, fx.Node)]


def _name(target: Any) -> str:
    if isinstance(target, str):  # call_method
        return target
    return getattr(target, "__name__", "")


def _is_in_place_name(name: str) -> bool:
    """`add_`, `relu_`, `__iadd__`, `__setitem__`: names torch gives in-place ops."""
    if name.startswith("__") and name.endswith("__"):
        return name[2:-2] in ("setitem", "delitem") or name[2:].startswith("i")
    return name.endswith("_") and not name.startswith("_")


def written_inputs(node: fx.Node) -> list[fx.Node]:
    """The input nodes whose memory `node` writes."""
    if node.op not in ("call_function", "call_method"):
        return []
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        if not target._schema.is_mutable:  # the common case, answered at once
            return []
        args = target._schema.arguments
        bound = dict(zip((a.name for a in args), node.args)) | dict(node.kwargs)
        return [n for a in args if a.alias_info is not None and a.alias_info.is_write
                for n in pytree.tree_leaves(bound.get(a.name)) if isinstance(n, fx.Node)]
    written: list[Any] = []
    if target in _IN_PLACE_OPERATORS or _is_in_place_name(_name(target)) or \
            node.kwargs.get("inplace") is True:
        written.append(node.args[0] if node.args else None)
    written.append(node.kwargs.get("out"))
    return [n for n in pytree.tree_leaves(written) if isinstance(n, fx.Node)]


class _Storages:
    """Groups of nodes whose tensors may share memory (union-find)."""

    def __init__(self) -> None:
        self.parent: dict[Any, Any] = {}

    def find(self, key: Any) -> Any:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, keys: Iterable[Any]) -> None:
        roots = [self.find(k) for k in keys]
        for root in roots[1:]:
            self.parent[root] = roots[0]


def _aliased_inputs(node: fx.Node) -> list[fx.Node]:
    """Inputs the node's result may alias, for nodes without storage info."""
    if isinstance(node.target, torch._ops.OpOverload):
        schema = node.target._schema
        sets = {s for r in schema.returns if r.alias_info is not None
                for s in r.alias_info.before_set}
        bound = dict(zip((a.name for a in schema.arguments), node.args)) | dict(node.kwargs)
        return [n for a in schema.arguments
                if a.alias_info is not None and sets & set(a.alias_info.before_set)
                for n in pytree.tree_leaves(bound.get(a.name)) if isinstance(n, fx.Node)]
    return _input_nodes(node)


def _written_storages(graph: fx.Graph) -> tuple[_Storages, set[Any]]:
    """The graph's values grouped by the memory they share, and the groups
    some node writes in place."""
    storages = _Storages()
    for node in graph.nodes:
        keys = [("storage", StorageWeakRef(t.untyped_storage()).cdata)
                for t in _tensors(fake_value(node)) if _has_storage(t)]
        if keys:
            storages.union([("node", node), *keys])
        elif node.op in ("call_function", "call_method", "call_module"):
            storages.union([("node", node), *(("node", n) for n in _aliased_inputs(node))])
    return storages, {storages.find(("node", n)) for node in graph.nodes
                      for n in written_inputs(node)}


def mutation_touching_nodes(graph: fx.Graph) -> set[fx.Node]:
    """The call nodes that read or produce memory some node writes in place
    (the writing nodes included)."""
    if not any(written_inputs(node) for node in graph.nodes):
        return set()  # no memory to group: most graphs
    storages, mutated = _written_storages(graph)
    if not mutated:
        return set()
    return {node for node in graph.nodes
            if node.op in ("call_function", "call_method", "call_module")
            and any(storages.find(("node", n)) in mutated
                    for n in (node, *_input_nodes(node)))}


def writes_an_input(graph: fx.Graph) -> bool:
    """Whether some node writes in place the memory of one of the graph's
    inputs (a parameter, a buffer, an argument, or a view of one), not only
    memory the graph allocated itself."""
    storages, mutated = _written_storages(graph)
    return any(storages.find(("node", node)) in mutated
               for node in graph.nodes if node.op == "placeholder")


def _has_storage(tensor: torch.Tensor) -> bool:
    try:
        tensor.untyped_storage()
    except (NotImplementedError, RuntimeError):  # sparse, some subclasses
        return False
    return True
