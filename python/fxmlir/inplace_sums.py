"""Sums into a dying addend: `add(a, b)` becomes `add_(a, b)` where `a` is a
buffer the graph itself allocated and the sum is its last use; and a
pointwise JIT region writes its result into such an input
(`mlir_jit_into`).

AOTAutograd sums a tensor's gradients inside the backward graph, out of
place: a tied weight's (a language model's embedding and LM head share one
[vocabulary, hidden] matrix) takes a third buffer of the weight's size
while both addends are alive, where eager's autograd adds the second
gradient into the first and Inductor writes the sum into a dying input's
buffer. So does this rewrite, for sums only: no layout, dtype or value
changes (a sum of two numbers is the same either way round), and a buffer
is reused only when nothing else can see it: an ATen or fxmlir op made it
(its schema says its result aliases no input), nothing but this sum reads
it, and it has the sum's shape, dtype and strides. A JIT region that took
such a sum in (the tied weight's, with the cast of the LM head's bf16
gradient) would take the third buffer again: a pointwise region (its core
op marked `fxmlir.pointwise`: one result, computed element by element from
inputs of its shape) writes its result into a dying input under the same
rules, through `mlir_jit_into`.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch.multiprocessing.reductions import StorageWeakRef

_ADD = torch.ops.aten.add.Tensor
_ADD_ = torch.ops.aten.add_.Tensor
_MLIR_JIT = torch.ops.fxmlir.mlir_jit.default
_MLIR_JIT_INTO = torch.ops.fxmlir.mlir_jit_into.default

# The core's mark on a pointwise JIT region (OutlineJitRegions.cpp), kept in
# its node's meta by the exporter.
POINTWISE = "fxmlir.pointwise"


def _fresh_result(node: Any) -> bool:
    """Whether `node` is an op's result that aliases none of its inputs."""
    if not isinstance(node, fx.Node) or node.op != "call_function":
        return False
    index = 0
    if node.target is operator.getitem:
        node, index = node.args
        if not isinstance(node, fx.Node) or node.op != "call_function":
            return False
    target = node.target
    if not isinstance(target, torch._ops.OpOverload) or target is torch.ops.fxmlir.mlir_jit.default:
        return False  # a JIT region may return an input as it is
    returns = target._schema.returns
    return index < len(returns) and returns[index].alias_info is None \
        and isinstance(returns[index].type, torch.TensorType)


class _Buffers:
    """Which of a graph's values may be written over: a result of an op of
    the graph that aliases none of its inputs (by its schema) and no other
    value of the graph (by the fake tensors: `_unsafe_view`'s schema says
    its result is new, yet it is a view of its input)."""

    def __init__(self, graph: fx.Graph) -> None:
        tensors: dict[StorageWeakRef, set[int]] = {}
        for node in graph.nodes:
            for value in pytree.tree_leaves(node.meta.get("val")):
                if isinstance(value, torch.Tensor):
                    key = StorageWeakRef(value.untyped_storage())
                    tensors.setdefault(key, set()).add(id(value))
        self._tensors = tensors

    def reusable(self, addend: Any, result: Any) -> bool:
        """Whether `addend`'s buffer may hold `result` (a fake tensor): no
        other value shares it, only the consumer reads it, and it has the
        result's shape, dtype, strides and device."""
        if not _fresh_result(addend) or len(addend.users) != 1:
            return False
        mine = addend.meta.get("val")
        return isinstance(mine, torch.Tensor) and isinstance(result, torch.Tensor) \
            and self._tensors.get(StorageWeakRef(mine.untyped_storage())) == {id(mine)} \
            and mine.shape == result.shape and mine.dtype == result.dtype \
            and mine.stride() == result.stride() and mine.device == result.device


def sum_in_place(graph: fx.Graph) -> None:
    """Rewrites `graph`'s sums into a dying addend where one may be, and
    gives each pointwise JIT region a dying input to write its result into
    where one may."""
    buffers = _Buffers(graph)
    for node in graph.find_nodes(op="call_function", target=_ADD):
        if node.kwargs.get("alpha", 1) != 1 or len(node.args) != 2:
            continue
        a, b = node.args
        if not buffers.reusable(a, node.meta.get("val")):
            if not buffers.reusable(b, node.meta.get("val")):
                continue
            a, b = b, a
        node.target, node.args = _ADD_, (a, b)
    for node in graph.find_nodes(op="call_function", target=_MLIR_JIT):
        if node.meta.get(POINTWISE):
            _region_in_place(node, buffers)


def _region_in_place(node: fx.Node, buffers: _Buffers) -> None:
    """`node`, a pointwise region's mlir_jit call, as mlir_jit_into a dying
    input, if one may hold its result; its result, taken out of the list
    mlir_jit returns, is then the call itself."""
    module, function, inputs = node.args
    (result,) = node.meta["val"]
    donor = next((x for x in inputs if buffers.reusable(x, result)), None)
    if donor is None or any(user.target is not operator.getitem for user in node.users):
        return
    node.target, node.args = _MLIR_JIT_INTO, (module, function, inputs, donor)
    node.meta["val"] = result
    for item in list(node.users):
        item.replace_all_uses_with(node)
        node.graph.erase_node(item)
