"""Subgraph bodies of higher-order ops round-trip too.

A checkpointed region (`tag_activation_checkpoint`), a `torch.cond` branch,
a custom `autograd.Function`'s forward and backward (`autograd_function_apply`)
are GraphModules the graph reaches by `get_attr`. The graph itself imports
them as opaque values; each body is round-tripped on its own, so fusions
happen inside checkpointed blocks as outside. The higher-order op and its
arguments (RNG-state handling included) are left as Dynamo or AOTAutograd
wrote them.
"""

from __future__ import annotations

import copy
from typing import Callable

import torch.fx as fx


def _attribute(gm: fx.GraphModule, target: str) -> object:
    value: object = gm
    for part in target.split("."):
        value = getattr(value, part, None)
    return value


def round_trip_bodies(gm: fx.GraphModule,
                      round_trip_body: Callable[[fx.GraphModule, str], fx.GraphModule],
                      ) -> fx.GraphModule:
    """`gm` with each subgraph body replaced by `round_trip_body(body, name)`;
    `gm` itself when it has none (the original is never modified)."""
    names = sorted({n.target for n in gm.graph.nodes if n.op == "get_attr"
                    and isinstance(_attribute(gm, n.target), fx.GraphModule)})
    if not names:
        return gm
    result = copy.copy(gm)  # a new module sharing the graph and attributes
    for name in names:
        owner_path, _, leaf = name.rpartition(".")
        owner = _attribute(result, owner_path) if owner_path else result
        setattr(owner, leaf, round_trip_body(_attribute(gm, name), name.replace(".", "_")))
    return result
