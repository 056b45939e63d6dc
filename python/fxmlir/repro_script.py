"""The repro.py a failed round trip's folder holds: the graph as a script
that rebuilds it and runs that round trip again with the run's settings
(through fxmlir.repro.rerun), in a fresh process."""

from __future__ import annotations

from typing import Any

import torch.fx as fx

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
