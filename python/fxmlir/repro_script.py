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
    first_line = _first_line(reason)
    doc = [f"fxmlir kept it as it was: {first_line}", "",
           "`python repro.py` (or `fxmlir repro <this folder>`) rebuilds the graph and runs",
           "that round trip again with the run's settings: it raises where fxmlir failed,",
           "or says the failure did not reproduce."]
    main = ["    import sys", "", "    from fxmlir.repro import rerun", "",
            "    torch.manual_seed(0)",
            f"    sys.exit(rerun(Graph(), example_inputs(), {stage!r}, {settings!r}))"]
    return f"# {first_line}\n" + standalone_source(gm, graph, "before", doc=doc, main=main)


def run_repro_source(gm: fx.GraphModule, graph: str, reason: str, saved: bool) -> str:
    """repro.py for a round-tripped graph `gm` that raised at run time: it
    runs the graph again below autograd, as AOTAutograd does, on inputs.pt
    beside it when `saved`, else on random inputs of the recorded shapes."""
    source = "the inputs that made it fail (inputs.pt)" if saved else \
        "random inputs of the failing call's shapes (its inputs were too large to save)"
    return _reproducing(
        gm, graph, reason, [f"`python repro.py` runs it again, as the step did, on {source}:",
                            "it prints the error and exits 1 while the graph fails, 0 once "
                            "it runs."],
        ["    import pathlib", "",
         '    saved = pathlib.Path(__file__).with_name("inputs.pt")',
         "    inputs = torch.load(saved) if saved.exists() else example_inputs()"],
        ["with torch._C._AutoDispatchBelowAutograd():  # as AOTAutograd runs it",
         "    Graph()(*inputs)"],
        "the graph ran")


def trace_repro_source(gm: fx.GraphModule, graph: str, reason: str) -> str:
    """repro.py for a round-tripped graph `gm` AOTAutograd could not trace:
    it traces it again on random inputs of its shapes, requiring grad as
    the step's did."""
    grads = [bool(getattr(n.meta.get("val", n.meta.get("example_value")), "requires_grad",
                          False))
             for n in gm.graph.nodes if n.op == "placeholder"]
    return _reproducing(
        gm, graph, reason, ["`python repro.py` has AOTAutograd trace it again on random "
                            "inputs of its shapes:",
                            "it prints the error and exits 1 while the trace fails, 0 once "
                            "it succeeds."],
        ["    from torch._functorch.aot_autograd import aot_module_simplified",
         "    from torch._functorch.compilers import nop", "",
         "    inputs = example_inputs()",
         f"    for x, grad in zip(inputs, {grads!r}):",
         "        if grad:",
         "            x.requires_grad_()"],
        ["aot_module_simplified(Graph(), inputs, fw_compiler=nop)"],
        "AOTAutograd traced it")


def _reproducing(gm: fx.GraphModule, graph: str, reason: str, doc: list[str],
                 setup: list[str], call: list[str], success: str) -> str:
    """The script of `gm` whose main runs `setup`, then `call`: it prints the
    error and exits 1 while `call` raises, else says `success`."""
    first_line = _first_line(reason)
    main = ["    import sys", *setup, "    try:", *(f"        {line}" for line in call),
            "    except Exception as error:",
            '        print(f"reproduced: {type(error).__name__}: {error}")',
            "        sys.exit(1)",
            f'    print("did not reproduce: {success}")']
    return f"# {first_line}\n" + standalone_source(gm, graph, "after", doc=[first_line, "", *doc],
                                                    main=main)


def _first_line(reason: str) -> str:
    """The reason's first line, safe inside the script's docstring."""
    return reason.splitlines()[0].replace('"""', "'''") if reason else ""
