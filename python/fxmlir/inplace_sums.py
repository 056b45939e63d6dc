"""Sums into a dying addend: `add(a, b)` becomes `add_(a, b)` where `a` is a
buffer the graph itself allocated and the sum is its last use.

AOTAutograd sums a tensor's gradients inside the backward graph, out of
place: a tied weight's (a language model's embedding and LM head share one
[vocabulary, hidden] matrix) takes a third buffer of the weight's size
while both addends are alive, where eager's autograd adds the second
gradient into the first and Inductor writes the sum into a dying input's
buffer. So does this rewrite, for sums only: no layout, dtype or value
changes (a sum of two numbers is the same either way round), and a buffer
is reused only when nothing else can see it: an ATen or fxmlir op made it
(its schema says its result aliases no input), nothing but this sum reads
it, and it has the sum's shape, dtype and strides.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx

_ADD = torch.ops.aten.add.Tensor
_ADD_ = torch.ops.aten.add_.Tensor


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


def _reusable(addend: Any, total: fx.Node) -> bool:
    if not _fresh_result(addend) or len(addend.users) != 1:
        return False
    mine, result = addend.meta.get("val"), total.meta.get("val")
    return isinstance(mine, torch.Tensor) and isinstance(result, torch.Tensor) \
        and mine.shape == result.shape and mine.dtype == result.dtype \
        and mine.stride() == result.stride() and mine.device == result.device


def sum_in_place(graph: fx.Graph) -> None:
    """Rewrites `graph`'s sums into a dying addend where one may be."""
    for node in graph.find_nodes(op="call_function", target=_ADD):
        if node.kwargs.get("alpha", 1) != 1 or len(node.args) != 2:
            continue
        a, b = node.args
        if not _reusable(a, node):
            if not _reusable(b, node):
                continue
            a, b = b, a
        node.target, node.args = _ADD_, (a, b)
