"""The folder a fallback leaves: the failed graph's repro.py and the module
as the failing step left it, where dumps go (or a temporary folder)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx

from fxmlir import _C
from fxmlir.compile_ahead import NO_REGIONS
from fxmlir.config import STAGES, Options
from fxmlir.dump import Dumper
from fxmlir.repro_script import repro_source, run_repro_source, trace_repro_source


def _root(options: Options) -> Path:
    """Where failure folders go: the dump directory, else a temporary one."""
    return options.dump_dir or Path(tempfile.gettempdir()) / "fxmlir-failures"


def _stages_without(options: Options, stage: str) -> str:
    """The FXMLIR_STAGES setting that leaves `stage` out of the round trips."""
    others = ",".join(s for s in STAGES if s in options.stages and s != stage)
    return f"FXMLIR_STAGES={others or 'none'}"


def dump_failure(options: Options, graph_id: str, label: str, stage: str, reason: str,
                  gm: fx.GraphModule, latest: list[str | _C.Module]) -> str:
    """Writes the failed graph's repro.py and the module; says where, or why
    it could not: the fallback itself must never fail."""
    root = _root(options)
    dumper = Dumper(root, graph_id, label, stage)

    def repro() -> str:
        try:
            return repro_source(gm, f"{graph_id}/{label}", stage, reason, options)
        except Exception as e:  # noqa: BLE001 - the graph's code is still worth having
            return f"# {reason}\n# no runnable repro: {type(e).__name__}: {e}\n{gm.code}"

    # The module as the failing step left it; the graph's JSON when the core
    # could not build it.
    last = latest[-1] if latest else None
    dumper.failed(reason, repro, (lambda: str(last)) if isinstance(last, _C.Module) else None)
    if isinstance(last, str):
        dumper.write("failed-graph.json", last)
    if dumper.error is not None:  # e.g. a folder is a file, or the disk full
        return f"no dump written to {root}: {dumper.error}"
    return f"dumped to {dumper.folder}"


# A region's repro: its text parsed and compiled as the round trip did.
_REGION_REPRO = '''"""fxmlir: {graph}: JIT region @{name} did not compile.

`python {name}-repro.py` compiles it again as the round trip did (its text
is {name}.mlir beside this file) and prints why it fails; exit status 1
while it does. {no_regions} turns JIT regions off."""

import sys
from pathlib import Path

from fxmlir import _C
from fxmlir.compile_ahead import compile_region

text = (Path(__file__).parent / "{name}.mlir").read_text()
(region,) = [r for r in _C.Context().parse(text).jit_regions() if r.name == "{name}"]
reason = compile_region(region)
print(reason or "compiled")
sys.exit(1 if reason else 0)
'''


def dump_region_failure(options: Options, graph_id: str, label: str, stage: str,
                        region: _C.JitRegion, reason: str) -> str:
    """Writes the JIT region that did not compile (<name>.mlir) and
    <name>-repro.py, which compiles it again; says where, or why it could
    not."""
    root = _root(options)
    dumper = Dumper(root, graph_id, label, stage)
    dumper.write(f"{region.name}.mlir", region.text)
    dumper.write(f"{region.name}-repro.py", _REGION_REPRO.format(
        graph=f"{graph_id}/{label}", name=region.name, no_regions=NO_REGIONS))
    if dumper.error is not None:
        return f"no dump written to {root}: {dumper.error}"
    return f"its text and {region.name}-repro.py in {dumper.folder}"


# The inputs of a graph that failed at run time are saved beside its repro
# up to this size; larger, the repro draws random ones of their shapes.
SAVED_INPUTS_MAX_BYTES = 64 * 2**20


def dump_run_failure(options: Options, graph_id: str, stage: str, reason: str,
                     gm: fx.GraphModule, inputs: list[Any]) -> str:
    """A round-tripped graph that raised at run time: repro.py runs it again
    on the inputs that made it fail (inputs.pt, up to
    SAVED_INPUTS_MAX_BYTES; else random ones of their shapes) and exits 1
    while it fails. Says where, and the setting that leaves the stage out
    of the round trips; never raises (the fallback must go on)."""
    root = _root(options)
    avoid = f"{_stages_without(options, stage)} leaves the {stage} graph as AOTAutograd made it"
    try:
        dumper = Dumper(root, graph_id, stage, stage)
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        saved = dumper.folder is not None and \
            sum(t.numel() * t.element_size() for t in tensors) <= SAVED_INPUTS_MAX_BYTES
        if saved:
            torch.save([x.detach() if isinstance(x, torch.Tensor) else x for x in inputs],
                       dumper.folder / "inputs.pt")
        dumper.failed(reason, lambda: run_repro_source(gm, f"{graph_id}/{stage}", reason, saved),
                      None)
    except Exception as error:  # noqa: BLE001 - e.g. an input torch.save cannot take
        return f"no dump written to {root}: {type(error).__name__}: {error}; {avoid}"
    if dumper.error is not None:
        return f"no dump written to {root}: {dumper.error}; {avoid}"
    files = "repro.py and inputs.pt" if saved else "repro.py"
    return f"{files} in {dumper.folder}; {avoid}"


def dump_trace_failure(options: Options, graph_id: str, reason: str,
                       gm: fx.GraphModule) -> str:
    """A round-tripped graph AOTAutograd could not trace: repro.py traces it
    again (random inputs of its shapes, requiring grad as the step's did)
    and exits 1 while that fails. Says where, and the setting that leaves
    the graph out of the round trips; never raises."""
    root = _root(options)
    avoid = f"{_stages_without(options, 'before_autodiff')} leaves Dynamo's graph as it is"
    dumper = Dumper(root, graph_id, "before_autodiff", "before_autodiff")
    dumper.failed(reason,
                  lambda: trace_repro_source(gm, f"{graph_id}/before_autodiff", reason), None)
    if dumper.error is not None:
        return f"no dump written to {root}: {dumper.error}; {avoid}"
    return f"repro.py in {dumper.folder}; {avoid}"

