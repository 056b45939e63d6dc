"""The statistics of a mixed-dtype layer norm, typed as torch's CPU kernel
makes them.

Under autocast a layer norm may take a bf16/f16 input with float32 weight
and bias (transformers' BERT head: a bf16 activation into a float32
LayerNorm). torch's CPU kernel then returns the mean and rstd in float32, the
weight's dtype, where its fake tensors (torch._refs.native_layer_norm) say
the input's. A backward that reads saved statistics was traced, and its JIT
regions compiled, for the fake dtype, and failed on the real one. Fixed in
AOTAutograd's joint graph, before the partition (fxmlir.partition): the
forward and the backward then both see float32 statistics.
"""

from __future__ import annotations

import operator

import torch
import torch.fx as fx

from fxmlir.fake_values import fake_value

_REDUCED = (torch.bfloat16, torch.float16)


def _stats_dtype(node: fx.Node) -> torch.dtype | None:
    """The dtype the CPU kernel gives this layer norm's statistics where
    the fake one says otherwise; None where the two agree."""
    x, _, weight, bias, *_ = node.args
    x = fake_value(x)
    params = [fake_value(p) for p in (weight, bias) if p is not None]
    if not isinstance(x, torch.Tensor) or x.device.type != "cpu" or x.dtype not in _REDUCED:
        return None
    mixed = [p.dtype for p in params if isinstance(p, torch.Tensor) and p.dtype != x.dtype]
    return mixed[0] if mixed else None


def fix_statistics(joint: fx.GraphModule) -> None:
    """Retypes the mean and rstd of mixed-dtype layer norms in `joint`."""
    for node in joint.graph.find_nodes(op="call_function",
                                       target=torch.ops.aten.native_layer_norm.default):
        dtype = _stats_dtype(node)
        if dtype is None:
            continue
        out, mean, rstd = node.meta["val"]
        with out.fake_mode:
            node.meta["val"] = (out, mean.to(dtype), rstd.to(dtype))
        for user in node.users:
            if user.target is operator.getitem and user.args[1] in (1, 2):
                user.meta["val"] = node.meta["val"][user.args[1]]
