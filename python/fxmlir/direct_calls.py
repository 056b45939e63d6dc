"""The generated code of a round-tripped graph, calling each op through its
C++ entry point.

FX's code calls `torch.ops.aten.t.default(w)`: a chain of attribute lookups
and OpOverload.__call__, a Python frame whose only work is to call the
overload's `_op`. Bound once as globals of the code instead, a view op costs
1.7 us instead of 2.75 (one AMD EPYC thread); a step of a small model makes
hundreds of such calls (benchmarks' per-step overhead section).

The overload's `_op` still converts each argument through the op's schema
(boxed), which costs more than the call itself for small tensors: where
torch's own Python binding of the op reaches the same overload with the
same arguments (BINDINGS), the code calls that instead: a cast 3.2 us
instead of 7.3 to 8.9, `t` 1.4 instead of 3.2 (one AMD EPYC thread)."""

from __future__ import annotations

import functools
import re
from typing import Any, Callable

import torch
from torch.fx.graph_module import _forward_from_src

_aten = torch.ops.aten
_tensor_to = torch.Tensor.to
_strided = torch.strided


def _to_copy(x: torch.Tensor, dtype: Any = None, layout: Any = None, device: Any = None,
             pin_memory: Any = None, non_blocking: bool = False,
             memory_format: Any = None) -> torch.Tensor:
    """aten._to_copy as FX calls it: `to(..., copy=True)`, which is
    _to_copy itself for the arguments `to` takes: the input's layout (the
    exported graphs name it, strided) and no pinning. A cast of a small
    weight costs 2.1 us so, 5.7 through the overload (one AMD EPYC thread)."""
    if (layout is None or (layout is _strided and x.layout is _strided)) and not pin_memory:
        return _tensor_to(x, device, dtype, non_blocking, True, memory_format=memory_format)
    return _aten._to_copy.default._op(x, dtype=dtype, layout=layout, device=device,
                                      pin_memory=pin_memory, non_blocking=non_blocking,
                                      memory_format=memory_format)


# Op overloads whose Python binding dispatches that very overload when
# called as FX's generated code calls the overload (its positional and
# keyword arguments): tests/python/test_direct_calls.py checks each. The
# ops round-tripped graphs call most: views and casts around each product.
BINDINGS: dict[torch._ops.OpOverload, Callable[..., Any]] = {
    _aten._to_copy.default: _to_copy,
    _aten.view.default: torch.Tensor.view,
    _aten.t.default: torch.t,
    _aten.transpose.int: torch.transpose,
    _aten.permute.default: torch.permute,
    _aten.expand.default: torch.Tensor.expand,
    _aten.unsqueeze.default: torch.unsqueeze,
    _aten.detach.default: torch.detach,
    _aten.clone.default: torch.clone,
    _aten.mm.default: torch.mm,
    _aten.bmm.default: torch.bmm,
    _aten.addmm.default: torch.addmm,
    _aten.add.Tensor: torch.add,
    _aten.add_.Tensor: torch.Tensor.add_,
    _aten.mul.Tensor: torch.mul,
    _aten.cat.default: torch.cat,
    _aten.sum.dim_IntList: torch.sum,
    _aten.embedding.default: torch.embedding,
    _aten.native_layer_norm.default: torch.native_layer_norm,
}
# Not here: `_unsafe_view` has no binding, and `view` in its place would
# return a view the autograd engine tracks (an output's base), which it is
# not; `mul.Scalar` and the like, whose bindings reach the Tensor overload.

# `torch.ops.<namespace>.<op>.<overload>(` in generated code.
_CALL = re.compile(r"\btorch\.ops\.(\w+)\.(\w+)\.(\w+)\(")


def forward(code: str, names: dict[str, Any], module: torch.nn.Module) -> Callable[..., Any]:
    """The forward of `code` (a GraphModule's generated source) in the
    globals `names`, bound to `module` (which holds the graph's constants),
    with each op overload's call made through its Python binding or its
    C++ entry point."""
    names = dict(names)

    def bind(call: re.Match[str]) -> str:
        namespace, op, overload_name = call.groups()
        overload = getattr(getattr(getattr(torch.ops, namespace), op), overload_name)
        if not isinstance(overload, torch._ops.OpOverload):
            return call.group(0)
        name = f"_op_{namespace}_{op}_{overload_name}"
        names[name] = BINDINGS.get(overload, overload._op)
        return f"{name}("

    return functools.partial(_forward_from_src(_CALL.sub(bind, code), names), module)
