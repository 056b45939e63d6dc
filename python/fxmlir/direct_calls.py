"""The generated code of a round-tripped graph, calling each op through its
C++ entry point.

FX's code calls `torch.ops.aten.t.default(w)`: a chain of attribute lookups
and OpOverload.__call__, a Python frame whose only work is to call the
overload's `_op`. Bound once as globals of the code instead, a view op costs
1.7 us instead of 2.75 (one AMD EPYC thread); a step of a small model makes
hundreds of such calls (benchmarks' per-step overhead section)."""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

import torch
from torch.fx.graph_module import _forward_from_src

# `torch.ops.<namespace>.<op>.<overload>(` in generated code.
_CALL = re.compile(r"\btorch\.ops\.(\w+)\.(\w+)\.(\w+)\(")


def forward(code: str, names: dict[str, Any], module: torch.nn.Module) -> Callable[..., Any]:
    """The forward of `code` (a GraphModule's generated source) in the
    globals `names`, bound to `module` (which holds the graph's constants),
    with each op overload's call made through its C++ entry point."""
    names = dict(names)

    def bind(call: re.Match[str]) -> str:
        namespace, op, overload_name = call.groups()
        overload = getattr(getattr(getattr(torch.ops, namespace), op), overload_name)
        if not isinstance(overload, torch._ops.OpOverload):
            return call.group(0)
        name = f"_op_{namespace}_{op}_{overload_name}"
        names[name] = overload._op
        return f"{name}("

    return functools.partial(_forward_from_src(_CALL.sub(bind, code), names), module)
