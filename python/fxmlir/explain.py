"""`fxmlir explain SCRIPT`: why candidate sites did not fuse.

Runs a script with every torch.compile routed to fxmlir. Each round trip
also runs its stage's pipeline on a copy of the imported module with the
core listening to the fusion passes (Module.explain_fusions): for every op a
fusion pattern was tried on and that no pattern rewrote, it reports the
pattern that came closest and the check that failed.
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

from fxmlir.passes import OUTLINE

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
    reason: str
    reason_node: str
    others: tuple[str, ...]


# The sites of the explain run in progress; None outside one.
_sites: contextvars.ContextVar[list[UnfusedSite] | None] = contextvars.ContextVar(
    "fxmlir_explain_sites", default=None)


def _readable(reason: str) -> str:
    """DRR's wording without C++ namespaces: "castedOp1 is not
    ::fxmlir::BiasAddOp type" -> "castedOp1 is not BiasAddOp type"."""
    return re.sub(r"::(?:(?:mlir|fxmlir)::)+", "", reason) or "(the pattern gave no reason)"


def collect(module: _C.Module, selection: Selection, stage: str, graph: str) -> None:
    """Adds the unfused sites of the module's stage pipeline when an explain
    run is in progress (the module itself is left as it is)."""
    sites = _sites.get()
    selection = selection.removing(OUTLINE)  # fusions only
    if sites is None or not selection.for_stage(stage):
        return
    for site in module.clone().explain_stage(stage, **selection.stage_options(stage)):
        sites.append(UnfusedSite(graph, site.location, site.op, site.pass_name, site.pattern,
                                 _readable(site.reason), site.reason_location,
                                 tuple(_readable(o) for o in site.others)))


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
    rows = [(s.graph, s.node, s.op.removeprefix("fxmlir."), s.pattern,
             s.reason + (f" (at {s.reason_node})" if s.reason_node != s.node else ""))
            for s in sites]
    table = format_table(rows, ("graph", "node", "op", "closest pattern", "failed check"))
    others = [f"  {s.graph} {s.node}: {o}" for s in sites for o in s.others]
    return table + ("\n\nother patterns tried:\n" + "\n".join(others) if others else "")
