"""Returned logits, differentiated outside the compiled graph.

A language model returns its logits beside its loss (transformers'
`CausalLMOutput.logits`), and a training step differentiates the loss only.
AOTAutograd's backward takes a gradient for every output that requires one,
and autograd hands it zeros for an output nobody differentiated: a
[tokens, vocabulary] tensor (98 MiB for GPT-2 at 2 x 256 tokens, float32)
allocated and read every step for nothing.

Where the graph returns a linear layer's output beside a loss it computes
from it (`aten.linear`, or the logits `fxmlir.fused_linear_cross_entropy`
returns), the graph returns it detached, and the layer's input beside it;
an autograd node outside the graph (`_LogitsGrad`, on the weight and bias
the graph takes as inputs) makes it differentiable again. Autograd runs
that node only when the user's loss reaches the logits: then it takes the
two products eager's linear layer would, in the layer's dtype (autocast's).
The loss inside the graph keeps its own gradient path.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from typing import Any, Callable

import torch
import torch.fx as fx

from fxmlir.fake_values import fake_value

_FUSED_LOSS = "fxmlir::fused_linear_cross_entropy"


@dataclasses.dataclass(frozen=True)
class _Head:
    """One linear layer whose output (the logits) the graph returns, by
    position."""

    logits: tuple[int, ...]  # the graph's outputs that are the logits
    x: int  # the output added for the layer's input
    weight: int  # the graph input the layer's weight is cast from
    bias: int | None  # likewise its bias, if any


def _is_op(node: Any, name: str) -> bool:
    return (isinstance(node, fx.Node) and node.op == "call_function"
            and getattr(node.target, "name", lambda: "")() == name)


def _device(node: fx.Node) -> torch.device | None:
    value = fake_value(node)
    return value.device if isinstance(value, torch.Tensor) else None


def _is_cast(node: fx.Node) -> bool:
    """A `_to_copy` that changes the dtype alone (autocast's casts spell out
    the layout and device they keep)."""
    if not _is_op(node, "aten::_to_copy") or set(node.kwargs) - _CAST_KEYWORDS:
        return False
    device = node.kwargs.get("device")
    return node.kwargs.get("layout") in (None, torch.strided) and \
        node.kwargs.get("memory_format") in (None, torch.preserve_format) and \
        (device is None or device == _device(node.args[0]))


_CAST_KEYWORDS = {"dtype", "layout", "device", "pin_memory", "non_blocking", "memory_format"}


def _input_index(node: fx.Node, placeholders: dict[fx.Node, int]) -> int | None:
    """The graph input `node` is, through dtype casts; None otherwise."""
    while _is_cast(node):
        node = node.args[0]
    return placeholders.get(node)


def _layer(node: Any) -> tuple[fx.Node, fx.Node, fx.Node | None] | None:
    """(x, weight, bias) of the linear layer whose output `node` is, where
    the graph computes something from that output besides returning it (a
    loss); None otherwise. A layer whose output the graph only returns is
    differentiated by whatever the caller computes from it: nothing to spare."""
    if _is_op(node, "aten::linear"):
        if all(user.op == "output" for user in node.users):
            return None
        x, weight, *bias = node.args
        return x, weight, bias[0] if bias else None
    if node.target is operator.getitem and node.args[1] == 2 and \
            _is_op(node.args[0], _FUSED_LOSS) and node.args[0].args[6] is True:
        return tuple(node.args[0].args[:3])  # its loss read the logits
    return None


def _heads(gm: fx.GraphModule) -> list[tuple[fx.Node, fx.Node, _Head]]:
    """The linear layers' outputs the graph returns beside a loss of them,
    on a weight (and bias) the graph takes as inputs: each one's node, the
    layer's input and its plan (the input's output position to fill in)."""
    graph = gm.graph
    returned = list(graph.output_node().args[0])
    placeholders = {n: i for i, n in enumerate(graph.find_nodes(op="placeholder"))}
    heads = []
    for logits in dict.fromkeys(r for r in returned if isinstance(r, fx.Node)):
        layer = _layer(logits)
        if layer is None:
            continue
        x, weight, bias = layer
        weight_index = _input_index(weight, placeholders)
        bias_index = None if bias is None else _input_index(bias, placeholders)
        if weight_index is None or (bias is not None and bias_index is None):
            continue
        positions = tuple(i for i, value in enumerate(returned) if value is logits)
        heads.append((logits, x, _Head(positions, -1, weight_index, bias_index)))
    return heads


def detach(gm: fx.GraphModule) -> list[_Head]:
    """Rewrites `gm` in place: each fused loss's returned logits detached,
    the layer's input returned after the graph's outputs. What `reattached`
    needs to undo it for the caller; empty if nothing changed."""
    heads = _heads(gm)
    if not heads:
        return []
    graph = gm.graph
    output = graph.output_node()
    returned = list(output.args[0])
    plans = []
    for logits, x, head in heads:
        with graph.inserting_before(output):
            detached = graph.call_function(torch.ops.aten.detach.default, (logits,))
        if "val" in logits.meta:
            detached.meta["val"] = logits.meta["val"].detach()
        for position in head.logits:
            returned[position] = detached
        plans.append(dataclasses.replace(head, x=len(returned)))
        returned.append(x)
    output.args = (type(output.args[0])(returned),)
    gm.recompile()
    return plans


def reattached(compiled: Callable[..., Any], heads: list[_Head]) -> Callable[..., Any]:
    """`compiled` (of the graph `detach` rewrote) with its outputs as the
    original graph's: the logits differentiable again, the added inputs of
    the layers dropped."""
    first_added = min(head.x for head in heads)

    @functools.wraps(compiled)
    def run(*args: Any) -> Any:
        layers = [(args[h.weight], None if h.bias is None else args[h.bias]) for h in heads]
        outputs = compiled(*args)
        kind = type(outputs)
        outputs = list(outputs)
        for head, (weight, bias) in zip(heads, layers):
            logits = _LogitsGrad.apply([outputs[head.logits[0]]], outputs[head.x],
                                       weight, bias)
            for position in head.logits:
                outputs[position] = logits
        del outputs[first_added:]
        return kind(outputs)

    return run


class _LogitsGrad(torch.autograd.Function):
    """logits = x @ weight^T + bias, computed already in the logits' dtype
    (autocast's): the gradients of that linear layer, weight and bias cast
    to it. The logits come in a list, so that autograd takes them as this
    node's output, not a view of an input."""

    @staticmethod
    def forward(ctx: Any, logits: list[torch.Tensor], x: torch.Tensor,
                weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        ctx.dtype = logits[0].dtype
        ctx.bias_dtype = None if bias is None else bias.dtype
        return logits[0]

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        x, weight = ctx.saved_tensors
        grad = grad.to(ctx.dtype)
        grad_x = grad_weight = grad_bias = None
        if ctx.needs_input_grad[1]:
            grad_x = (grad @ weight.to(ctx.dtype)).to(x.dtype)
        rows = grad.reshape(-1, grad.shape[-1])
        if ctx.needs_input_grad[2]:
            grad_weight = (rows.t() @ x.reshape(-1, x.shape[-1]).to(ctx.dtype)).to(weight.dtype)
        if ctx.needs_input_grad[3]:
            grad_bias = rows.sum(0).to(ctx.bias_dtype)
        return None, grad_x, grad_weight, grad_bias
