"""`fxmlir explain SCRIPT`: why candidate sites did not fuse.

Runs a script with every torch.compile routed to fxmlir. Each round trip
also runs its stage's pipeline on a copy of the imported module with the
core listening to the fusion passes (Module.explain_fusions): for every op a
fusion pattern was tried on and that no pattern rewrote, it reports the
pattern that came closest and the check that failed, in PyTorch's words
("silu's input comes from mm, not bias_add: nothing to fuse"); and, where
the stage outlines JIT regions, each op left out of them with why: a lone
op, a region the cost model refused (with its bytes), an op the JIT cannot
lower that splits a region.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import runpy
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from fxmlir import _C
    from fxmlir.passes import Selection


@dataclass(frozen=True)
class UnfusedSite:
    graph: str  # "graph_0_0_0/forward"
    node: str  # the FX node of the root op
    op: str
    pass_name: str
    pattern: str
    reason: str  # the pattern's check, as it reported it
    reason_node: str
    others: tuple[str, ...]
    why: str = ""  # the reason in PyTorch's words (in_user_words)


# The sites of the explain run in progress; None outside one.
_sites: contextvars.ContextVar[list[UnfusedSite] | None] = contextvars.ContextVar(
    "fxmlir_explain_sites", default=None)


def _readable(reason: str) -> str:
    """DRR's wording without C++ namespaces: "castedOp1 is not
    ::fxmlir::BiasAddOp type" -> "castedOp1 is not BiasAddOp type"."""
    return re.sub(r"::(?:(?:mlir|fxmlir)::)+", "", reason) or "(the pattern gave no reason)"


def torch_name(op: str) -> str:
    """An fxmlir op's name as PyTorch users know it: "fxmlir.aten.mm" ->
    "mm", "fxmlir.bias_add" -> "bias_add"."""
    return op.removeprefix("fxmlir.").removeprefix("aten.")


def _class_to_torch_name(name: str) -> str:
    """A dialect op class as a torch name: "BiasAddOp" -> "bias_add",
    "AtenMmOp" -> "mm"."""
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Op")).lower()
    return snake.removeprefix("aten_")


# What a failed constraint (its description in Constraints.td) means. DRR
# reports constraints at the root op; the values they check are the ones it
# would fuse into it, its inputs.
_CONSTRAINTS = {
    "has one use": "input is used elsewhere too: fusing would compute it twice",
}


def in_user_words(op: str, reason: str, reason_op: str) -> str:
    """Why a pattern did not fuse `op`, in PyTorch's words, from its failed
    check `reason` at `reason_op` (DRR's generated wording is about its
    matcher: "castedOp1 is not BiasAddOp type"); a check a C++ pattern
    words itself ("label smoothing is not 0") stays as it is."""
    reason = _readable(reason)
    name, at = torch_name(op), torch_name(reason_op) if reason_op else ""
    wrong_op = re.fullmatch(r"castedOp\d+ is not (\w+) type", reason)
    if wrong_op is not None:
        wanted = _class_to_torch_name(wrong_op[1])
        made_by = f"comes from {at}" if at else "comes from another op"
        return f"{name}'s input {made_by}, not {wanted}: nothing to fuse"
    no_producer = re.fullmatch(r"There's no operation that defines operand (\d+) of castedOp\d+",
                               reason)
    if no_producer is not None:
        return (f"{name}'s operand {no_producer[1]} is an input of this graph (in backward, a "
                "tensor the forward saved): no op here to fuse with")
    constraint = re.search(r"failed to satisfy constraint: '(.*)'", reason)
    if constraint is not None:
        check = constraint[1]
        if check in _CONSTRAINTS:
            return f"{name}'s {_CONSTRAINTS[check]}"
        return f"{name}: the pattern's check '{check}' fails"
    return reason


def collect(module: _C.Module, selection: Selection, region_device_types: list[str],
            stage: str, graph: str) -> None:
    """Adds the unfused sites of the module's stage pipeline when an explain
    run is in progress (the module itself is left as it is): the fusions'
    misses, and, where the stage outlines JIT regions, each op left out of
    them with why (pattern "JIT region")."""
    sites = _sites.get()
    if sites is None or not selection.for_stage(stage):
        return
    from fxmlir import cpu_products  # torch: only where explaining

    for site in module.clone().explain_stage(stage, **selection.stage_options(stage),
                                             region_device_types=region_device_types,
                                             widened_product_dtypes=cpu_products.widened_dtypes()):
        reason = _readable(site.reason)
        sites.append(UnfusedSite(graph, site.location, site.op, site.pass_name, site.pattern,
                                 reason, site.reason_location,
                                 tuple(_readable(o) for o in site.others),
                                 in_user_words(site.op, reason, site.reason_op)))


@contextlib.contextmanager
def collecting() -> Iterator[list[UnfusedSite]]:
    """Collects the unfused sites of the round trips run inside."""
    sites: list[UnfusedSite] = []
    token = _sites.set(sites)
    try:
        yield sites
    finally:
        _sites.reset(token)


def run_script(path: str, args: list[str]) -> list[UnfusedSite]:
    """Runs a script as __main__ with torch.compile routed to fxmlir, and
    returns the sites its round trips left unfused."""
    os.environ["FXMLIR_ROUND_TRIP"] = "1"
    from fxmlir import _autoload

    _autoload.install()
    argv = sys.argv
    sys.argv = [path, *args]
    try:
        with collecting() as sites:
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = argv
    return sites


def format_sites(sites: list[UnfusedSite]) -> str:
    from fxmlir.report import format_table

    if not sites:
        return "no unfused site: every op a fusion pattern was tried on fused"
    rows = [(s.graph, s.node, torch_name(s.op), s.pattern,
             s.why + (f" (at {s.reason_node})" if s.reason_node not in ("", s.node) else ""))
            for s in sites]
    table = format_table(rows, ("graph", "node", "op", "closest pattern", "why not fused"))
    others = [f"  {s.graph} {s.node}: {o}" for s in sites for o in s.others]
    return table + ("\n\nother patterns tried:\n" + "\n".join(others) if others else "")
