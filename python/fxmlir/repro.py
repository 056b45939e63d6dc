"""Reproducing a fallback: a failed round trip's folder holds repro.py, the
graph as a script that rebuilds it and runs that round trip again with the
run's settings, in a fresh process (`python repro.py` or `fxmlir repro
FOLDER`). It raises where fxmlir failed, or says the failure did not
reproduce (one that depends on the run: a full disk, an injected fault).

The graph is rebuilt by tracing the script's module symbolically and
propagating fake tensors of the example inputs' shapes and dtypes, so calls
that take no tensor (a grad-mode switch) run while tracing rather than
staying in the graph."""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
from torch.utils import _pytree as pytree

from fxmlir.config import Options
from fxmlir.standalone import standalone_source


def repro_source(gm: fx.GraphModule, graph: str, stage: str, reason: str,
                 options: Options) -> str:
    """repro.py for graph `graph` (e.g. graph_0_0_0/forward), whose `stage`
    round trip failed for `reason` under `options`."""
    settings: dict[str, Any] = {"passes": options.passes.spelled(),
                                "eager_random": options.eager_random}
    if options.codegen is not None:
        settings["codegen"] = options.codegen
    first_line = reason.splitlines()[0].replace('"""', "'''") if reason else ""
    doc = [f"fxmlir kept it as it was: {first_line}", "",
           "`python repro.py` (or `fxmlir repro <this folder>`) rebuilds the graph and runs",
           "that round trip again with the run's settings: it raises where fxmlir failed,",
           "or says the failure did not reproduce."]
    main = ["    import sys", "", "    from fxmlir.repro import rerun", "",
            "    torch.manual_seed(0)",
            f"    sys.exit(rerun(Graph(), example_inputs(), {stage!r}, {settings!r}))"]
    return f"# {first_line}\n" + standalone_source(gm, graph, "before", doc=doc, main=main)


def rerun(module: torch.nn.Module, inputs: list[Any], stage: str,
          settings: dict[str, Any]) -> int:
    """Runs the `stage` round trip of `module`'s graph (raising as the run
    failed); if it passes, prints how far its result is from the graph's and
    returns 0."""
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    from fxmlir.roundtrip import round_trip

    gm = fx.symbolic_trace(module)
    FakeTensorProp(gm).propagate(*inputs)  # the values' types, as the graph recorded them
    exported = round_trip(gm, "repro", stage, Options.from_env().updated(settings))
    expected = pytree.tree_leaves(gm(*inputs))
    got = pytree.tree_leaves(exported(*inputs))
    diff = max((float((a.double() - b.double()).abs().max()) for a, b in zip(expected, got)
                if isinstance(a, torch.Tensor) and a.numel() and a.is_floating_point()),
               default=0.0)
    print(f"fxmlir: the {stage} round trip passed here: the failure did not reproduce "
          f"(largest difference from the graph's outputs: {diff:.3g})")
    return 0
